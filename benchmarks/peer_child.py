"""One consumer's pass over the benchmark topic in a process of its own (for benchmarks/peers.py).

    python benchmarks/peer_child.py PEER --zookeeper HOST:PORT --bootstrap HOST:PORT
        --topic T --messages N --partitions P --group G

PEER is ``zkconsumer``, ``bare``, ``pykafka`` or ``pykafka-rdkafka``. The pykafka peers run in
their own virtualenv (pykafka pins kazoo 2.5.0), so this file imports nothing but the standard
library at the top and the one client it drives inside its function. Each consumer reads
``--messages`` records, touching every value, and prints one JSON line: ``steady_s`` (first to
last message), ``cpu_s`` (CPU time of the whole process over that span, all threads) and
``count``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any


class Clock:
    """First-message and last-message instants with the process's CPU time at each."""

    def __init__(self) -> None:
        self.first = self.cpu0 = 0.0

    def start(self) -> None:
        self.first, self.cpu0 = time.perf_counter(), time.process_time()

    def stop(self, count: int, nbytes: int) -> dict[str, Any]:
        end, cpu = time.perf_counter(), time.process_time()
        return {"steady_s": end - self.first, "cpu_s": cpu - self.cpu0, "count": count,
                "bytes": nbytes}


def run_zkconsumer(args: argparse.Namespace) -> dict[str, Any]:
    from zkconsumer.config import ConsumerConfig
    from zkconsumer.connector import ZookeeperConsumerConnector

    connector = ZookeeperConsumerConnector(ConsumerConfig({
        "zookeeper.connect": args.zookeeper, "group.id": args.group,
        "auto.offset.reset": "smallest", "auto.commit.enable": "false",
        "consumer.timeout.ms": "30000"}))
    clock = Clock()
    count = nbytes = 0
    try:
        stream = connector.create_message_streams({args.topic: 1})[args.topic][0]
        for m in stream:
            if not count:
                clock.start()
            nbytes += len(m.message)
            count += 1
            if count >= args.messages:
                break
        return clock.stop(count, nbytes)
    finally:
        connector.shutdown()


def run_bare(args: argparse.Namespace) -> dict[str, Any]:
    from confluent_kafka import Consumer, TopicPartition

    from zkconsumer.config import ConsumerConfig
    from zkconsumer.datapath.fetcher import client_config

    # The librdkafka settings of the connector's fetcher threads, so that a ratio measures the
    # connector's own layers and not a difference in client tuning.
    settings = client_config(ConsumerConfig({"zookeeper.connect": args.zookeeper,
                                             "group.id": args.group}), args.bootstrap)
    settings.pop("logger")
    consumer = Consumer({**settings, "log_level": 3})
    consumer.assign([TopicPartition(args.topic, p, 0) for p in range(args.partitions)])
    clock = Clock()
    count = nbytes = 0
    while count < args.messages:
        for m in consumer.consume(num_messages=5000, timeout=1.0):
            if m.error() is not None:
                continue
            if not count:
                clock.start()
            nbytes += len(m.value())
            count += 1
    result = clock.stop(count, nbytes)
    consumer.close()
    return result


def fit_rdkafka_settings() -> None:
    """pykafka 2.8's librdkafka consumer predates ``fetch.max.bytes`` (librdkafka 1.0), whose
    default (50 MB) a librdkafka of today refuses unless ``receive.message.max.bytes`` is at
    least 512 bytes more; pykafka sets the latter to one fetch per partition plus one. Set
    ``fetch.max.bytes`` to fit under it, the only change to pykafka's own settings."""
    from pykafka.rdkafka.simple_consumer import RdKafkaSimpleConsumer

    made = RdKafkaSimpleConsumer._mk_rdkafka_config_lists

    def fitted(self: Any) -> Any:
        conf, topic_conf = made(self)
        receive = int(dict(conf)["receive.message.max.bytes"])
        return [*conf, ("fetch.max.bytes", str(receive - 512))], topic_conf

    RdKafkaSimpleConsumer._mk_rdkafka_config_lists = fitted


def run_pykafka(args: argparse.Namespace, use_rdkafka: bool) -> dict[str, Any]:
    from pykafka import KafkaClient
    from pykafka.common import OffsetType

    if use_rdkafka:
        fit_rdkafka_settings()

    client = KafkaClient(hosts=args.bootstrap, broker_version=args.broker_version)
    topic = client.topics[args.topic.encode()]
    consumer = topic.get_balanced_consumer(
        consumer_group=args.group.encode(), zookeeper_connect=args.zookeeper,
        auto_offset_reset=OffsetType.EARLIEST, auto_commit_enable=False,
        consumer_timeout_ms=30000, use_rdkafka=use_rdkafka)
    clock = Clock()
    count = nbytes = 0
    try:
        for m in consumer:
            if m is None:
                continue
            if not count:
                clock.start()
            nbytes += len(m.value)
            count += 1
            if count >= args.messages:
                break
        return clock.stop(count, nbytes)
    finally:
        consumer.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("peer", choices=("zkconsumer", "bare", "pykafka", "pykafka-rdkafka"))
    parser.add_argument("--zookeeper", required=True)
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--messages", type=int, required=True)
    parser.add_argument("--partitions", type=int, required=True)
    parser.add_argument("--group", required=True)
    parser.add_argument("--broker-version", default="0.10.1",
                        help="pykafka's broker_version (API versions it may use)")
    args = parser.parse_args(argv)
    import logging

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    if args.peer == "zkconsumer":
        result = run_zkconsumer(args)
    elif args.peer == "bare":
        result = run_bare(args)
    else:
        result = run_pykafka(args, use_rdkafka=args.peer == "pykafka-rdkafka")
    if result["count"] < args.messages:
        raise SystemExit(f"{args.peer}: read {result['count']} of {args.messages} messages")
    print("RESULT " + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
