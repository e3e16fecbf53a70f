"""The herd sweep as a Spark application: ``--mode real`` or ``--mode sim``.

    spark-submit zkconsumer/spark/herd/job.py --mode sim --members 4,64,1000,10000 \\
        --partitions 16,128 --protocols zk-range,eager-range,cooperative-sticky,kip848 \\
        --events join,leave,crash --seeds 3 --out DIR
    zkconsumer spark herd --mode real --members 100 --partitions 16 --events join,crash \\
        --tasks 2 --out DIR

Both modes write ``DIR/sweep.parquet``, ``DIR/sweep.csv`` (one row per protocol x N x P x event
x seed), ``DIR/summary.md`` and the plots. Without ``--master`` the job runs on ``local[*]``
(under spark-submit, on the master spark-submit was given).
"""

from __future__ import annotations

import argparse
import logging
import os
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zkconsumer.admin.options import add_bootstrap_option, add_zk_option
from zkconsumer.lab.progress import Progress
from zkconsumer.lab.servers import LAB_KAFKA_PROPS
from zkconsumer.scenarios.timing import Timing
from zkconsumer.sim import EVENTS as SIM_EVENTS
from zkconsumer.sim import PROTOCOLS as SIM_PROTOCOLS
from zkconsumer.sim import Calibration
from zkconsumer.spark.brokers import add_broker_arguments, broker_meta, kraft_props
from zkconsumer.spark.herd.grid import cells
from zkconsumer.spark.placement import placement_label, sweep_placement
from zkconsumer.spark.progress import executor_cells
from zkconsumer.spark.script import parse_ints, recorded_common_options, script_main
from zkconsumer.spark.task_control import SETTLE_REBALANCES_ENDED

log = logging.getLogger(__name__)

DEFAULT_PROTOCOLS = "zk-range,eager-range,cooperative-sticky"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mode", choices=("real", "sim"), required=True,
                   help="real: connectors hosted by Spark tasks; sim: the simulator")
    p.add_argument("--members", default="4,64,1000",
                   help="comma-separated group sizes N before the event")
    p.add_argument("--partitions", default="16,128", help="comma-separated partition counts")
    p.add_argument("--protocols", default=DEFAULT_PROTOCOLS, help="comma-separated protocols")
    p.add_argument("--events", default="join,leave,crash", help="comma-separated events")
    p.add_argument("--seeds", type=int, default=3, help="seeds (repeats) per cell")
    p.add_argument("--out", required=True, type=Path, help="output directory")
    p.add_argument("--master", default=None,
                   help="Spark master URL (default: local[*], or spark-submit's)")
    p.add_argument("--tasks", type=int, default=2,
                   help="real: Spark tasks hosting the members (all run at once); "
                        "sim: ignored (one task per cell)")
    p.add_argument("--session-timeout-ms", type=int, default=6000,
                   help="ZooKeeper session and broker group session timeout alike")
    p.add_argument("--rebalance-backoff-ms", type=int, default=None,
                   help="legacy backoff between attempts (default: the lab's 1000 in real "
                        "mode and in sim mode, so both compare)")
    p.add_argument("--rebalance-max-retries", type=int, default=None,
                   help="legacy attempts per rebalance (default: the lab's 10)")
    p.add_argument("--calibration", type=Path, default=None,
                   help="sim: calibration file from `zkconsumer calibrate` (default: built in)")
    p.add_argument("--zk-servers", type=int, default=1,
                   help="sim: EXTRAPOLATION to an ensemble of this many ZooKeeper servers, the "
                        "members spread evenly (reads are served by the member's own server: "
                        "the calibrated read service time is divided by it)")
    p.add_argument("--client-processes", type=int, default=0,
                   help="sim: members share this many client processes' CPUs (0: one "
                        "machine each; real mode hosts N/--tasks members per process)")
    p.add_argument("--placement", default=None, metavar="SPEC",
                   help="sim: where the members' client CPU runs (zkconsumer.sim.placement): "
                        "'per-member' (one host each, the default), 'here' (this machine's "
                        "real runs: the members over --tasks processes on 2 cores, the servers "
                        "on them too) or PROCESSESxCORES; recorded in meta.json and summary.md")
    p.add_argument("--rate", type=float, default=40.0, help="real: messages per second produced")
    p.add_argument("--quiet-s", type=float, default=Timing().quiet_s,
                   help="real: the group counts as settled after this long without change")
    add_zk_option(p, dest="zookeeper", required=False, default=os.environ.get("ZKCONSUMER_ZK"),
                  note="real: an existing ZooKeeper (default: ZKCONSUMER_ZK, else embedded)")
    add_bootstrap_option(p, default=os.environ.get("ZKCONSUMER_BOOTSTRAP"),
                         note="real: an existing broker (default: ZKCONSUMER_BOOTSTRAP, else "
                              "embedded)")
    add_broker_arguments(p)


def _list(text: str, choices: Sequence[str], what: str) -> tuple[str, ...]:
    items = tuple(x.strip() for x in text.split(",") if x.strip())
    bad = [x for x in items if x not in choices]
    if bad or not items:
        raise ValueError(f"--{what} {text!r}: choose from {', '.join(choices)}")
    return items


