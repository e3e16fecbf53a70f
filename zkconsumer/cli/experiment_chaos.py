"""``experiment chaos``: the chaos soak from the command line.

    zkconsumer experiment chaos --duration 120 --members 6 --partitions 24 [--seed S] --json FILE
    zkconsumer experiment chaos --members 6 --original-members 3 --broker kafka:DIR ...

Starts its own 3-server ZooKeeper ensemble and broker (leader kills need an ensemble it owns),
prints the figures, writes them as JSON, and exits 1 when anything was lost, the verify tool
failed on the settled group, or znodes were left behind. ``--original-members K`` makes K of
the members original 0.10.2 members (JVMs from the ``--broker kafka:DIR`` build's member driver).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from zkconsumer.cli import run_meta
from zkconsumer.config import SESSION_LOST_POLICIES
from zkconsumer.errors import ServerError
from zkconsumer.lab.broker_option import add_broker_option
from zkconsumer.lab.chaos import ChaosSpec, run_chaos

SUMMARY_KEYS = ("produced", "consumed_unique", "lost", "duplicates", "rebalances",
                "failed_rebalances", "verify_ok", "stray_znodes", "settled", "drained")


def register(verbs: Any) -> None:
    chaos = verbs.add_parser(
        "chaos", help="random joins, leaves, kills, session expiries, pauses and ZooKeeper "
                      "leader kills; then count what was lost",
        description="Run a seeded chaos schedule against one group of member processes on a "
                    "3-server ZooKeeper ensemble while a producer writes numbered records; "
                    "let the group settle, drain, stop every member, and report lost and "
                    "duplicated records, rebalances, the verify tool's verdict and stray "
                    "znodes.")
    chaos.add_argument("--duration", type=float, default=120.0, help="seconds of chaos")
    chaos.add_argument("--members", type=int, default=6, help="initial group size")
    chaos.add_argument("--original-members", type=int, default=0, metavar="K",
                       help="of the members (initial and joining alike), K in every --members "
                            "are original 0.10.2 members; needs --broker kafka:DIR with the "
                            "0.10.2 build's member driver")
    chaos.add_argument("--partitions", type=int, default=24, help="partitions of the topic")
    chaos.add_argument("--seed", type=int, default=1, help="the schedule is a function of it")
    chaos.add_argument("--session-timeout-ms", type=int, default=4000,
                       help="zookeeper.session.timeout.ms of every member")
    chaos.add_argument("--rate", type=float, default=50.0, help="records per second")
    chaos.add_argument("--session-lost-policy", choices=SESSION_LOST_POLICIES, default="legacy",
                       help="zkconsumer.session.lost.policy of every member")
    chaos.add_argument("--out", type=Path, default=None,
                       help="keep the members' files and logs here (default: a temp dir)")
    chaos.add_argument("--json", type=Path, default=None, help="write the report here")
    chaos.add_argument("--schedule", action="store_true",
                       help="print the schedule the seed gives and exit")
    add_broker_option(chaos)
    chaos.set_defaults(func=run_chaos_verb)
    causes = verbs.add_parser(
        "chaos-causes", help="tie every duplicate of a chaos run to the fault behind it",
        description="Read a chaos run's member files (the run's --out) and its report, rebuild "
                    "the schedule from the report's seed, and write the compact report, the "
                    "duplicates by cause and one row per duplicate episode to --out.")
    causes.add_argument("--run", required=True, type=Path,
                        help="the chaos run's --out folder (holding members/)")
    causes.add_argument("--report", required=True, type=Path, help="the run's --json report")
    causes.add_argument("--out", required=True, type=Path, help="where the compact files go")
    causes.add_argument("--command", default=None,
                        help="the command that produced the run (for meta.json; default: "
                             "rebuilt from the report)")
    causes.add_argument("--revision", default=None,
                        help="the revision the run ran from (for meta.json; default: this "
                             "checkout's)")
    causes.add_argument("--date", default=None,
                        help="when the run started (for meta.json; default: now)")
    causes.set_defaults(func=run_causes_verb)


def reproduce_command(args: argparse.Namespace) -> str:
    parts = ["zkconsumer", "experiment", "chaos", "--duration", f"{args.duration:g}",
             "--members", str(args.members), "--partitions", str(args.partitions),
             "--seed", str(args.seed), "--session-timeout-ms", str(args.session_timeout_ms),
             "--rate", f"{args.rate:g}", "--session-lost-policy", args.session_lost_policy]
    if args.original_members:
        parts += ["--original-members", str(args.original_members)]
    if args.broker:
        parts += ["--broker", args.broker]
    if args.json:
        parts += ["--json", str(args.json)]
    if args.out:
        parts += ["--out", str(args.out)]
    return " ".join(shlex.quote(p) for p in parts)


def chaos_kafka_home(broker: str | None, original_members: int) -> str | None:
    """The Kafka directory ``--broker`` names for a chaos run (None: the embedded Tansu).

    Original members need the 0.10.2 build's member driver; a KRaft directory (Apache Kafka 4)
    has no ZooKeeper registration of its own, which the chaos needs. Raises ValueError naming
    the value otherwise.
    """
    from zkconsumer.testing.kraft import is_kraft_home
    from zkconsumer.testing.original import DRIVER
    from zkconsumer.testing.servers import TANSU, kafka_home_from_env

    if broker in (None, TANSU):
        if original_members:
            raise ValueError(f"--original-members {original_members} needs --broker kafka:DIR "
                             f"naming the Kafka 0.10.2 build (got --broker "
                             f"{broker or TANSU!r})")
        return None
    assert broker is not None
    home = kafka_home_from_env(broker[len("kafka:"):] if broker.startswith("kafka:") else None)
    if is_kraft_home(home):
        raise ValueError(f"--broker {broker!r}: a KRaft broker; the chaos runs on a ZooKeeper "
                         "broker (tansu or a Kafka 0.10.2 or 2.4.1 directory)")
    if original_members and not (home / DRIVER).is_file():
        raise ValueError(f"--broker {broker!r}: {home.name} has no {DRIVER}; original members "
                         "need the Kafka 0.10.2 build's member driver")
    return str(home)


def run_chaos_verb(args: argparse.Namespace) -> int:
    try:
        kafka_home = chaos_kafka_home(args.broker, args.original_members)
        spec = ChaosSpec(duration_s=args.duration, members=args.members,
                         partitions=args.partitions, seed=args.seed,
                         session_timeout_ms=args.session_timeout_ms, rate=args.rate,
                         session_lost_policy=args.session_lost_policy,
                         out_dir=str(args.out) if args.out else None,
                         original_members=args.original_members, kafka_home=kafka_home)
        spec.validate()
    except (ValueError, ServerError) as exc:
        print(f"zkconsumer: error: {exc}", file=sys.stderr)
        return 2
    if args.schedule:
        for action in spec.schedule():
            kind = (f" ({spec.kind_of(action.target)})"
                    if spec.original_members and action.target != "leader" else "")
            print(f"{action.at:8.3f}  {action.kind.value:<15} {action.target}{kind}"
                  + (f"  hold {action.hold_s:.1f} s" if action.hold_s else ""))
        return 0
    prov = run_meta.start(reproduce_command(args), args)
    report = run_chaos(spec, progress=lambda msg: print(f"chaos: {msg}", file=sys.stderr),
                       actions_bar=True)
    data = report.as_dict()
    for key in SUMMARY_KEYS:
        print(f"{key:<18} {data[key]}")
    print(f"{'actions':<18} " + ", ".join(f"{k} {v}" for k, v in report.actions_executed.items()))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=2) + "\n")
        print(f"wrote {args.json}")
    if args.out is not None:
        for path in analyse(args.out, data, args.out):
            print(f"wrote {path}")
    meta_dir = args.out or (args.json.parent if args.json else None)
    if meta_dir is not None:
        print(f"wrote {run_meta.finish(meta_dir, prov)}")
    return 0 if report.ok else 1


def analyse(run_dir: Path, report: dict[str, Any], out_dir: Path) -> list[Path]:
    """Duplicates by cause (``lab/chaos/causes.py``) and the compact report, into ``out_dir``."""
    from zkconsumer.lab.chaos.causes import (
        duplicate_causes,
        per_kind,
        read_timelines,
        write_cause_outputs,
    )

    spec = ChaosSpec(duration_s=float(report["duration_s"]), members=int(report["members"]),
                     partitions=int(report["partitions"]), seed=int(report["seed"]),
                     session_timeout_ms=int(report["session_timeout_ms"]))
    timelines = read_timelines(run_dir / "members")
    causes = duplicate_causes(timelines, spec.schedule())
    if report.get("member_kinds"):
        causes.by_kind = per_kind(timelines, causes, dict(report["member_kinds"]))
    written = []
    if (run_dir / "settles.jsonl").is_file():
        from zkconsumer.lab.chaos.settle_check import check_run

        out_dir.mkdir(parents=True, exist_ok=True)
        settles = out_dir / "settles.json"
        settles.write_text(json.dumps(check_run(run_dir), indent=1, sort_keys=True) + "\n")
        written.append(settles)
    if causes.duplicates != report.get("duplicates"):
        print(f"zkconsumer: warning: {causes.duplicates} duplicates attributed, the report "
              f"counts {report.get('duplicates')}", file=sys.stderr)
    return write_cause_outputs(causes, report, out_dir) + written


def run_causes_verb(args: argparse.Namespace) -> int:
    from zkconsumer.results import Provenance, write_provenance
    from zkconsumer.results.provenance import machine_facts

    try:
        report = json.loads(args.report.read_text())
    except (OSError, ValueError) as exc:
        print(f"zkconsumer: error: cannot read the report {args.report}: {exc}", file=sys.stderr)
        return 2
    if not (args.run / "members").is_dir():
        print(f"zkconsumer: error: {args.run} has no members/ folder of a chaos run",
              file=sys.stderr)
        return 2
    for path in analyse(args.run, report, args.out):
        print(f"wrote {path}")
    prov = run_meta.start(args.command or "", args)
    command = args.command or (
        f"zkconsumer experiment chaos --duration {report['duration_s']:g} --members "
        f"{report['members']} --partitions {report['partitions']} --seed {report['seed']} "
        f"--session-timeout-ms {report['session_timeout_ms']}"
        + (f" --original-members {report['original_members']} --broker kafka:DIR"
           if report.get("original_members") else ""))
    prov = Provenance(command=command, revision=args.revision or prov.revision,
                      date=args.date or prov.date, machine=machine_facts(),
                      broker=str(report.get("broker") or run_meta.EMBEDDED_BROKER),
                      extra={"analysed_by": "zkconsumer experiment chaos-causes"})
    print(f"wrote {write_provenance(args.out, prov)}")
    return 0
