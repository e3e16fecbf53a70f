"""``demo``: the project's main job on the embedded servers (or those of the environment).

It starts ZooKeeper and the broker, creates a topic, produces messages, and shows the znodes
that the broker registration and the topic wrote, which is exactly what a legacy consumer reads.
Then a two-member group consumes the topic, and the lab shows the design's two famous failures
on a small scale: a herd sweep and a zombie.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from zkconsumer.admin import create_topic, produce, zk_session
from zkconsumer.admin.tree import tree_lines
from zkconsumer.cli.broker_option import add_broker_option
from zkconsumer.testing.servers import broker_from_env, zookeeper_from_env
from zkconsumer.zk import paths


def register(sub: Any) -> None:
    demo = sub.add_parser("demo", help="run the main job on embedded servers and show the znodes")
    demo.add_argument("--topic", default="demo-orders")
    demo.add_argument("--partitions", type=int, default=6)
    demo.add_argument("--messages", type=int, default=1200)
    demo.add_argument("--out", type=Path, default=None,
                      help="where the herd sweep and the zombie scenario write their outputs "
                           "(default: a new temporary directory)")
    demo.add_argument("--no-lab", action="store_true",
                      help="skip the herd sweep and the zombie scenario")
    add_broker_option(demo)
    demo.set_defaults(func=run_demo)


def _section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)), flush=True)


def _run_lab(zk_connect: str, bootstrap: str, out: Path | None) -> bool:
    from zkconsumer.cli.demo_lab import run_herd_demo, run_zombie_demo

    out = out or Path(tempfile.mkdtemp(prefix="zkconsumer-demo-"))
    _section("herd effect: every member rebalances on one join")
    herd_ok = run_herd_demo(bootstrap, out / "herd")
    _section("split brain: a zombie keeps fetching partitions it no longer owns")
    zombie_ok = run_zombie_demo(zk_connect, bootstrap, out / "zombie")
    return herd_ok and zombie_ok


def run_demo(args: argparse.Namespace) -> int:
    started = time.monotonic()
    lab_ok = True
    _section("servers")
    with zookeeper_from_env() as zk:
        print(f"ZooKeeper: {zk.connect_string}")
        with broker_from_env(zk.connect_string) as broker:
            print(f"broker {broker.broker_id}: {broker.bootstrap}")
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
                lab_ok = _run_lab(zk.connect_string, broker.bootstrap, args.out)
    _section("done")
    print(f"every server stopped; demo took {time.monotonic() - started:.1f} s")
    if not lab_ok:
        print("a lab run failed (see its summary above)")
        return 1
    return 0
