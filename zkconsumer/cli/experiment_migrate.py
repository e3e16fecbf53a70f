"""``experiment migrate``: the move of a running legacy group to broker coordination.

    zkconsumer experiment migrate --plans documented,naive --repeat 3 [--broker kafka:DIR] \\
        --out results/migration/apache-kafka-2.4.1

Starts its own ZooKeeper and broker (``--broker``: ``tansu``, ``kafka`` or ``kafka:DIR``; an
Apache Kafka broker for results, since Tansu neither fences nor keeps offsets), runs each plan
``--repeat`` times on a fresh topic and group, and writes ``runs.json`` (one entry per run) and
``meta.json`` into ``--out``. Exits 1 if any run lost a message or could not be measured.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

from zkconsumer.cli.experiment_args import csv_choice
from zkconsumer.lab.migration.run import PLANS, MigrationError, MigrationSpec, run_migration
from zkconsumer.scenarios.timing import Timing

RUNS_FILE = "runs.json"


def register(verbs: Any) -> None:
    mig = verbs.add_parser(
        "migrate", help="move a running legacy group to broker coordination and measure it",
        description="Under steady production, move a ZooKeeper-coordinated group to a "
                    "broker-side group by the documented procedure (kafka storage with dual "
                    "commit, then without, then broker members) or the naive switch, and "
                    "measure lost and duplicated messages, unfetched partition-seconds and "
                    "the time of each phase.")
    mig.add_argument("--plans", type=csv_choice(tuple(PLANS)), default=tuple(PLANS),
                     help=f"comma-separated: {','.join(PLANS)}")
    mig.add_argument("--repeat", type=int, default=1, help="runs of each plan")
    mig.add_argument("--members", type=int, default=3, help="the group's size")
    mig.add_argument("--partitions", type=int, default=6, help="partitions of the topic")
    mig.add_argument("--rate", type=float, default=30.0, help="records per second")
    mig.add_argument("--dwell", type=float, default=MigrationSpec.dwell_s,
                     help="seconds the group runs after each step settled")
    mig.add_argument("--broker", default="tansu",
                     help="tansu | kafka | kafka:DIR | kafka:VERSION (../shared/kafka-VERSION)")
    mig.add_argument("--out", required=True, type=Path, help="results folder")
    mig.set_defaults(func=run_migrate_verb)


def reproduce_command(args: argparse.Namespace) -> str:
    parts = ["zkconsumer", "experiment", "migrate", "--plans", ",".join(args.plans),
             "--repeat", str(args.repeat), "--members", str(args.members),
             "--partitions", str(args.partitions), "--rate", f"{args.rate:g}",
             "--dwell", f"{args.dwell:g}",
             "--broker", args.broker, "--out", str(args.out)]
    return " ".join(shlex.quote(p) for p in parts)


def run_migrate_verb(args: argparse.Namespace) -> int:
    from zkconsumer.results import capture, write_provenance
    from zkconsumer.testing.servers import broker_from_env, zookeeper_from_env

    if args.repeat < 1:
        print(f"zkconsumer: error: --repeat must be >= 1, got {args.repeat}", file=sys.stderr)
        return 2
    base = MigrationSpec()
    specs = [MigrationSpec(plan=p, members=args.members, partitions=args.partitions,
                           dwell_s=args.dwell,
                           timing=Timing(**{**base.timing.__dict__, "produce_rate": args.rate}))
             for p in args.plans]
    try:
        for spec in specs:
            spec.validate()
    except ValueError as exc:
        print(f"zkconsumer: error: {exc}", file=sys.stderr)
        return 2
    broker_spec = _broker_spec(args.broker)
    runs: list[dict[str, Any]] = []
    ok = True
    work = Path(tempfile.mkdtemp(prefix="zkc-migrate-"))
    with zookeeper_from_env("") as zk, broker_from_env(zk.connect_string, broker_spec) as broker:
        prov = capture(reproduce_command(args), broker=getattr(broker, "name", ""))
        for i in range(args.repeat):
            for spec in specs:
                print(f"migrate: {spec.plan} run {i + 1}/{args.repeat}", file=sys.stderr)
                try:
                    result = run_migration(spec, zk.connect_string, broker.bootstrap,
                                           work).to_json()
                except MigrationError as exc:
                    result = {"plan": spec.plan, "error": str(exc)}
                result["repeat"] = i
                runs.append(result)
                ok = ok and not result.get("error") and result.get("lost") == 0
                _print(result)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / RUNS_FILE).write_text(json.dumps(runs, indent=1, sort_keys=True) + "\n")
    write_provenance(args.out, prov)
    print(f"wrote {args.out / RUNS_FILE}")
    return 0 if ok else 1


def _broker_spec(spec: str) -> str:
    """``kafka:2.4.1`` names the shared build of that version, so commands stay portable."""
    from zkconsumer.testing import shared_kafka_home

    if spec.startswith("kafka:") and "/" not in spec:
        home = shared_kafka_home(spec.split(":", 1)[1])
        if home is not None:
            return f"kafka:{home}"
    return spec


def _print(result: dict[str, Any]) -> None:
    if result.get("error"):
        print(f"{result['plan']}: not measured: {result['error']}")
        return
    print(f"{result['plan']}: produced {result['produced']}, lost {result['lost']}, "
          f"duplicates {result['duplicates']} (rewind {result['rewind']})")
    for ph in result["phases"]:
        print(f"  {ph['phase']:<13} {ph['how']:<7} settled {ph['seconds']:5.1f} s  "
              f"dups {ph['duplicates']:5d}  unfetched {ph['partition_seconds_unfetched']:7.1f} "
              "partition-s")
