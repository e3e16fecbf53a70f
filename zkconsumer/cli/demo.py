"""``demo``: the project's main job on the embedded servers (or those of the environment).

It starts ZooKeeper and the broker, creates a topic, produces messages, and shows the znodes
that the broker registration and the topic wrote, which is exactly what a legacy consumer reads.
Then a two-member group consumes the topic, and the lab shows the design's failures on a small
scale (a herd sweep, a zombie) and what broker-side coordination does instead (one join and one
crash for four protocols; on Apache Kafka when a Kafka directory is at hand, see
:mod:`zkconsumer.cli.demo_compare`). Everything lands in ``--out`` (``./demo-out``) with one
report.html; the members' logs go to ``demo.log`` there, and the console shows each warning once.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path
from typing import Any

from zkconsumer.admin import create_topic, produce, zk_session
from zkconsumer.admin.tree import tree_lines
from zkconsumer.lab.broker_option import add_broker_option
from zkconsumer.testing.servers import broker_from_env, zookeeper_from_env
from zkconsumer.zk import paths

LAB_FOLDERS = ("herd", "zombie", "compare")


def register(sub: Any) -> None:
    demo = sub.add_parser("demo", help="run the main job on embedded servers and show the znodes")
    demo.add_argument("--topic", default="demo-orders",
                      help="the topic the demo's group consumes (default: demo-orders)")
    demo.add_argument("--partitions", type=int, default=6, help="its partitions (default: 6)")
    demo.add_argument("--messages", type=int, default=1200,
                      help="messages produced to it (default: 1200)")
    demo.add_argument("--out", type=Path, default=Path("demo-out"),
                      help="where the lab's outputs, demo.log and report.html go "
                           "(default: ./demo-out)")
    demo.add_argument("--no-lab", action="store_true",
                      help="skip the herd sweep, the zombie and the comparison")
    add_broker_option(demo)
    demo.set_defaults(func=run_demo)


def _section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)), flush=True)


def _run_lab(zk_connect: str, bootstrap: str, broker: str, out: Path,
             versions: dict[str, str], own_broker: str | None) -> bool:
    from zkconsumer.cli.demo_compare import print_comparison, run_compare_demo
    from zkconsumer.cli.demo_lab import run_herd_demo, run_zombie_demo

    _section("herd effect: every member rebalances on one join")
    herd_ok = run_herd_demo(bootstrap, out / "herd", broker, versions)
    _section("split brain: a zombie keeps fetching partitions it no longer owns")
    zombie_ok = run_zombie_demo(zk_connect, bootstrap, out / "zombie", broker, versions)
    _section("the alternatives: one join and one crash, four protocols")
    if own_broker:
        print(f"on a ZooKeeper and an Apache Kafka broker of their own ({own_broker}), so the "
              "broker protocols meet a real coordinator")
    results, measured = run_compare_demo(zk_connect, bootstrap, broker, out / "compare",
                                         versions, own_broker)
    return print_comparison(results, out / "compare", measured) and herd_ok and zombie_ok


def _compare_broker(args: argparse.Namespace) -> str | None:
    from zkconsumer.cli.demo_compare import REFERENCE_KAFKA, compare_broker
    from zkconsumer.testing.kafka import find_kafka_home

    if args.no_lab:
        return None
    return compare_broker(args.broker, os.environ, find_kafka_home(REFERENCE_KAFKA))


def run_demo(args: argparse.Namespace) -> int:
    from zkconsumer.cli.demo_lab import mntr_text, versions
    from zkconsumer.cli.quiet import narrate_to
    from zkconsumer.report import write_report

    started = time.monotonic()
    out: Path = args.out.resolve()
    for folder in LAB_FOLDERS:  # this demo's own outputs only: an older run's would mix in
        shutil.rmtree(out / folder, ignore_errors=True)
    own_broker = _compare_broker(args)
    console = narrate_to(out / "demo.log")
    lab_ok = True
    _section("servers")
    with zookeeper_from_env() as zk:
        print(f"ZooKeeper: {zk.connect_string}")
        lab_versions = versions(mntr_text(zk))
        with broker_from_env(zk.connect_string) as broker:
            print(f"broker {broker.broker_id} ({broker.name}): {broker.bootstrap}")
            _section(f"topic {args.topic}")
            info = create_topic(zk.connect_string, args.topic, args.partitions,
                                bootstrap=broker.bootstrap, exist_ok=True)
            print(f"created with {len(info.partitions)} partitions, leader broker "
                  f"{info.partitions[0].leader}")
            t0 = time.monotonic()
            n = produce(broker.bootstrap, args.topic,
                        [f"order-{i}".encode() for i in range(args.messages)],
                        keys=[str(i % 50) for i in range(args.messages)], connections=2)
            print(f"produced {n} messages in {time.monotonic() - t0:.2f} s")
            _section("znodes a legacy consumer reads")
            with zk_session(zk.connect_string) as client:
                for line in tree_lines(client, paths.BROKERS):
                    print(line)
            _section("a ZooKeeper-coordinated group consumes it")
            from zkconsumer.cli.demo_group import run_group

            run_group(zk.connect_string, args.topic, "demo-group", n)
            if not args.no_lab:
                lab_ok = _run_lab(zk.connect_string, broker.bootstrap, broker.name, out,
                                  lab_versions, own_broker)
    _section("done")
    for times, line in console.repeats():
        print(f"({line[:100]}{'...' if len(line) > 100 else ''}: {times} more like it, "
              f"in {out / 'demo.log'})")
    print(f"every server stopped; demo took {time.monotonic() - started:.1f} s")
    if not args.no_lab:
        print(f"report: {write_report(out)}")
    if not lab_ok:
        print("a lab run failed (see its summary above)")
        return 1
    return 0
