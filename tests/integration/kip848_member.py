"""A KIP-848 group member in a process of its own, so a test can freeze it (SIGSTOP) like a
member stuck in a long GC pause: its heartbeats stop with everything else, the coordinator fences
it, and once thawed it still believes it owns its partitions.

    python kip848_member.py BOOTSTRAP GROUP TOPIC

Prints ``ASSIGNED [0,1]``, ``REVOKED [..]`` and ``LOST [..]`` (compact JSON lists) from its
rebalance callbacks, which it serves until its first assignment and then after each command;
each stdin line ``commit PARTITION OFFSET`` commits that offset
synchronously and prints ``COMMIT_OK`` or ``COMMIT_ERROR <librdkafka error name>``; end of stdin
closes the consumer.
"""

from __future__ import annotations

import json
import select
import sys
from typing import Any


def main(bootstrap: str, group: str, topic: str) -> int:
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "group.protocol": "consumer", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "log_level": 0})

    assigned: list[bool] = []

    def say(word: str) -> Any:
        def callback(_c: Any, parts: Any) -> None:
            assigned.append(word == "ASSIGNED" and bool(parts))
            print(word, json.dumps(sorted(p.partition for p in parts), separators=(",", ":")),
                  flush=True)
        return callback

    consumer.subscribe([topic], on_assign=say("ASSIGNED"), on_revoke=say("REVOKED"),
                       on_lost=say("LOST"))
    try:
        while not any(assigned):  # polls until it is first given partitions
            consumer.poll(0.1)
        while True:
            # From then on it serves callbacks only after a command, and otherwise waits on
            # stdin alone: a process frozen there and thawed with a command waiting runs the
            # command before any callback the thaw brings (a freeze inside a poll could serve
            # the fencing's LOST first), so its late commit is made while it still believes it
            # owns its partitions.
            if not select.select([sys.stdin], [], [])[0]:
                continue
            line = sys.stdin.readline().split()
            if not line:
                return 0
            partition, offset = int(line[1]), int(line[2])
            try:
                consumer.commit(offsets=[TopicPartition(topic, partition, offset)],
                                asynchronous=False)
                print("COMMIT_OK", flush=True)
            except KafkaException as exc:
                print("COMMIT_ERROR", exc.args[0].name(), flush=True)
            consumer.poll(0)
    finally:
        consumer.close()


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