def command_line(args: argparse.Namespace) -> str:
    parts = ["zkconsumer", "spark", "herd", "--mode", args.mode, "--members", args.members,
             "--partitions", args.partitions, "--protocols", args.protocols, "--events",
             args.events, "--seeds", str(args.seeds), "--tasks", str(args.tasks),
             "--session-timeout-ms", str(args.session_timeout_ms), "--out", str(args.out)]
    if args.calibration:
        parts += ["--calibration", str(args.calibration)]
    if getattr(args, "zk_servers", 1) != 1:
        parts += ["--zk-servers", str(args.zk_servers)]
    if getattr(args, "client_processes", 0):
        parts += ["--client-processes", str(args.client_processes)]
    parts += recorded_common_options(args)
    return " ".join(shlex.quote(x) for x in parts)


def run(args: argparse.Namespace, spark: Any = None) -> int:
    """Run the sweep; ``spark`` reuses a session (tests), else one is created and stopped."""
    from zkconsumer.spark.session import session_for

    logging.getLogger("py4j").setLevel(logging.WARNING)  # its INFO lines are connection chatter
    timing = Timing(session_timeout_ms=args.session_timeout_ms, produce_rate=args.rate)
    backoff = args.rebalance_backoff_ms or timing.rebalance_backoff_ms
    retries = args.rebalance_max_retries or timing.rebalance_max_retries
    timing = Timing(session_timeout_ms=args.session_timeout_ms, produce_rate=args.rate,
                    rebalance_backoff_ms=backoff, rebalance_max_retries=retries,
                    quiet_s=args.quiet_s,
                    consumer_heartbeat_interval_ms=getattr(args, "consumer_heartbeat_ms", None))
    members, partitions = parse_ints(args.members), parse_ints(args.partitions)
    if args.mode == "sim":
        protocols = _list(args.protocols, SIM_PROTOCOLS, "protocols")
        events = _list(args.events, SIM_EVENTS, "events")
    else:
        from zkconsumer.lab.drivers import DRIVERS

        protocols = _list(args.protocols, tuple(DRIVERS), "protocols")
        events = _list(args.events, ("join", "leave", "crash"), "events")
        if args.tasks < 1:
            raise ValueError(f"--tasks must be >= 1, got {args.tasks}")
        kraft_props(args)  # a heartbeat for a broker without one is refused before Spark starts
    grid = cells(protocols, members, partitions, events, args.seeds)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    from zkconsumer.results import capture, write_provenance

    with session_for(spark, args.master, f"zkconsumer-herd-{args.mode}") as spark:
        started = time.perf_counter()
        # The broker whose coordinator the broker-side rows measured (and, on Kafka 4, the
        # KIP-848 groups' heartbeat interval).
        broker = {"broker": ""} if args.mode == "sim" else broker_meta(args)
        settle = {} if args.mode == "sim" else {"settle": SETTLE_REBALANCES_ENDED}
        prov = capture(command_line(args), **broker, **settle, mode=args.mode, tasks=args.tasks,
                       session_timeout_ms=args.session_timeout_ms,
                       placement=placement_meta(args, members))
        if args.mode == "sim":
            df, notes = _sim(spark, grid, args, backoff, retries)
        else:
            df, notes = _real(spark, grid, args, timing)
        code = _write(df, out, args, notes, started)
        write_provenance(out, prov)
        return code


def placement_meta(args: argparse.Namespace, members: Sequence[int]) -> dict[str, Any]:
    """``meta.json``'s placement: the real runs' (recorded), or the simulated option."""
    option = getattr(args, "placement", None)
    if args.mode == "sim" and getattr(args, "client_processes", 0) and not option:
        return {"option": f"--client-processes {args.client_processes}"}
    servers_on_host = not (getattr(args, "zookeeper", None) and getattr(args, "bootstrap", None))
    return sweep_placement(args.mode, option, members, args.tasks, servers_on_host)


