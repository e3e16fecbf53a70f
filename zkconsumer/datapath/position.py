"""Where one owned partition stands: fetched, consumed, and what the application has received.

``PartitionTopicInfo`` is shared by the fetcher (which advances the fetch offset), the stream's
iterator (which advances the consumed offset) and the committer (which reads it). The iterator
does not store the consumed offset on every ``next()``: while it is inside one of this
partition's chunks it is attached as the partition's :class:`ChunkReader`, the offset and the
counters are read through it, and it folds them back in (:meth:`PartitionTopicInfo.fold`) when
it leaves the chunk. This module knows the reader only by that protocol, so the stream builds
on it and not the other way round.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Protocol

log = logging.getLogger(__name__)


class ChunkReader(Protocol):
    """What a partition asks of the iterator inside one of its chunks."""

    def consumed_offset_in(self, info: PartitionTopicInfo) -> int | None:
        """The offset after the last message returned from ``info``'s chunk; None: none yet."""
        ...

    def in_progress(self, info: PartitionTopicInfo) -> tuple[int, int]:
        """Messages and bytes returned so far from ``info``'s chunk in progress."""
        ...


class ChunkSink(Protocol):
    """The queue a partition's chunks go to (``chunks.ChunkQueue``)."""

    name: str

    def put(self, chunk: Any, stop_event: threading.Event | None = None) -> bool: ...

    def wake_putters(self) -> None: ...

    def barrier(self) -> None: ...


class PartitionTopicInfo:
    """Fetch and consume positions of one owned partition, shared by fetcher, iterator, committer.

    ``consumed_offset`` is the next offset the application should see, which is the value to
    commit; ``fetched_offset`` is the next offset to fetch. Both start at the committed offset
    (-1 when there is none; the fetcher then resolves it by ``auto.offset.reset``).

    While an iterator is inside one of this partition's chunks (:meth:`attach`), the consumed
    offset and the counters include the part of that chunk returned so far; the iterator folds
    them into the stored values when it leaves the chunk (:meth:`fold`).
    """

    __slots__ = ("topic", "partition", "queue", "thread_id", "_consumed", "_fetched", "_hw",
                 "_messages", "_bytes", "_reader")

    def __init__(self, topic: str, partition: int, queue: ChunkSink, consumed_offset: int,
                 fetched_offset: int, thread_id: str) -> None:
        self.topic = topic
        self.partition = partition
        self.queue = queue
        self.thread_id = thread_id
        self._consumed = consumed_offset
        self._fetched = fetched_offset
        self._hw: int | None = None
        self._messages = 0
        self._bytes = 0
        self._reader: ChunkReader | None = None

    @property
    def consumed_offset(self) -> int:
        reader = self._reader
        if reader is not None:
            offset = reader.consumed_offset_in(self)
            if offset is not None:
                return offset
        return self._consumed

    @property
    def fetched_offset(self) -> int:
        return self._fetched

    @property
    def high_watermark(self) -> int | None:
        """The partition's high watermark as the last fetch response reported it."""
        return self._hw

    @high_watermark.setter
    def high_watermark(self, value: int | None) -> None:
        self._hw = value

    @property
    def lag(self) -> int | None:
        """Messages the application has not received yet: ``max(0, hw - consumed_offset)``."""
        hw, consumed = self._hw, self.consumed_offset
        if hw is None or consumed < 0:
            return None
        return max(0, hw - consumed)

    @property
    def messages_consumed(self) -> int:
        reader = self._reader
        return self._messages + (reader.in_progress(self)[0] if reader is not None else 0)

    @property
    def bytes_consumed(self) -> int:
        reader = self._reader
        return self._bytes + (reader.in_progress(self)[1] if reader is not None else 0)

    def attach(self, reader: ChunkReader) -> None:
        """An iterator starts returning one of this partition's chunks."""
        self._reader = reader

    def fold(self, reader: ChunkReader, next_offset: int | None, count: int,
             nbytes: int) -> None:
        """``reader`` leaves this partition's chunk having returned ``count`` messages.

        The consumed offset moves to ``next_offset`` only if the reader is still attached: a
        :meth:`reset_consume_offset` meanwhile detached it, and the reset wins.
        """
        if self._reader is reader:
            if next_offset is not None:
                self._consumed = next_offset
            self._reader = None
        self._messages += count
        self._bytes += nbytes

    def reset_consume_offset(self, offset: int) -> None:
        """Set the consumed offset; the rest of a chunk in progress no longer moves it."""
        self._reader = None
        self._consumed = offset

    def reset_fetch_offset(self, offset: int) -> None:
        self._fetched = offset

    def __repr__(self) -> str:  # the original's toString
        return (f"{self.topic}:{self.partition}: fetched offset = {self._fetched}: "
                f"consumed offset = {self.consumed_offset}")
