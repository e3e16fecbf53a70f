"""``experiment compare``: the rebalance lab from the command line.

    zkconsumer experiment compare --members 10 --partitions 30 --events join,leave,crash \\
        --protocols zk-range,eager-range,cooperative-sticky --repeat 3 --out DIR [--json FILE]

Starts embedded ZooKeeper and broker unless ``--zookeeper``/``--bootstrap`` (or
``ZKCONSUMER_ZK``/``ZKCONSUMER_BOOTSTRAP``) name existing ones.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from zkconsumer.admin.options import add_bootstrap_option, add_zk_option
from zkconsumer.cli import (
    experiment_chaos,
    experiment_formation,
    experiment_herd,
    experiment_herd_ops,
    experiment_migrate,
    experiment_split,
)
from zkconsumer.cli.console import show
from zkconsumer.cli.experiment_args import (
    csv_choice,
    finish_command,
    kip848_heartbeat,
    servers_named_together,
)
from zkconsumer.lab import EVENTS, PROTOCOLS, ExperimentSpec, RunStatus, Timing, run_experiment
from zkconsumer.lab.broker_option import add_broker_option, broker_named_once, results_broker
from zkconsumer.lab.compare.output import write_outputs
from zkconsumer.lab.compare.report import summary_table, write_results
from zkconsumer.results.provenance import capture, write_provenance


def register(sub: Any) -> None:
    exp = sub.add_parser("experiment", help="the rebalance lab: compare coordination protocols")
    verbs = exp.add_subparsers(dest="experiment_verb", metavar="SUBVERB")
    verbs.required = True
    cmp_ = verbs.add_parser(
        "compare", help="run membership events against several protocols on the same workload",
        description="Run each protocol x event (x repeat) on a fresh topic and group, measure "
                    "from real observations, and write results.json, summary.md and plots.")
    cmp_.add_argument("--members", type=int, default=4,
                      help="stable group size before the event (a join makes it N+1)")
    cmp_.add_argument("--partitions", type=int, default=8, help="partitions of the topic")
    cmp_.add_argument("--events", type=csv_choice(EVENTS), default=("join", "leave", "crash"),
                      help=f"comma-separated: {','.join(EVENTS)}")
    cmp_.add_argument("--protocols", type=csv_choice(PROTOCOLS),
                      default=("zk-range", "eager-range", "cooperative-sticky"),
                      help=f"comma-separated: {','.join(PROTOCOLS)}")
    cmp_.add_argument("--repeat", type=int, default=1, help="runs of each (event, protocol)")
    cmp_.add_argument("--processes", action="store_true",
                      help="every member in its own OS process (default: threads; a crashed "
                           "member is always a process)")
    cmp_.add_argument("--session-timeout-ms", type=int, default=6000,
                      help="ZooKeeper session and broker group session timeout alike")
    cmp_.add_argument("--rate", type=float, default=40.0,
                      help="messages per second produced during each run")
    cmp_.add_argument("--consumer-heartbeat-ms", type=int, default=None, metavar="MS",
                      help="heartbeat interval of the KIP-848 (consumer-*) groups, set on the "
                           "Apache Kafka 4 broker --broker starts "
                           "(group.consumer.heartbeat.interval.ms; default: the broker's, 5000)")
    add_zk_option(cmp_, dest="zookeeper", required=False,
                  note="an existing ZooKeeper (default: an embedded one)")
    add_bootstrap_option(cmp_, note="an existing broker (default: an embedded one)")
    add_broker_option(cmp_)
    cmp_.add_argument("--out", required=True, type=Path, help="output directory")
    cmp_.add_argument("--json", type=Path, default=None, help="also write results.json here")
    cmp_.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    cmp_.add_argument("--parallel", type=int, default=1, metavar="K",
                      help="run K cells at once, each on its own topic and group (a quick look: "
                           "the runs share the machine and disturb each other's timings)")
    cmp_.set_defaults(func=run_compare)
    experiment_chaos.register(verbs)
    experiment_formation.register(verbs)
    experiment_split.register(verbs)
    experiment_herd.register(verbs)
    experiment_herd_ops.register(verbs)
    experiment_migrate.register(verbs)


def reproduce_command(args: argparse.Namespace) -> str:
    """The command line that reruns this experiment (servers given only if they were)."""
    parts = ["zkconsumer", "experiment", "compare", "--members", str(args.members),
             "--partitions", str(args.partitions), "--events", ",".join(args.events),
             "--protocols", ",".join(args.protocols), "--repeat", str(args.repeat),
             "--session-timeout-ms", str(args.session_timeout_ms), "--rate", f"{args.rate:g}"]
    if args.processes:
        parts.append("--processes")
    if args.consumer_heartbeat_ms is not None:
        parts += ["--consumer-heartbeat-ms", str(args.consumer_heartbeat_ms)]
    if args.parallel != 1:
        parts += ["--parallel", str(args.parallel)]
    return finish_command(parts, args)


def run_compare(args: argparse.Namespace) -> int:
    if not servers_named_together(args) or not broker_named_once(args):
        return 2
    heartbeat = kip848_heartbeat(args)
    if isinstance(heartbeat, str):
        print(f"zkconsumer: error: {heartbeat}", file=sys.stderr)
        return 2
    prov = capture(reproduce_command(args), **heartbeat)
    spec = ExperimentSpec(
        protocols=args.protocols, events=args.events, members=args.members,
        partitions=args.partitions, repeat=args.repeat, processes=args.processes,
        out_dir=str(args.out), zk_connect=args.zookeeper, bootstrap=args.bootstrap,
        timing=Timing(session_timeout_ms=args.session_timeout_ms, produce_rate=args.rate,
                      consumer_heartbeat_interval_ms=args.consumer_heartbeat_ms),
        progress=not args.no_progress, parallel=args.parallel, broker=args.broker)
    try:
        spec.validate()
    except ValueError as exc:
        print(f"zkconsumer: error: {exc}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    results = run_experiment(
        spec, on_result=lambda so_far: write_results(so_far, args.out / "results.json", spec))
    written = write_outputs(results, spec, args.out, reproduce_command(args), args.json)
    written.append(write_provenance(args.out, replace(prov, broker=results_broker(results))))
    show(summary_table(results))
    for path in written:
        print(f"wrote {path}")
    failed = [r for r in results if r.status == RunStatus.FAILED.value]
    return 1 if failed else 0
