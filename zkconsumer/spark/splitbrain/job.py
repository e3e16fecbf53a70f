"""The split-brain sweep as a Spark application: ``--mode real`` or ``--mode sim``.

    spark-submit zkconsumer/spark/splitbrain/job.py --mode sim --members 4,100,1000,10000 \\
        --partitions 64 --protocols zk-range,zk-leader-range,eager-range,cooperative-sticky \\
        --scenarios zombie,stale-view,storm --seeds 20 --out DIR
    zkconsumer spark split-brain --mode real --members 50,100 --partitions 64 \\
        --scenarios zombie --tasks 2 --out DIR

Both modes write ``DIR/sweep.parquet``, ``DIR/sweep.csv`` (one row per mode, protocol, scenario,
N, P, seed), ``DIR/summary.md``, the plots and ``DIR/meta.json``. Real mode hosts real members
in Spark tasks, faults through per-member fault proxies (:mod:`.task`); sim mode runs
:mod:`zkconsumer.sim.splitbrain` over the grid on the executors. The job fails (exit 1) if any
run lost an acknowledged record or failed (a harness error); a group that did not form under
its retry budget is an outcome, a row of the summary (:mod:`.outcome`). Without
``--master`` it runs on ``local[*]`` (under spark-submit, on the master spark-submit was given).
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import os
import shlex
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zkconsumer.admin.options import add_bootstrap_option, add_zk_option
from zkconsumer.lab.progress import Progress
from zkconsumer.scenarios.splitbrain import (
    PROTOCOLS,
    REAL_PROTOCOLS,
    SCENARIOS,
    Formation,
    ScenarioParams,
    parse_list,
)
from zkconsumer.scenarios.timing import Timing
from zkconsumer.spark.brokers import add_broker_arguments, broker_meta, kraft_props
from zkconsumer.spark.originals import original_home_for
from zkconsumer.spark.progress import executor_cells
from zkconsumer.spark.script import parse_ints, recorded_common_options, script_main
from zkconsumer.spark.splitbrain.outcome import FAILED, exit_status, not_formed_text, tally

log = logging.getLogger(__name__)

ROWS_FILE = "rows.jsonl"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mode", choices=("real", "sim"), required=True,
                   help="real: members hosted by Spark tasks; sim: the simulator")
    p.add_argument("--members", default="4,16", help="comma-separated group sizes N")
    p.add_argument("--partitions", default="16", help="comma-separated partition counts")
    p.add_argument("--protocols", default=",".join(PROTOCOLS),
                   help="comma-separated protocols (real mode also: "
                        f"{','.join(p for p in REAL_PROTOCOLS if p not in PROTOCOLS)}: the KIP-848 "
                        "groups, on an Apache Kafka 4 broker, and the original 0.10.2 "
                        "connector's JVM members, on its 0.10.2 build)")
    p.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated scenarios")
    p.add_argument("--seeds", type=int, default=1, help="seeds (repeats) per cell")
    p.add_argument("--first-seed", type=int, default=0,
                   help="seeds are first-seed .. first-seed + seeds - 1")
    p.add_argument("--out", required=True, type=Path, help="output directory")
    p.add_argument("--master", default=None, help="Spark master URL (default: local[*])")
    p.add_argument("--tasks", type=int, default=2,
                   help="real: Spark tasks hosting the members; sim: client processes the "
                        "members share (0: every member on a host of its own)")
    p.add_argument("--session-timeout-ms", type=int, default=6000,
                   help="ZooKeeper session and broker group session timeout alike")
    p.add_argument("--rebalance-backoff-ms", type=int, default=1000,
                   help="rebalance.backoff.ms")
    p.add_argument("--rebalance-max-retries", type=int, default=10,
                   help="zombie and stale-view runs (the storm has --max-retries)")
    p.add_argument("--zombie-fraction", type=float, default=ScenarioParams.zombie_fraction,
                   help="zombie: share of the members that lose ZooKeeper (at most 0.5)")
    p.add_argument("--cut-factor", type=float, default=ScenarioParams.cut_factor,
                   help="zombie cut length in session timeouts (> 1)")
    p.add_argument("--delay-ms-max", type=float, default=ScenarioParams.delay_ms_max,
                   help="stale-view: per-member delay drawn uniform in [0, this]")
    p.add_argument("--burst-joins", type=int, default=ScenarioParams.burst_joins,
                   help="stale-view: members joining once the delays are on")
    p.add_argument("--burst-gap-s", type=float, default=ScenarioParams.burst_gap_s,
                   help="stale-view: seconds between those joins")
    p.add_argument("--storm-joins", type=int, default=ScenarioParams.storm_joins,
                   help="storm: members joining within the window")
    p.add_argument("--storm-leaves", type=int, default=ScenarioParams.storm_leaves,
                   help="storm: members leaving within the window")
    p.add_argument("--storm-window-s", type=float, default=ScenarioParams.storm_window_s,
                   help="storm: seconds the joins and leaves fall in, at random")
    p.add_argument("--max-retries", type=int, default=ScenarioParams.max_retries,
                   help="storm: rebalance.max.retries")
    p.add_argument("--storm-owner-delay-ms", type=float,
                   default=ScenarioParams.storm_owner_delay_ms,
                   help="storm: the initial members see ZooKeeper this many ms late "
                        "(server->client) from before the storm (default 0: no delay)")
    p.add_argument("--formation", choices=[f.value for f in Formation],
                   default=Formation.AUTO.value,
                   help="real: how the initial ZooKeeper members start (auto: leader-mode "
                        "members one at a time under a retry budget of 2 or less, everybody "
                        "else together; broker groups always together)")
    p.add_argument("--rate", type=float, default=40.0, help="real: messages per second")
    p.add_argument("--quiet-s", type=float, default=2.5,
                   help="real: stable this long without change = settled")
    p.add_argument("--idle-s", type=float, default=None,
                   help="real: nothing changed anywhere this long = the observation ends "
                        "(default: 2 backoffs + quiet)")
    p.add_argument("--calibration", type=Path, default=None,
                   help="sim: calibration file (default: built in)")
    p.add_argument("--placement", default=None, metavar="SPEC",
                   help="sim: where the members' client CPU runs (zkconsumer.sim.placement): "
                        "'here' (the real runs: the members over --tasks processes on 2 "
                        "cores, the servers on them too), 'per-member' or PROCESSESxCORES; "
                        "default: --tasks processes with a core each; recorded in meta.json")
    add_zk_option(p, dest="zookeeper", required=False, default=os.environ.get("ZKCONSUMER_ZK"),
                  note="real: an existing ZooKeeper (default: ZKCONSUMER_ZK, else embedded)")
    add_bootstrap_option(p, default=os.environ.get("ZKCONSUMER_BOOTSTRAP"),
                         note="real: an existing broker (default: ZKCONSUMER_BOOTSTRAP, else "
                              "embedded)")
    add_broker_arguments(p)


def params_of(args: argparse.Namespace) -> ScenarioParams:
    params = ScenarioParams(
        zombie_fraction=args.zombie_fraction, cut_factor=args.cut_factor,
        delay_ms_max=args.delay_ms_max, burst_joins=args.burst_joins,
        burst_gap_s=args.burst_gap_s, storm_joins=args.storm_joins,
        storm_leaves=args.storm_leaves, storm_window_s=args.storm_window_s,
        max_retries=args.max_retries, storm_owner_delay_ms=args.storm_owner_delay_ms)
    params.validate()
    return params


def command_line(args: argparse.Namespace) -> str:
    parts = ["zkconsumer", "spark", "split-brain"]
    for action in ("mode", "members", "partitions", "protocols", "scenarios", "seeds",
                   "first_seed", "tasks",
                   "session_timeout_ms", "rebalance_backoff_ms", "rebalance_max_retries",
                   "zombie_fraction", "cut_factor", "delay_ms_max", "burst_joins",
                   "burst_gap_s", "storm_joins", "storm_leaves", "storm_window_s",
                   "max_retries", "out"):
        parts += ["--" + action.replace("_", "-"), str(getattr(args, action))]
    if args.storm_owner_delay_ms:
        parts += ["--storm-owner-delay-ms", str(args.storm_owner_delay_ms)]
    if args.formation != Formation.AUTO.value:
        parts += ["--formation", args.formation]
    if args.calibration:
        parts += ["--calibration", str(args.calibration)]
    parts += recorded_common_options(args)
    return " ".join(shlex.quote(x) for x in parts)


def grid(args: argparse.Namespace) -> list[Any]:
    from zkconsumer.spark.splitbrain.real import SplitCellKey

    protocols = parse_list(args.protocols, REAL_PROTOCOLS if args.mode == "real" else PROTOCOLS,
                           "protocols")
    scenarios = parse_list(args.scenarios, SCENARIOS, "scenarios")
    members, partitions = parse_ints(args.members), parse_ints(args.partitions)
    splits = [s for s in scenarios if s != "storm"]  # a storm's joiners need only one member
    if splits and min(members) < 2:
        raise ValueError(f"--members {args.members!r}: {' and '.join(splits)} need at least 2 "
                         "members")
    if args.first_seed < 0:
        raise ValueError(f"--first-seed must be >= 0, got {args.first_seed}")
    if args.seeds < 1:
        raise ValueError(f"--seeds must be >= 1, got {args.seeds}")
    if args.tasks < (1 if args.mode == "real" else 0):
        raise ValueError(f"--tasks must be >= {1 if args.mode == 'real' else 0}, got "
                         f"{args.tasks}")
    return [SplitCellKey(p, s, n, k, seed) for s, p, n, k, seed in
            itertools.product(scenarios, protocols, members, partitions,
                                      range(args.first_seed, args.first_seed + args.seeds))]


def run(args: argparse.Namespace, spark: Any = None) -> int:
    """Run the sweep; ``spark`` reuses a session (tests), else one is created and stopped."""
    from zkconsumer.results import capture, write_provenance
    from zkconsumer.spark.session import session_for

    logging.getLogger("py4j").setLevel(logging.WARNING)
    params = params_of(args)
    cells = grid(args)
    timing = Timing(session_timeout_ms=args.session_timeout_ms,
                    rebalance_backoff_ms=args.rebalance_backoff_ms,
                    rebalance_max_retries=args.rebalance_max_retries, quiet_s=args.quiet_s,
                    produce_rate=args.rate, auto_commit_interval_ms=500,
                    formation_deadline_s=60.0, event_deadline_s=60.0, drain_deadline_s=30.0)
    # the original's members need its 0.10.2 build: refused, naming the broker spec, before
    # Spark or any server starts
    kafka_home = "" if args.mode == "sim" else original_home_for(
        (c.protocol for c in cells), args.broker, bool(args.zookeeper and args.bootstrap))
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    with session_for(spark, args.master, f"zkconsumer-split-brain-{args.mode}") as spark:
        started = time.perf_counter()
        if args.mode == "sim":
            rows, notes, broker = _sim(spark, cells, params, timing, args), [], ""
            notes.append(f"Simulated ({len(cells)} runs on {spark.sparkContext.master}).")
            notes.append(f"Placement of the members' client CPU: {placement_note(args)}.")
            prov = capture(command_line(args), broker="", placement=placement_meta(args))
        else:
            with _servers(args) as (zk, bootstrap, broker):
                heartbeat = {k: v for k, v in broker_meta(args).items() if k != "broker"}
                prov = capture(command_line(args), broker=broker, **heartbeat,
                               placement=placement_meta(args))
                rows = _real(spark, cells, params, timing, args, zk, bootstrap, broker,
                             kafka_home)
            memory = jvm_memory_note(spark, out) if kafka_home else None
            notes = ([memory] if memory else []) + [f"Real members in {args.tasks} Spark tasks on "
                     f"{spark.sparkContext.master}, broker {broker}, session timeout "
                     f"{timing.session_timeout_ms} ms, rebalance.backoff.ms "
                     f"{timing.rebalance_backoff_ms}"
                     + ("." if "consumer_heartbeat_interval_ms" not in heartbeat else
                        f", KIP-848 heartbeat interval "
                        f"{heartbeat['consumer_heartbeat_interval_ms']} ms.")]
        return _write(spark, rows, out, args, notes, started, prov, write_provenance)


def placement_meta(args: argparse.Namespace) -> dict[str, Any]:
    """``meta.json``'s placement: what the real runs did (recorded: members and joiners over
    the tasks' processes on this host's cores), or the simulated option."""
    from zkconsumer.spark.placement import sweep_placement

    option = getattr(args, "placement", None)
    members = parse_ints(args.members)
    if args.mode == "sim" and not option:
        return {"option": f"--tasks {args.tasks}: that many processes with a core each"}
    servers_on_host = not (getattr(args, "zookeeper", None) and getattr(args, "bootstrap", None))
    return sweep_placement(args.mode, option, members, args.tasks, servers_on_host)


def placement_note(args: argparse.Namespace) -> str:
    from zkconsumer.spark.placement import placement_label

    option = getattr(args, "placement", None)
    if not option:
        return f"{args.tasks} processes with a core each (--tasks), the servers elsewhere"
    return placement_label(option, args.tasks)


def _servers(args: argparse.Namespace) -> Any:
    import contextlib

    from zkconsumer.lab.probe import broker_identity

    @contextlib.contextmanager
    def servers() -> Any:
        with contextlib.ExitStack() as stack:
            zk, bootstrap = args.zookeeper, args.bootstrap
            if not (zk and bootstrap):
                from zkconsumer.testing.servers import broker_from_env, zookeeper_from_env

                zks = stack.enter_context(zookeeper_from_env(zk))
                # --broker (default: ZKCONSUMER_BOOTSTRAP's spec, else Tansu); Kafka 4 gets
                # the KIP-848 groups' session and heartbeat.
                broker = stack.enter_context(broker_from_env(zks.connect_string, args.broker,
                                                             kraft_props=kraft_props(args)))
                zk, bootstrap = zks.connect_string, broker.bootstrap
                # the broker it started names itself (a KRaft node's probe gives a cluster id)
                name = getattr(broker, "name", "")
                if name:
                    yield zk, bootstrap, name
                    return
            yield zk, bootstrap, broker_label(broker_identity(bootstrap))
    return servers()


def broker_label(identity: str) -> str:
    """``Tansu 0.6.0 at host:port`` -> ``tansu-0.6.0`` (the results' broker names)."""
    if identity.startswith("Tansu "):
        return "tansu-" + identity.split()[1]
    return identity.split(" at ")[0]


def jvm_memory_note(spark: Any, out: Path) -> str | None:
    """The summary's line on the original members' JVMs' resident memory, from the records of
    every run (a leaving member's ``stopping`` record carries it)."""
    from pyspark.sql import functions as F

    from zkconsumer.lab.drivers.original import RSS_DETAIL
    from zkconsumer.spark.originals import memory_note, rss_kbs

    paths = sorted(str(p) for p in (out / "records").glob("*"))
    if not paths:
        return None
    raws = (spark.read.parquet(*paths).filter(F.col("raw").contains(RSS_DETAIL))
            .select("raw").collect())
    return memory_note(rss_kbs(str(r["raw"]) for r in raws))


def _real(spark: Any, cells: list[Any], params: ScenarioParams, timing: Timing,
          args: argparse.Namespace, zk: str, bootstrap: str, broker: str,
          kafka_home: str = "") -> list[dict]:
    from zkconsumer.spark.splitbrain.real import (
        GroupNotFormed,
        RealSettings,
        base_row,
        run_real_cell,
    )

    idle = args.idle_s if args.idle_s is not None else (
        2 * timing.rebalance_backoff_ms / 1000.0 + timing.quiet_s)
    settings = RealSettings(zk_connect=zk, bootstrap=bootstrap, broker=broker,
                            out_dir=str(args.out.resolve()), tasks=args.tasks, timing=timing,
                            params=params, idle_s=idle,
                            formation=Formation(args.formation), kafka_home=kafka_home,
                            servers_on_host=not (args.zookeeper and args.bootstrap))
    rows = []
    bar = Progress(len(cells))
    bar.update("split-brain real cells: started")
    for key in cells:
        began = time.perf_counter()
        interrupted = False
        try:
            rows.append(run_real_cell(spark, key, settings))
        except KeyboardInterrupt:
            # SIGINT (Ctrl-C, or `timeout -s INT` bounding a measurement): Spark has cancelled
            # the run's tasks; the run becomes a row saying how long it ran, the sweep stops,
            # and the tables and meta.json are still written from what was measured
            interrupted = True
            reason = (f"{FAILED}interrupted after {time.perf_counter() - began:.0f} s, "
                      "before the run finished")
            rows.append({**base_row(key, "real", params, timing, timing.rebalance_max_retries),
                         "applicable": True, "reason": reason, "broker": broker})
            bar.note(f"{key} {reason}")
        except GroupNotFormed as exc:  # an outcome of the protocol: a row, and no traceback
            row = {**base_row(key, "real", params, timing, timing.rebalance_max_retries),
                   "applicable": True, "reason": str(exc), "broker": broker, **exc.columns}
            rows.append(row)
            log.info("%s: %s", key, exc)
            bar.note(f"{key}: {not_formed_text([row])}")
        except Exception as exc:  # a failed run is a row that says so; the others go on
            log.error("%s failed: %s", key, traceback.format_exc())
            rows.append({**base_row(key, "real", params, timing, timing.rebalance_max_retries),
                         "applicable": True, "reason": f"{FAILED}{exc!r}"[:300],
                         "broker": broker, **getattr(exc, "columns", {})})
            bar.note(f"{key} FAILED: {exc!r}")
        # each finished run at once, so a sweep cut short keeps what it measured
        with open(args.out / ROWS_FILE, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rows[-1]) + "\n")
        bar.advance(str(key))
        if interrupted:
            break
    bar.close()
    return rows


