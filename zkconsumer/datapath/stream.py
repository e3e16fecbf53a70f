"""Streams: bounded chunk queues between fetcher threads and the application's iterators.

This is the legacy consumer's hand-off (``PartitionTopicInfo``, ``FetchedDataChunk``,
``KafkaStream``, ``ConsumerIterator``): a fetcher thread puts one chunk of messages per partition
per fetch on the bounded queue of the (topic, consumer thread) that owns the partition; the
application iterates a ``KafkaStream`` over that queue. A full queue blocks the fetcher
(back-pressure); the offset that is committed is advanced by ``next()`` only, so a message is
counted as consumed once the application has received it and never before (at-least-once).

The iterator is the hot path of the whole consumer, so it runs no Python code per message: it
is an ``itertools.chain`` over per-chunk record iterables that build each ``MessageAndMetadata``
from the client's message in C as it is taken (``records.records``), and Python runs once per
chunk to take the next one from the queue. The consumed offset of the chunk in progress is
therefore not stored on every ``next()`` but derived, when someone asks, from the position of
the chunk's list iterator, which is exactly the offset after the last message ``next()``
returned.
"""

from __future__ import annotations

import enum
import itertools
import logging
from bisect import bisect_left
from operator import length_hint
from typing import NamedTuple

from confluent_kafka import Message

from zkconsumer.datapath.chunks import SHUTDOWN_COMMAND, ChunkQueue
from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.datapath.records import OFFSET_OF, MessageAndMetadata, records, value_bytes
from zkconsumer.errors import ConsumerTimeoutException, MessageSizeTooLargeException

log = logging.getLogger(__name__)


class IteratorState(enum.Enum):
    """The original's ``IteratorTemplate`` states (FAILED is not needed: errors leave NOT_READY)."""

    NOT_READY = "not_ready"  # no message at hand: the next call waits for a chunk
    READY = "ready"  # a message is at hand (in the chunk in progress or one taken ahead)
    DONE = "done"  # the shutdown sentinel was seen: iteration has ended for good


class _Current(NamedTuple):
    """The chunk being iterated: ``it`` walks ``msgs``; ``start`` is where it began."""

    info: PartitionTopicInfo
    msgs: list[Message]
    it: object  # the position of the records the chain reads (see records.records)
    start: int
    nbytes: int


class _Reader:
    """Per-chunk logic of one ConsumerIterator; the chain calls it only between chunks.

    ``chunks()`` is the chain's source. When the chunk in progress is exhausted, the chain asks
    the source for the next iterable: the next chunk's list iterator if one was taken ahead,
    else a ``_Waiter`` whose ``__next__`` takes a chunk from the queue. The waiter must do the
    waiting, not the source: ``itertools.chain`` drops its source for good when the source
    raises, but keeps an iterable that raises, so a ConsumerTimeoutException leaves the
    iterator usable.
    """

    def __init__(self, queue: ChunkQueue, consumer_timeout_ms: int) -> None:
        self.queue = queue
        self.consumer_timeout_ms = consumer_timeout_ms
        self.timeout_s = None if consumer_timeout_ms < 0 else consumer_timeout_ms / 1000.0
        self.cur: _Current | None = None
        self.ahead: tuple[PartitionTopicInfo, list[Message], int, int] | None = None
        self.done = False
        self.waiter = _Waiter(self)

    # --- the chain's source ------------------------------------------------------------------

    def __iter__(self) -> _Reader:
        return self

    def __next__(self) -> object:
        self.finish(self.cur)
        if self.ahead is not None:
            return self.activate()
        if self.done:
            raise StopIteration
        return self.waiter

    # --- per chunk ------------------------------------------------------------------------------

    def take(self) -> None:
        """Wait for a chunk with something not consumed yet (or the shutdown sentinel)."""
        while True:
            chunk = self.queue.get(self.timeout_s)
            if chunk is None:
                raise ConsumerTimeoutException(
                    f"no message within consumer.timeout.ms={self.consumer_timeout_ms} "
                    f"on queue {self.queue.name!r}")
            if chunk is SHUTDOWN_COMMAND:
                log.debug("%s: shutdown command received, the stream ends", self.queue.name)
                self.done = True
                return
            info, msgs = chunk.topic_info, chunk.messages
            assert info is not None
            consumed = info.consumed_offset
            if consumed < chunk.fetch_offset:
                log.error("consumed offset: %d doesn't match fetch offset: %d for %r;\n"
                          " Consumer may lose data", consumed, chunk.fetch_offset, info)
                info.reset_consume_offset(chunk.fetch_offset)
                consumed = chunk.fetch_offset
            if chunk.oversized:  # the original's chunk without valid bytes
                raise MessageSizeTooLargeException(
                    "Found a message larger than the maximum fetch size of this consumer on "
                    f"topic {info.topic} partition {info.partition} at fetch offset "
                    f"{chunk.fetch_offset}. Increase the fetch size "
                    f"(fetch.message.max.bytes), or decrease the maximum message size the "
                    "broker will allow.")
            # Messages below the consumed offset were returned before (a redelivery after a
            # reset or a rebalance): skip them. Unlike the original, a chunk's last message is
            # skipped too when it is old, instead of being returned and moving the offset back.
            start = 0
            if msgs and OFFSET_OF(msgs[0]) < consumed:
                start = bisect_left(msgs, consumed, key=OFFSET_OF)
            if start < len(msgs):
                self.ahead = (info, msgs, start, chunk.nbytes)
                return

    def activate(self) -> object:
        assert self.ahead is not None
        info, msgs, start, nbytes = self.ahead
        self.ahead = None
        position, recs = records(info.topic, info.partition, msgs, start)
        self.cur = _Current(info, msgs, position, start, nbytes)
        info.attach(self)
        return recs

    def consumed_offset_in(self, info: PartitionTopicInfo) -> int | None:
        """The offset after the last message returned from ``info``'s chunk in progress."""
        cur = self.cur
        if cur is not None and cur.info is info:
            returned = len(cur.msgs) - length_hint(cur.it)
            if returned > cur.start:
                return OFFSET_OF(cur.msgs[returned - 1]) + 1  # type: ignore[no-any-return]
        return None

    def in_progress(self, info: PartitionTopicInfo) -> tuple[int, int]:
        """Messages and bytes returned so far from the chunk in progress, if it is ``info``'s."""
        cur = self.cur
        if cur is None or cur.info is not info:
            return 0, 0
        return self._returned(cur, len(cur.msgs) - length_hint(cur.it))

    @staticmethod
    def _returned(cur: _Current, end: int) -> tuple[int, int]:
        if end <= cur.start:
            return 0, 0
        if cur.start == 0 and end == len(cur.msgs):
            return end, cur.nbytes
        return end - cur.start, value_bytes(cur.msgs[cur.start:end])

    def finish(self, cur: _Current | None, end: int | None = None) -> None:
        """Fold the chunk's returned part into its partition's offset and counters."""
        if cur is None or self.cur is not cur:
            return
        self.cur = None
        info = cur.info
        if end is None:
            end = len(cur.msgs) - length_hint(cur.it)
        count, nbytes = self._returned(cur, end)
        info.fold(self, OFFSET_OF(cur.msgs[end - 1]) + 1 if count else None, count, nbytes)


