"""What every offset store offers the connector and the coordination modes.

Three stores implement it: ZooKeeper (``zookeeper.py``, the original's default), Kafka
(``kafka.py``, ``offsets.storage=kafka``, optionally dual) and fenced ZooKeeper (``fenced.py``,
the leader mode's, whose commits are conditional on the adopted assignment). The connector
talks to :class:`OffsetStore` only, so it never asks which store it holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.identity import TopicPartition

#: "Nothing committed": ``auto.offset.reset`` decides where the partition starts.
NO_OFFSET = -1


class OffsetStore(Protocol):
    """Committed offsets of one group; every method is thread-safe."""

    def read(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The committed offset of each partition, :data:`NO_OFFSET` where there is none."""
        ...

    def checkpoint(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Offsets just read: an unchanged offset is not written back."""
        ...

    def barrier(self) -> None:
        """Return once no commit in progress can still write (after ownership was cleared)."""
        ...

    def commit(self, infos: Iterable[PartitionTopicInfo]) -> dict[TopicPartition, int]:
        """One attempt at the commits of a rebalance or a shutdown; returns what was written."""
        ...

    def commit_retrying(self, infos: Iterable[PartitionTopicInfo], retries: int
                        ) -> dict[TopicPartition, int]:
        """``commit_offsets``: up to ``1 + retries`` attempts where the store retries at all."""
        ...

    def close(self) -> None:
        """Release what the store holds of its own (never the connector's session)."""
        ...
