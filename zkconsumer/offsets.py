"""Offsets in ZooKeeper: read committed offsets, commit only changed ones, the auto-commit thread.

The original (spec detailed §5.6, ZooKeeper storage):

* ``/consumers/<g>/offsets/<t>/<p>`` holds the next offset to consume as decimal text; a missing
  node means "no offset" (-1), and ``auto.offset.reset`` then decides where to start;
* ``commitOffsets`` writes only partitions whose consumed offset differs from the last value
  read or written (``checkpointedZkOffsets``, KAFKA-987), with setData and parents created on
  NoNode; ZooKeeper errors propagate to the caller;
* ``auto.commit.enable`` runs a scheduler with initial delay = period = ``auto.commit.interval.ms``
  whose failures are logged (``exception during autoCommit``) and do not stop it. A commit the
  store refuses on purpose (:class:`OffsetCommitRefused`: the leader mode's fenced commit of a
  member whose session expired) is expected there and logged as one warning line, without the
  traceback an unexpected failure gets.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping

from kazoo.exceptions import NoNodeError

from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.errors import CorruptZnode, ZkConsumerError
from zkconsumer.events import EventBus
from zkconsumer.identity import TopicPartition
from zkconsumer.metrics import RebalanceMetrics
from zkconsumer.zk import codec, paths
from zkconsumer.zk.corrupt import CorruptionReporter
from zkconsumer.zk.session import ZkSession

log = logging.getLogger(__name__)

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


def autocommit_failure_line(consumer_id: str, exc: BaseException) -> str | None:
    """The one warning line for an expected refusal of an auto-commit; None for any other
    failure (logged with its traceback)."""
    if isinstance(exc, OffsetCommitRefused):
        return (f"[{consumer_id}] autoCommit refused for group {exc.group!r}, partitions "
                f"{exc.partitions}: {exc.reason} (expected after a session expiry)")
    return None


class OffsetStore:
    """Committed offsets of one group; thread-safe (user, rebalancer and auto-commit threads)."""

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

    def close(self) -> None:
        """Nothing to release: the ZooKeeper session belongs to the connector."""


class AutoCommitter:
    """The ``kafka-consumer-autocommit`` task: commit every ``auto.commit.interval.ms``."""

    def __init__(self, name: str, interval_ms: int, commit: Callable[[], object],
                 events: EventBus) -> None:
        self._interval_s = interval_ms / 1000.0
        self._commit = commit
        self._events = events
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("auto-commit thread %s did not stop within %.1f s",
                            self._thread.name, timeout)

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                self._commit()
            except Exception as exc:
                if self._stop.is_set():
                    break
                line = autocommit_failure_line(self._events.consumer_id, exc)
                if line is not None:
                    log.warning("%s", line)
                else:
                    log.exception("[%s] exception during autoCommit", self._events.consumer_id)
                self._events.emit("error", where="auto_commit", error=repr(exc))
