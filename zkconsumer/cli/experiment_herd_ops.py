"""``experiment herd-ops``: ZooKeeper operations by kind for one join and one leave.

    zkconsumer experiment herd-ops --kinds original,zkconsumer --members 4,8,16,32 \\
        --repeats 3 --broker kafka:../shared/kafka-0.10.2 --out DIR

Starts an embedded ZooKeeper and an Apache Kafka broker (``--broker kafka:DIR``; its directory
also runs the original members' JVMs, so it must be the 0.10.2 build with the member driver),
puts every member behind a recording proxy and writes ``runs.json``, ``traces.jsonl.gz`` and
``meta.json`` into ``--out``. Exits 1 if a group did not settle.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from zkconsumer.cli.experiment_args import csv_choice


def register(verbs: Any) -> None:
    from zkconsumer.lab.herdops.run import KINDS, HerdOpsSpec

    ops = verbs.add_parser(
        "herd-ops", help="ZooKeeper operations by kind per join and leave, original vs zkconsumer",
        description="Grow one group per kind (the original 0.10.2 connector in JVMs, this "
                    "project's in Python processes) through the sizes; at each size measure one "
                    "join and one leave, counting every ZooKeeper request by kind, the watches "
                    "set and the notifications sent, per member, on the wire.")
    ops.add_argument("--kinds", type=csv_choice(KINDS), default=KINDS,
                     help=f"comma-separated: {','.join(KINDS)}")
    ops.add_argument("--members", default="4,8,16,32",
                     help="comma-separated group sizes N (a join makes N+1)")
    ops.add_argument("--repeats", type=int, default=3, help="join-and-leave pairs at each size")
    ops.add_argument("--partitions", type=int, default=HerdOpsSpec.partitions,
                     help="partitions of the one topic")
    ops.add_argument("--prop", action="append", default=[], metavar="KEY=VALUE",
                     help="a ConsumerConfig property for every member of either kind "
                          "(repeatable; defaults: rebalance.backoff.ms=2000, "
                          "rebalance.max.retries=20, zookeeper.session.timeout.ms=6000)")
    ops.add_argument("--broker", default="kafka:0.10.2",
                     help="kafka:DIR or kafka:VERSION (../shared/kafka-VERSION)")
    ops.add_argument("--out", required=True, type=Path, help="results folder")
    ops.set_defaults(func=run_herd_ops_verb)


def reproduce_command(args: argparse.Namespace) -> str:
    parts = ["zkconsumer", "experiment", "herd-ops", "--kinds", ",".join(args.kinds),
             "--members", args.members, "--repeats", str(args.repeats),
             "--partitions", str(args.partitions)]
    for prop in args.prop:
        parts += ["--prop", prop]
    parts += ["--broker", args.broker, "--out", str(args.out)]
    return " ".join(shlex.quote(p) for p in parts)


def run_herd_ops_verb(args: argparse.Namespace) -> int:
    from zkconsumer.admin import create_topic
    from zkconsumer.lab.herdops.output import Traces, write_runs
    from zkconsumer.lab.herdops.run import DEFAULT_PROPS, HerdOpsError, HerdOpsSpec, run_herd_ops
    from zkconsumer.results import capture, write_provenance
    from zkconsumer.testing import EmbeddedZooKeeper, KafkaBroker

    try:
        sizes = tuple(int(x) for x in args.members.split(","))
        props = dict(DEFAULT_PROPS)
        for prop in args.prop:
            key, eq, value = prop.partition("=")
            if not eq or not key:
                raise ValueError(f"--prop {prop!r} is not KEY=VALUE")
            props[key] = value
        spec = HerdOpsSpec(kinds=tuple(args.kinds), sizes=sizes, repeats=args.repeats,
                           partitions=args.partitions, props=props)
        spec.validate()
        home = kafka_home_of(args.broker)
    except ValueError as exc:
        print(f"zkconsumer: error: {exc}", file=sys.stderr)
        return 2
    rows = []
    traces = Traces(args.out)
    code = 0
    with EmbeddedZooKeeper() as zk, KafkaBroker(zk.connect_string, home) as kafka:
        prov = capture(reproduce_command(args), broker=kafka.name, props=props)

        def new_topic(topic: str, partitions: int) -> None:
            create_topic(zk.connect_string, topic, partitions, bootstrap=kafka.bootstrap)

        def show(row: Any) -> None:
            rows.append(row)
            write_runs(args.out, rows)
            print(json.dumps({k: row.to_json()[k] for k in
                              ("kind", "members", "event", "repeat", "converge_s", "total")}))

        try:
            run_herd_ops(spec, zk.connect_string, home, new_topic, on_row=show, trace=traces)
        except HerdOpsError as exc:
            print(f"herd-ops: {exc}", file=sys.stderr)
            code = 1
        finally:
            traces.close()
    write_runs(args.out, rows)
    write_provenance(args.out, prov)
    print(f"wrote {args.out}")
    return code


def kafka_home_of(spec: str) -> Path:
    """``kafka:DIR``, or ``kafka:VERSION`` for the shared build of that version."""
    from zkconsumer.testing import shared_kafka_home

    if not spec.startswith("kafka:"):
        raise ValueError(f"--broker {spec!r}: the original members need kafka:DIR")
    rest = spec.split(":", 1)[1]
    home = shared_kafka_home(rest) if "/" not in rest else None
    return home if home is not None else Path(rest)
