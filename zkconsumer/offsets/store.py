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
from zkconsumer.errors import ZkConsumerError
from zkconsumer.identity import TopicPartition

#: "Nothing committed": ``auto.offset.reset`` decides where the partition starts.
NO_OFFSET = -1


class OffsetCommitRefused(ZkConsumerError):
    """An offset commit refused by design: the session this member adopted its assignment in
    is gone, so its partitions may belong to another member already and its offsets must not
    move. Expected of a member whose session expired (a zombie); it rejoins in a new session."""

    def __init__(self, group: str, offsets: Mapping[TopicPartition, int], reason: str) -> None:
        self.group = group
        self.offsets = dict(offsets)
        self.reason = reason
        super().__init__(f"group {group!r}: offset commit of {self.partitions} refused: "
                         f"{reason}")

    @property
    def partitions(self) -> str:
        """``topic/partition, ...`` of the refused offsets."""
        return ", ".join(f"{tp.topic}/{tp.partition}" for tp in sorted(self.offsets)) \
            or "no partition"


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