class _Waiter:
    """The chain's iterable while no chunk is at hand (see ``_Reader``); it never yields."""

    def __init__(self, reader: _Reader) -> None:
        self.reader = reader

    def __iter__(self) -> _Waiter:
        return self

    def __next__(self) -> MessageAndMetadata:
        reader = self.reader
        if reader.ahead is None and not reader.done:
            reader.take()  # ConsumerTimeoutException propagates; the chain keeps this waiter
        raise StopIteration


class ConsumerIterator(itertools.chain):  # type: ignore[type-arg]
    """Iterates one ChunkQueue; ``next()`` advances the partition's consumed offset.

    Semantics of the original ``ConsumerIterator``: messages with an offset below the
    partition's consumed offset are skipped; a new chunk whose fetch offset is past the
    consumed offset logs "Consumer may lose data" and moves the consumed offset up;
    ``consumer.timeout.ms`` >= 0 raises ConsumerTimeoutException and the iterator stays usable;
    the shutdown sentinel ends it for good. Only one thread may iterate it.
    """

    _reader: _Reader

    def __new__(cls, queue: ChunkQueue, consumer_timeout_ms: int,
                client_id: str = "") -> ConsumerIterator:
        reader = _Reader(queue, consumer_timeout_ms)
        self = cls.from_iterable(reader)
        self._reader = reader
        self.queue = queue
        self.consumer_timeout_ms = consumer_timeout_ms
        self.client_id = client_id
        return self

    def __init__(self, queue: ChunkQueue, consumer_timeout_ms: int, client_id: str = "") -> None:
        pass  # everything happens in __new__ (from_iterable bypasses __init__)

    @property
    def state(self) -> IteratorState:
        reader = self._reader
        cur = reader.cur
        if reader.ahead is not None or (cur is not None and length_hint(cur.it) > 0):
            return IteratorState.READY
        return IteratorState.DONE if reader.done else IteratorState.NOT_READY

    def has_next(self) -> bool:
        """Whether ``next()`` will return a message (the original's ``hasNext``).

        It may block, or raise ConsumerTimeoutException, while waiting for a chunk. The
        consumed offset does not move until ``next()`` returns the message.
        """
        reader = self._reader
        cur = reader.cur
        if cur is not None and length_hint(cur.it) > 0:
            return True
        if reader.ahead is None and not reader.done:
            reader.take()
        return reader.ahead is not None

    def clear_current_chunk(self) -> None:
        """Drop the rest of the chunk being iterated (a rebalance calls this via the stream).

        The returned part of the chunk is folded into the consumed offset first, so nothing
        returned is lost; a message the iterating thread returns while this runs may not be
        counted, and is then delivered again after the rebalance (at-least-once).
        """
        reader = self._reader
        reader.ahead = None
        cur = reader.cur
        if cur is not None:
            remaining = length_hint(cur.it)
            cur.it.__setstate__(len(cur.msgs))  # type: ignore[attr-defined]
            reader.finish(cur, len(cur.msgs) - remaining)


class KafkaStream:
    """An iterable over one queue; ``iter()`` always returns the same ConsumerIterator."""

    def __init__(self, queue: ChunkQueue, consumer_timeout_ms: int, client_id: str = "") -> None:
        self.queue = queue
        self.client_id = client_id
        self._iterator = ConsumerIterator(queue, consumer_timeout_ms, client_id)

    def __iter__(self) -> ConsumerIterator:
        return self._iterator

    def iterator(self) -> ConsumerIterator:
        return self._iterator

    def clear(self) -> None:
        """Drop the chunk being iterated, so that messages of a revoked partition stop at once."""
        self._iterator.clear_current_chunk()

    def __repr__(self) -> str:
        return f"KafkaStream({self.queue.name!r}, client_id={self.client_id!r})"
