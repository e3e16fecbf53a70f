"""A broker-coordinated group member for tests of a real group coordinator (Apache Kafka 2.4.1's
classic protocol, Kafka 4's KIP-848): a confluent-kafka consumer polling in a thread, with its
rebalance callbacks recorded in order, so a test asserts what each member was told to give up
and to take.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class GroupMember:
    """``conf`` is the protocol's part of the consumer configuration (strategy or remote
    assignor, timeouts); a callback that hands a member nothing (a cooperative round or a KIP-848
    reconciliation that leaves it as it was) is not recorded: nothing changed for it."""

    bootstrap: str
    group: str
    topic: str
    conf: Mapping[str, object] = field(default_factory=dict)
    instance: str | None = None
    events: list[tuple[str, float, frozenset[int]]] = field(default_factory=list)
    owned: set[int] = field(default_factory=set)

    def start(self) -> GroupMember:
        from confluent_kafka import Consumer

        conf: dict[str, object] = {
            "bootstrap.servers": self.bootstrap, "group.id": self.group,
            "enable.auto.commit": False, "auto.offset.reset": "earliest", "log_level": 3,
            **self.conf}
        if self.instance:
            conf["group.instance.id"] = self.instance
        self._consumer = Consumer(conf)
        self._stop = threading.Event()
        self._between_polls = threading.Lock()
        self._consumer.subscribe([self.topic], on_assign=self._assigned,
                                 on_revoke=self._revoked, on_lost=self._lost)
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def _record(self, kind: str, parts: list[Any]) -> frozenset[int]:
        got = frozenset(tp.partition for tp in parts)
        if got:
            self.events.append((kind, time.time(), got))
        return got

    def _assigned(self, _c: Any, parts: list[Any]) -> None:
        self.owned |= self._record("assign", parts)

    def _revoked(self, _c: Any, parts: list[Any]) -> None:
        self.owned -= self._record("revoke", parts)

    def _lost(self, _c: Any, parts: list[Any]) -> None:
        self.owned -= self._record("lost", parts)

    def _poll(self) -> None:
        while not self._stop.is_set():
            with self._between_polls:
                self._consumer.poll(0.1)

    def commit(self, partition: int, offset: int) -> None:
        """A synchronous commit between two polls: with ``group.protocol=consumer``,
        librdkafka 2.16's synchronous commit did not return here while another thread polled."""
        from confluent_kafka import TopicPartition

        with self._between_polls:
            self._consumer.commit(offsets=[TopicPartition(self.topic, partition, offset)],
                                  asynchronous=False)

    def close(self) -> None:
        """A dynamic member leaves the group; a static one (KIP-345) does not, and its
        partitions stay reserved for its ``group.instance.id`` until its session runs out."""
        self._stop.set()
        self._thread.join(timeout=10)
        self._consumer.close()

    def since(self, ts: float) -> list[tuple[str, frozenset[int]]]:
        """What changed hands for this member after ``ts``."""
        return [(kind, parts) for kind, at, parts in self.events if at >= ts]


def settled(partitions: int, *members: GroupMember) -> bool:
    """Every member owns something and the members own each partition exactly once."""
    owned = [m.owned for m in members]
    return (all(owned) and sum(len(o) for o in owned) == partitions
            and set().union(*owned) == set(range(partitions)))
