"""``experiment split-brain``: the split-brain scenarios from the command line.

    zkconsumer experiment split-brain --scenario zombie --members 4 --partitions 8 \\
        --protocols zk-range,eager-range,cooperative-sticky --out DIR

Starts embedded ZooKeeper and broker unless ``--zk``/``--bootstrap`` (or ``ZKCONSUMER_ZK``/
``ZKCONSUMER_BOOTSTRAP``) name existing ones; ``failover`` also starts its own 3-server ensemble.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from zkconsumer.admin.options import add_bootstrap_option, add_zk_option
from zkconsumer.cli import run_meta
from zkconsumer.cli.console import show
from zkconsumer.cli.experiment_args import (
    csv_choice,
    finish_command,
    kip848_heartbeat,
    servers_named_together,
)
from zkconsumer.lab.broker_option import add_broker_option, broker_named_once
from zkconsumer.lab.compare.spec import PROTOCOLS
from zkconsumer.lab.runs import RunStatus
from zkconsumer.lab.splitbrain import SCENARIOS, SplitBrainSpec, run_split_brain
from zkconsumer.lab.splitbrain.output import write_outputs
from zkconsumer.lab.splitbrain.report import summary_table, write_results
from zkconsumer.lab.splitbrain.spec import DEFAULT_TIMING
from zkconsumer.results.compact import write_compact


def register(verbs: Any) -> None:
    p = verbs.add_parser(
        "split-brain", help="stale views, zombies and ensemble failover under a consuming group",
        description="Apply one split-brain fault (through per-member fault proxies, or by "
                    "killing the ZooKeeper leader) to each protocol on a fresh topic and group; "
                    "write results.json, summary.md and (zombie) a timeline PNG.")
    p.add_argument("--scenario", required=True, choices=SCENARIOS,
                   help="the fault (docs/experiments.md, \"Split brain\")")
    p.add_argument("--members", type=int, default=4, help="stable group size before the fault")
    p.add_argument("--partitions", type=int, default=8, help="partitions of the topic")
    p.add_argument("--protocols", type=csv_choice(PROTOCOLS),
                   default=("zk-range", "eager-range", "cooperative-sticky"),
                   help=f"comma-separated: {','.join(PROTOCOLS)}")
    p.add_argument("--repeat", type=int, default=1, help="runs of each protocol")
    p.add_argument("--session-timeout-ms", type=int, default=DEFAULT_TIMING.session_timeout_ms,
                   help="ZooKeeper session and broker group session timeout alike")
    p.add_argument("--backoff-ms", type=int, default=DEFAULT_TIMING.rebalance_backoff_ms,
                   help="rebalance.backoff.ms")
    p.add_argument("--max-retries", type=int, default=DEFAULT_TIMING.rebalance_max_retries,
                   help="rebalance.max.retries")
    p.add_argument("--delay-ms", type=float, default=None,
                   help="stale-view: server->client delay of the lagging members "
                        "(default 60%% of --backoff-ms)")
    p.add_argument("--lagging", type=int, default=None,
                   help="stale-view: how many members lag (default half)")
    p.add_argument("--joins", type=int, default=2, help="stale-view: newcomers, one by one")
    p.add_argument("--overlap-s", type=float, default=2.0,
                   help="zombie: stay paused this long after the takeover")
    p.add_argument("--consumer-heartbeat-ms", type=int, default=None, metavar="MS",
                   help="heartbeat interval of the KIP-848 (consumer-*) groups, set on the "
                        "Apache Kafka 4 broker --broker starts "
                        "(group.consumer.heartbeat.interval.ms; default: the broker's, 5000, "
                        "which must be shorter than --session-timeout-ms)")
    p.add_argument("--rate", type=float, default=DEFAULT_TIMING.produce_rate,
                   help="messages per second produced during each run")
    add_zk_option(p, dest="zookeeper", required=False,
                  note="an existing ZooKeeper (default: an embedded one)")
    add_bootstrap_option(p, note="an existing broker (default: an embedded one)")
    add_broker_option(p)
    p.add_argument("--out", required=True, type=Path, help="output directory")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=run_split)


def reproduce_command(args: argparse.Namespace) -> str:
    parts = ["zkconsumer", "experiment", "split-brain", "--scenario", args.scenario,
             "--members", str(args.members), "--partitions", str(args.partitions),
             "--protocols", ",".join(args.protocols), "--repeat", str(args.repeat),
             "--session-timeout-ms", str(args.session_timeout_ms),
             "--backoff-ms", str(args.backoff_ms), "--max-retries", str(args.max_retries)]
    if args.scenario == "stale-view":
        if args.delay_ms is not None:
            parts += ["--delay-ms", f"{args.delay_ms:g}"]
        if args.lagging is not None:
            parts += ["--lagging", str(args.lagging)]
        parts += ["--joins", str(args.joins)]
    if args.scenario == "zombie":
        parts += ["--overlap-s", f"{args.overlap_s:g}"]
    parts += ["--rate", f"{args.rate:g}"]
    if args.consumer_heartbeat_ms is not None:
        parts += ["--consumer-heartbeat-ms", str(args.consumer_heartbeat_ms)]
    return finish_command(parts, args)


def run_split(args: argparse.Namespace) -> int:
    if not servers_named_together(args) or not broker_named_once(args):
        return 2
    heartbeat = kip848_heartbeat(args)
    if isinstance(heartbeat, str):
        print(f"zkconsumer: error: {heartbeat}", file=sys.stderr)
        return 2
    timing = replace(DEFAULT_TIMING, session_timeout_ms=args.session_timeout_ms,
                     rebalance_backoff_ms=args.backoff_ms,
                     rebalance_max_retries=args.max_retries, produce_rate=args.rate,
                     consumer_heartbeat_interval_ms=args.consumer_heartbeat_ms)
    spec = SplitBrainSpec(
        scenario=args.scenario, protocols=args.protocols, members=args.members,
        partitions=args.partitions, repeat=args.repeat, out_dir=str(args.out),
        zk_connect=args.zookeeper, bootstrap=args.bootstrap, timing=timing,
        delay_ms=args.delay_ms, lagging=args.lagging, joins=args.joins,
        overlap_s=args.overlap_s, progress=not args.no_progress, broker=args.broker)
    try:
        spec.validate()
    except ValueError as exc:
        print(f"zkconsumer: error: {exc}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    prov = run_meta.start(reproduce_command(args), args, **heartbeat)
    results = run_split_brain(
        spec, on_result=lambda so_far: write_results(so_far, args.out / "results.json", spec))
    written = write_outputs(results, spec, args.out, reproduce_command(args))
    written += [write_compact(args.out), run_meta.finish(args.out, prov)]
    show(summary_table(results, spec.scenario))
    for path in written:
        print(f"wrote {path}")
    return 1 if any(r.status == RunStatus.FAILED.value for r in results) else 0
