"""Offsets in ZooKeeper (``offsets.storage=zookeeper``): read committed ones, commit changes.

The original (spec detailed §5.6, ZooKeeper storage):

* ``/consumers/<g>/offsets/<t>/<p>`` holds the next offset to consume as decimal text; a missing
  node means "no offset" (-1), and ``auto.offset.reset`` then decides where to start;
* ``commitOffsets`` writes only partitions whose consumed offset differs from the last value
  read or written (``checkpointedZkOffsets``, KAFKA-987), with setData and parents created on
  NoNode; ZooKeeper errors propagate to the caller;
* writes are not retried: ``commitOffsets`` let a ZooKeeper error reach its caller.

The auto-commit thread that calls the store is ``offsets/auto_commit.py``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping

from kazoo.exceptions import NoNodeError

from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.errors import CorruptZnode
from zkconsumer.events import EventBus
from zkconsumer.identity import TopicPartition
from zkconsumer.metrics import RebalanceMetrics
from zkconsumer.offsets.store import NO_OFFSET
from zkconsumer.zk import codec, paths
from zkconsumer.zk.corrupt import CorruptionReporter
from zkconsumer.zk.session import ZkSession

log = logging.getLogger(__name__)

class ZookeeperOffsetStore:
    """One group's committed offsets in ZooKeeper; thread-safe (user, rebalancer, auto-commit)."""

    def __init__(self, session: ZkSession, group: str, events: EventBus,
                 metrics: RebalanceMetrics) -> None:
        self._session = session
        self._group = group
        self._events = events
        self._metrics = metrics
        self._lock = threading.Lock()
        self._checkpoint: dict[TopicPartition, int] = {}
        self.corrupt = CorruptionReporter(events.consumer_id, events.emit)

    def read(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """One getData per partition; -1 where nothing was committed yet.

        A value that is not an offset (another client wrote it) counts as no offset: the
        partition starts where ``auto.offset.reset`` says, it is reported once, and the next
        commit overwrites it. The other partitions keep their committed offsets.
        """
        result: dict[TopicPartition, int] = {}
        for tp in partitions:
            path = paths.offset(self._group, tp.topic, tp.partition)
            try:
                data, _ = self._session.get(path)
            except NoNodeError:
                result[tp] = NO_OFFSET
                continue
            try:
                offset = codec.decode_offset(path, data)
            except CorruptZnode as exc:
                self.corrupt.report(path, data, exc, "treating the offset as missing "
                                    "(auto.offset.reset applies)")
                offset = NO_OFFSET
            if offset < 0:
                # A negative offset was never a consumer's commit; fetching from it would fail.
                if offset != NO_OFFSET:
                    self.corrupt.report(path, data, f"negative offset {offset}",
                                        "treating the offset as missing (auto.offset.reset "
                                        "applies)")
                offset = NO_OFFSET
            result[tp] = offset
        return result

    def checkpoint(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Remember offsets just read so that an unchanged offset is not written back."""
        with self._lock:
            self._checkpoint.update(offsets)

    def barrier(self) -> None:
        """Wait for a commit in progress: after ownership was cleared, none can write again.

        Without it a late auto-commit could write an older offset over the next owner's.
        """
        with self._lock:
            pass

    def commit(self, infos: Iterable[PartitionTopicInfo]) -> dict[TopicPartition, int]:
        """Write every changed consumed offset; returns what was written."""
        written: dict[TopicPartition, int] = {}
        with self._lock:
            for info in list(infos):
                tp = TopicPartition(info.topic, info.partition)
                offset = info.consumed_offset
                if offset < 0 or self._checkpoint.get(tp) == offset:
                    continue
                self._session.set(paths.offset(self._group, tp.topic, tp.partition),
                                  codec.encode_offset(offset))
                self._checkpoint[tp] = offset
                written[tp] = offset
        if written:
            self._metrics.add(commits=len(written))
            log.debug("[%s] committed offsets %s", self._events.consumer_id, written)
            self._events.emit("offsets_committed",
                              offsets={f"{tp.topic}/{tp.partition}": o
                                       for tp, o in sorted(written.items())})
        return written

    def commit_retrying(self, infos: Iterable[PartitionTopicInfo], retries: int
                        ) -> dict[TopicPartition, int]:
        """As :meth:`commit`: a ZooKeeper write is not retried, its error reaches the caller."""
        return self.commit(infos)

    def close(self) -> None:
        """Nothing to release: the ZooKeeper session belongs to the connector."""