def _sim(spark: Any, grid: Any, args: argparse.Namespace, backoff: int, retries: int
         ) -> tuple[Any, list[str]]:
    from zkconsumer.spark.herd.sweep import SimSettings, sweep_dataframe

    cal = Calibration.load(args.calibration) if args.calibration else Calibration()
    if args.zk_servers < 1:
        raise ValueError(f"--zk-servers must be >= 1, got {args.zk_servers}")
    if args.zk_servers > 1:
        import dataclasses

        from zkconsumer.sim.zkmodel import ensemble_read_service_us

        service = ensemble_read_service_us(cal.zk_read_service_us, args.zk_servers)
        cal = dataclasses.replace(
            cal, zk_read_service_us=service,
            source=f"{cal.source}; EXTRAPOLATED to {args.zk_servers} ZooKeeper servers: "
                   f"zk_read_service_us {cal.zk_read_service_us:g} / {args.zk_servers} = "
                   f"{service:.3g} (members spread evenly, reads served locally)")
    settings = SimSettings(calibration=cal, session_timeout_ms=args.session_timeout_ms,
                           consumer_heartbeat_interval_ms=getattr(args, "consumer_heartbeat_ms",
                                                                  None),
                           rebalance_backoff_ms=backoff, rebalance_max_retries=retries,
                           client_processes=args.client_processes,
                           placement=getattr(args, "placement", None) or "", tasks=args.tasks)
    with executor_cells(spark.sparkContext, len(grid), "herd sim cells") as done:
        df = sweep_dataframe(spark, grid, settings, done).cache()
        df.count()  # computed here, under the progress bar; the table reads the cache
    notes = [f"Simulated ({len(grid)} configurations on {spark.sparkContext.master}); "
             f"calibration: {cal.source}. kip848 (the KIP-848 model, judged against Apache "
             f"Kafka 4.0.2's runs in docs/validation-plan-11.md) heartbeats every "
             f"{settings.kip848_heartbeat_ms} ms, the broker's interval.",
             "Placement of the members' client CPU: " + (
                 f"{args.client_processes} processor-sharing client processes, a core each "
                 "(--client-processes)." if args.client_processes and not args.placement
                 else f"{placement_label(getattr(args, 'placement', None), args.tasks)}.")]
    return df, notes


def jvm_memory_note(spark: Any, out: Path) -> str | None:
    """:func:`~zkconsumer.spark.originals.memory_note` of every original member the run's
    records hold (their ``stopping`` records carry their JVM's resident memory)."""
    from pyspark.sql import functions as F

    from zkconsumer.spark.originals import memory_note, rss_kbs

    rows = (spark.read.parquet(f"{out.resolve()}/records/*")
            .filter((F.col("kind") == "lc") & (F.col("what") == "stopping"))
            .select("raw").collect())
    return memory_note(rss_kbs(str(r["raw"]) for r in rows))


def _real(spark: Any, grid: Any, args: argparse.Namespace, timing: Timing
          ) -> tuple[Any, list[str]]:
    import contextlib

    from zkconsumer.spark.herd.real import RealSettings, real_dataframe
    from zkconsumer.spark.originals import original_home_for

    # refused before any server starts
    kafka_home = original_home_for((c.protocol for c in grid), args.broker,
                                   bool(args.zookeeper and args.bootstrap))
    with contextlib.ExitStack() as stack:
        zk, bootstrap = args.zookeeper, args.bootstrap
        broker_name = f"broker at {bootstrap}"
        if not (zk and bootstrap):
            from zkconsumer.testing.servers import broker_from_env, zookeeper_from_env

            zks = stack.enter_context(zookeeper_from_env(zk))
            broker = stack.enter_context(broker_from_env(zks.connect_string, args.broker,
                                                         kafka_props=LAB_KAFKA_PROPS,
                                                         kraft_props=kraft_props(args)))
            zk, bootstrap = zks.connect_string, broker.bootstrap
            broker_name = getattr(broker, "name", "") or broker_name
        settings = RealSettings(zk_connect=zk, bootstrap=bootstrap, tasks=args.tasks,
                                timing=timing, out_dir=str(args.out.resolve()),
                                kafka_home=kafka_home,
                                servers_on_host=not (args.zookeeper and args.bootstrap))
        bar = Progress(len(grid))
        bar.update("herd real cells: started")
        df = real_dataframe(spark, grid, settings,
                            on_cell=lambda cell: bar.advance(f"{cell.protocol} {cell.event} "
                                                             f"N={cell.members}")).cache()
        bar.close()
        df.count()  # computed while the servers are still up
    memory = jvm_memory_note(spark, args.out) if kafka_home else None
    hb = broker_meta(args).get("consumer_heartbeat_interval_ms")
    notes = ([memory] if memory else []) + [
             f"Real connectors on {broker_name}: {len(grid)} runs, members spread over "
             f"{args.tasks} Spark tasks on {spark.sparkContext.master}; session timeout "
             f"{timing.session_timeout_ms} ms"
             + ("." if hb is None else f"; KIP-848 heartbeat interval {hb} ms.")]
    return df, notes


def _write(df: Any, out: Path, args: argparse.Namespace, notes: list[str], started: float
           ) -> int:
    from zkconsumer.spark.herd.summary import aggregate, summary_markdown, write_plots
    from zkconsumer.spark.herd.tables import TABLE_COLUMNS, TABLE_ORDER
    from zkconsumer.spark.summary import write_summary, write_tables

    written = write_tables(df, out, TABLE_COLUMNS, TABLE_ORDER)
    elapsed = time.perf_counter() - started
    notes = [*notes, f"Wall time of the job: {elapsed:.1f} s."]
    aggregates = aggregate(df)
    text = summary_markdown(aggregates, f"Herd sweep ({args.mode})", command_line(args), notes)
    written += write_summary(out, text, lambda: write_plots(aggregates, out))
    print((out / "summary.md").read_text())
    for path in written:
        print(f"wrote {path}")
    lost = df.filter("lost > 0").count()
    return 1 if lost else 0


def main(argv: Sequence[str] | None = None) -> int:
    return script_main("herd.py", __doc__.split("\n\n")[0], add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
