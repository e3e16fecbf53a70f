"""``experiment herd``: what one membership change costs as the group grows.

    zkconsumer experiment herd --members 4,8,16,32,64 --partitions 8 \\
        [--protocols zk-range,eager-range] [--events join,leave] --out DIR [--json FILE]

Writes ``DIR/results.json`` (the lab's runs with ``scenario``/``params`` and a top-level
``fits``), ``DIR/summary.md``, ``DIR/herd-requests.png`` and ``DIR/herd-time-to-stable.png``.
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from zkconsumer.admin.options import add_bootstrap_option, add_zk_option
from zkconsumer.cli import run_meta
from zkconsumer.cli.console import show
from zkconsumer.cli.experiment_args import csv_choice, finish_command, kip848_heartbeat
from zkconsumer.lab.broker_option import add_broker_option, broker_named_once
from zkconsumer.lab.drivers import DRIVERS
from zkconsumer.lab.herd.report import fits_table, write_herd_outputs, write_herd_results
from zkconsumer.lab.herd.run import run_herd
from zkconsumer.lab.herd.spec import DEFAULT_SIZES, HERD_EVENTS, HERD_TIMING, HerdSpec
from zkconsumer.lab.runs import RunStatus
from zkconsumer.results.compact import write_compact


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give comma-separated group sizes, e.g. 4,8,16,32,64") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: group sizes must be >= 1")
    return sizes


def register(verbs: Any) -> None:
    herd = verbs.add_parser(
        "herd", help="requests, watches and time per membership change as the group grows",
        description="For each group size N, a stable group of N members on P partitions, one "
                    "member joins and then leaves; measures ZooKeeper requests (clients and "
                    "server), watch notifications, attempts, conflicts and time to stable, "
                    "and fits the log-log slope of requests per event against N.")
    herd.add_argument("--members", type=_sizes, default=DEFAULT_SIZES,
                      help="comma-separated stable group sizes before the event "
                           f"(default {','.join(map(str, DEFAULT_SIZES))})")
    herd.add_argument("--partitions", type=int, default=8, help="partitions of the topic")
    herd.add_argument("--protocols", type=csv_choice(tuple(DRIVERS)), default=("zk-range",),
                      help=f"comma-separated: {','.join(DRIVERS)}")
    herd.add_argument("--events", type=csv_choice(HERD_EVENTS), default=HERD_EVENTS,
                      help="join, leave or both (default both)")
    herd.add_argument("--session-timeout-ms", type=int, default=HERD_TIMING.session_timeout_ms,
                      help="ZooKeeper session and broker group session timeout alike "
                           "(long by default so that pings hardly touch the server's count)")
    herd.add_argument("--backoff-ms", type=int, default=HERD_TIMING.rebalance_backoff_ms,
                      help="rebalance.backoff.ms of the ZooKeeper members")
    herd.add_argument("--consumer-heartbeat-ms", type=int, default=None, metavar="MS",
                      help="heartbeat interval of the KIP-848 (consumer-*) groups, set on the "
                           "Apache Kafka 4 broker --broker starts "
                           "(group.consumer.heartbeat.interval.ms; default: the broker's, 5000)")
    herd.add_argument("--quiet-s", type=float, default=HERD_TIMING.quiet_s,
                      help="seconds without any change that count as settled")
    add_zk_option(herd, dest="zookeeper", required=False,
                  note="measure on this ZooKeeper instead of a dedicated embedded one (other "
                       "clients' requests then count too)")
    add_bootstrap_option(herd, note="an existing broker (registered in the ZooKeeper used); "
                         "default: an embedded one")
    add_broker_option(herd)
    herd.add_argument("--out", required=True, type=Path, help="output directory")
    herd.add_argument("--json", type=Path, default=None, help="also write results.json here")
    herd.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    herd.set_defaults(func=run_herd_command)


def reproduce_command(args: argparse.Namespace) -> str:
    parts = ["zkconsumer", "experiment", "herd", "--members", ",".join(map(str, args.members)),
             "--partitions", str(args.partitions), "--protocols", ",".join(args.protocols),
             "--events", ",".join(args.events), "--session-timeout-ms",
             str(args.session_timeout_ms), "--backoff-ms", str(args.backoff_ms),
             "--quiet-s", f"{args.quiet_s:g}"]
    if args.consumer_heartbeat_ms is not None:
        parts += ["--consumer-heartbeat-ms", str(args.consumer_heartbeat_ms)]
    return finish_command(parts, args)


def run_herd_command(args: argparse.Namespace) -> int:
    if not broker_named_once(args):
        return 2
    heartbeat = kip848_heartbeat(args)
    if isinstance(heartbeat, str):
        print(f"zkconsumer: error: {heartbeat}", file=sys.stderr)
        return 2
    timing = replace(HERD_TIMING, session_timeout_ms=args.session_timeout_ms,
                     rebalance_backoff_ms=args.backoff_ms, quiet_s=args.quiet_s,
                     consumer_heartbeat_interval_ms=args.consumer_heartbeat_ms)
    spec = HerdSpec(protocols=args.protocols, members=args.members, partitions=args.partitions,
                    events=args.events, timing=timing, zk_connect=args.zookeeper,
                    bootstrap=args.bootstrap, dedicated_zookeeper=args.zookeeper is None,
                    out_dir=str(args.out), progress=not args.no_progress, broker=args.broker)
    try:
        spec.validate()
    except ValueError as exc:
        print(f"zkconsumer: error: {exc}", file=sys.stderr)
        return 2
    # With N >> P most members own nothing, and the legacy assignor says so on every attempt:
    # quiet for this run only (the verb may run inside a larger program, e.g. the tests).
    prov = run_meta.start(reproduce_command(args), args, **heartbeat)
    assignor_log = logging.getLogger("zkconsumer.assignors.legacy")
    level = assignor_log.level
    assignor_log.setLevel(logging.ERROR)
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        result = run_herd(spec, on_result=lambda so_far: write_herd_results(
            so_far, args.out / "results.json"))
    finally:
        assignor_log.setLevel(level)
    written = write_herd_outputs(result, args.out, reproduce_command(args), args.json)
    written += [write_compact(args.out), run_meta.finish(args.out, prov)]
    show(fits_table(result.fits))
    for path in written:
        print(f"wrote {path}")
    failed = [r for r in result.runs if r.status == RunStatus.FAILED.value]
    return 1 if failed else 0
