"""``zk start`` and ``broker start``: run embedded servers in the foreground until Ctrl-C."""

from __future__ import annotations

import argparse
import signal
import threading
from typing import Any

from zkconsumer.admin.options import add_zk_option
from zkconsumer.testing import (
    EmbeddedBroker,
    EmbeddedEnsemble,
    EmbeddedZooKeeper,
    KafkaBroker,
    KraftBroker,
)


def register(sub: Any) -> None:
    zk = sub.add_parser("zk", help="run an embedded ZooKeeper").add_subparsers(dest="zk_verb")
    zk.required = True
    start = zk.add_parser("start", help="start a server (or an ensemble) until Ctrl-C")
    start.add_argument("--port", type=int, default=None, help="client port (default: free port)")
    start.add_argument("--ensemble", type=int, default=0, metavar="N",
                       help="start a quorum of N servers instead of one")
    start.add_argument("--data-dir", default=None, help="keep data here (default: a temp dir)")
    start.set_defaults(func=zk_start)

    broker = sub.add_parser("broker", help="run the embedded broker").add_subparsers(
        dest="broker_verb")
    broker.required = True
    bstart = broker.add_parser("start", help="start a broker registered in ZooKeeper until Ctrl-C",
                               description="Tansu (the embedded default, registered by this "
                                           "command) or, with --kafka-home, an Apache Kafka "
                                           "broker that registers itself.")
    add_zk_option(bstart, note="the broker registers there")
    bstart.add_argument("--port", type=int, default=None,
                        help="the broker's port on 127.0.0.1 (default: a free port)")
    bstart.add_argument("--broker-id", type=int, default=0,
                        help="its id under /brokers/ids (default: 0)")
    bstart.add_argument("--kafka-home", default=None, metavar="DIR",
                        help="start Apache Kafka from this Kafka directory instead of Tansu "
                             "(an Apache release, or a build laid out like ../shared/kafka-2.4.1; "
                             "see docs/brokers.md)")
    bstart.set_defaults(func=broker_start)


def wait_for_ctrl_c() -> None:
    """Block until Ctrl-C or SIGTERM: the foreground verbs that run servers until stopped."""
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    try:
        while not done.wait(1.0):
            pass
    except KeyboardInterrupt:
        pass


def zk_start(args: argparse.Namespace) -> int:
    if args.ensemble:
        if args.port:
            raise SystemExit("zkconsumer: error: --port and --ensemble cannot be combined")
        with EmbeddedEnsemble(size=args.ensemble) as ensemble:
            print(f"ZooKeeper ensemble of {args.ensemble} serving on {ensemble.connect_string}",
                  flush=True)
            print(f"leader: server {ensemble.leader_id()}; Ctrl-C to stop", flush=True)
            wait_for_ctrl_c()
        return 0
    with EmbeddedZooKeeper(port=args.port, data_dir=args.data_dir) as zk:
        print(f"ZooKeeper serving on {zk.connect_string} (data in {zk.data_dir}); Ctrl-C to stop",
              flush=True)
        wait_for_ctrl_c()
    return 0


def broker_start(args: argparse.Namespace) -> int:
    from zkconsumer.testing.kafka import check_kafka_home
    from zkconsumer.testing.kraft import is_kraft_home

    broker: EmbeddedBroker | KafkaBroker | KraftBroker
    if args.kafka_home:
        # Kafka 4 has no ZooKeeper mode: started as a KRaft node, registered here like Tansu.
        kind = KraftBroker if is_kraft_home(check_kafka_home(args.kafka_home)) else KafkaBroker
        broker = kind(args.zk, args.kafka_home, broker_id=args.broker_id, port=args.port)
    else:
        broker = EmbeddedBroker(args.zk, broker_id=args.broker_id, port=args.port)
    with broker:
        print(f"{broker.name} broker {broker.broker_id} serving on {broker.bootstrap}, "
              f"registered in {args.zk}; Ctrl-C to stop", flush=True)
        wait_for_ctrl_c()
    return 0
