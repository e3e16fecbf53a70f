"""What this member owns now: one frozen generation of partition infos, swapped per rebalance.

The original kept a shared mutable ``topicRegistry`` that several classes mutated in place. Here
each successful attempt installs a new :class:`Generation`; readers (committer, metrics) take the
current one and never see a half-built registry. Counters of replaced generations are kept so
``messages_consumed`` survives rebalances.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.identity import TopicPartition

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Generation:
    """The partitions owned after one successful attempt (number 0: nothing owned yet)."""

    number: int
    infos: Mapping[TopicPartition, PartitionTopicInfo] = field(default_factory=dict)
    session_id: int | None = None  # the session the owner znodes were created in

    def assignment(self) -> dict[TopicPartition, str]:
        return {tp: info.thread_id for tp, info in sorted(self.infos.items())}


class Ownership:
    """Holder of the current generation; thread-safe swaps."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current = Generation(0)
        self._next_number = 1
        self._retired_messages = 0
        self._retired_bytes = 0

    @property
    def current(self) -> Generation:
        return self._current

    def install(self, infos: Mapping[TopicPartition, PartitionTopicInfo],
                session_id: int | None) -> Generation:
        with self._lock:
            self._retire(self._current)
            self._current = Generation(self._next_number, dict(infos), session_id)
            self._next_number += 1
            return self._current

    def clear(self) -> Generation:
        """Forget everything (release, or ``resetState`` after a new session); returns the old."""
        with self._lock:
            old = self._current
            self._retire(old)
            self._current = Generation(self._next_number)
            self._next_number += 1
            return old

    def _retire(self, gen: Generation) -> None:
        for info in gen.infos.values():
            self._retired_messages += info.messages_consumed
            self._retired_bytes += info.bytes_consumed

    def totals(self) -> tuple[int, int]:
        """(messages, bytes) consumed over every generation so far."""
        with self._lock:
            gen = self._current
            msgs = self._retired_messages + sum(i.messages_consumed for i in gen.infos.values())
            size = self._retired_bytes + sum(i.bytes_consumed for i in gen.infos.values())
            return msgs, size


def assignment_by_topic(claims: Mapping[TopicPartition, str]) -> dict[str, dict[int, str]]:
    """``{topic: {partition: thread id}}``: the shape of events, logs and
    ``before_starting_fetchers``."""
    out: dict[str, dict[int, str]] = {}
    for tp, tid in sorted(claims.items()):
        out.setdefault(tp.topic, {})[tp.partition] = tid
    return out