def _sim(spark: Any, cells: list[Any], params: ScenarioParams, timing: Timing,
         args: argparse.Namespace) -> list[dict]:
    from zkconsumer.sim import Calibration
    from zkconsumer.sim.splitbrain.simulate import SplitSimSettings, simulate_cell

    cal = Calibration.load(args.calibration) if args.calibration else Calibration()
    settings = SplitSimSettings(calibration=cal, timing=timing, params=params, tasks=args.tasks,
                                idle_s=args.idle_s,
                                placement=getattr(args, "placement", None) or "")
    sc = spark.sparkContext
    slices = min(len(cells), max(1, sc.defaultParallelism) * 8)
    with executor_cells(sc, len(cells), "split-brain sim cells") as done:
        def one(key: Any) -> dict:
            row = simulate_cell(key, settings)
            done.add(1)
            return row

        return sc.parallelize(cells, slices).map(one).collect()  # type: ignore[no-any-return]


def _write(spark: Any, rows: list[dict], out: Path, args: argparse.Namespace,
           notes: list[str], started: float, prov: Any, write_provenance: Any) -> int:
    """The tables, ``summary.md``, plots and ``meta.json``; the exit status
    (:func:`.exit_status`: lost records or failed runs, never a group that did not form)."""
    import dataclasses

    from zkconsumer.spark.splitbrain.outcome import outcome_rows
    from zkconsumer.spark.splitbrain.table import (
        TABLE_COLUMNS,
        TABLE_ORDER,
        aggregate,
        rows_to_df,
        summary_markdown,
        write_plots,
    )
    from zkconsumer.spark.summary import write_summary, write_tables

    df = rows_to_df(spark, rows).cache()
    written = write_tables(df, out, TABLE_COLUMNS, TABLE_ORDER)
    notes = [*notes, f"Wall time of the job: {time.perf_counter() - started:.1f} s."]
    # measured runs aggregated by Spark from ``df``; the others, few, listed from ``rows``
    text = summary_markdown(aggregate(df), outcome_rows(rows),
                            f"Split brain at scale ({args.mode})", command_line(args), notes)
    # every measured run of a cell is a point of its curve (the give-ups of a stuck group too)
    written += write_summary(out, text,
                             lambda: write_plots(aggregate(df, by_outcome=False), out))
    counts = tally(rows)
    write_provenance(out, dataclasses.replace(
        prov, extra={**prov.extra, "runs": counts.runs, "lost_runs": counts.lost,
                     "failed_runs": counts.failed, "not_formed_runs": counts.not_formed}))
    print((out / "summary.md").read_text())
    for path in written:
        print(f"wrote {path}")
    for line in counts.problems():
        print(f"split-brain: {line}", file=sys.stderr)
    return exit_status(rows)


def main(argv: Sequence[str] | None = None) -> int:
    return script_main("splitbrain.py", __doc__.split("\n\n")[0], add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
