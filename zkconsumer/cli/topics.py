"""``topics create|list|describe`` and ``produce``."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from zkconsumer.admin import (
    add_partitions,
    bootstrap_servers,
    create_topic,
    describe_topic,
    list_topics,
    produce,
    zk_session,
)
from zkconsumer.admin.options import add_bootstrap_option, add_zk_option


def register(sub: Any) -> None:
    topics = sub.add_parser("topics", help="create, list, describe topics").add_subparsers(
        dest="topics_verb")
    topics.required = True
    create = topics.add_parser("create", help="create a topic on the broker and in ZooKeeper")
    add_zk_option(create)
    create.add_argument("--topic", required=True, help="the topic's name")
    create.add_argument("--partitions", type=int, default=1, help="how many (default: 1)")
    add_bootstrap_option(create, note="the broker that creates it (default: those registered "
                         "in --zk)")
    create.set_defaults(func=topics_create)
    alter = topics.add_parser("add-partitions", help="grow a topic to N partitions")
    add_zk_option(alter)
    alter.add_argument("--topic", required=True, help="an existing topic")
    alter.add_argument("--partitions", type=int, required=True,
                       help="its new partition count (more than it has)")
    alter.set_defaults(func=topics_add_partitions)
    lst = topics.add_parser("list", help="topics registered in ZooKeeper")
    add_zk_option(lst)
    lst.set_defaults(func=topics_list)
    desc = topics.add_parser("describe", help="partitions, leaders and ISRs from ZooKeeper")
    add_zk_option(desc)
    desc.add_argument("--topic", required=True, help="the topic to describe")
    desc.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    desc.set_defaults(func=topics_describe)

    prod = sub.add_parser("produce", help="produce numbered messages (one record per batch)")
    add_zk_option(prod, note="the brokers registered there receive the messages")
    prod.add_argument("--topic", required=True, help="an existing topic")
    prod.add_argument("--count", type=int, required=True, help="how many messages")
    prod.add_argument("--size", type=int, default=0, help="pad values to B bytes")
    prod.add_argument("--keys", action="store_true", help="key each message with its number")
    prod.add_argument("--connections", type=int, default=2,
                      help="producers sending in parallel (default: 2)")
    prod.set_defaults(func=produce_cmd)


def topics_create(args: argparse.Namespace) -> int:
    info = create_topic(args.zk, args.topic, args.partitions, bootstrap=args.bootstrap)
    print(f"created topic {info.name} with {len(info.partitions)} partitions")
    return 0


def topics_add_partitions(args: argparse.Namespace) -> int:
    info = add_partitions(args.zk, args.topic, args.partitions)
    print(f"topic {info.name} now has {len(info.partitions)} partitions")
    return 0


def topics_list(args: argparse.Namespace) -> int:
    for name in list_topics(args.zk):
        print(name)
    return 0


def topics_describe(args: argparse.Namespace) -> int:
    info = describe_topic(args.zk, args.topic)
    if args.json:
        print(json.dumps({"topic": info.name, "partitions": [
            {"partition": p.partition, "leader": p.leader, "replicas": list(p.replicas),
             "isr": list(p.isr)} for p in info.partitions]}))
        return 0
    print(f"Topic: {info.name}\tPartitionCount: {len(info.partitions)}")
    for p in info.partitions:
        print(f"\tPartition: {p.partition}\tLeader: {p.leader}\t"
              f"Replicas: {','.join(map(str, p.replicas))}\tIsr: {','.join(map(str, p.isr))}")
    return 0


def numbered_values(count: int, size: int) -> list[bytes]:
    return [f"message-{i}".encode().ljust(size, b".") for i in range(count)]


def produce_cmd(args: argparse.Namespace) -> int:
    if args.count < 0:
        raise SystemExit(f"zkconsumer: error: --count must be >= 0, got {args.count}")
    with zk_session(args.zk) as client:
        servers = bootstrap_servers(client, args.zk)
    values = numbered_values(args.count, args.size)
    keys = [str(i) for i in range(args.count)] if args.keys else None
    started = time.monotonic()
    n = produce(servers, args.topic, values, keys=keys, connections=args.connections)
    took = time.monotonic() - started
    print(f"produced {n} messages to {args.topic} in {took:.2f} s ({n / max(took, 1e-9):.0f}/s)")
    return 0
