"""Chunks and the bounded queues that carry them from fetcher threads to streams.

The original's ``FetchedDataChunk`` and the ``LinkedBlockingQueue`` of capacity
``queued.max.message.chunks`` per (topic, consumer thread).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque

from confluent_kafka import Message

from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.datapath.records import value_bytes

log = logging.getLogger(__name__)

# How often a blocked put() looks at its stop event. A stop is also signalled by wake_putters().
_PUT_POLL_S = 0.05


class FetchedDataChunk:
    """Messages of one partition from one fetch; ``fetch_offset`` is where that fetch started.

    ``messages`` are the client's ``confluent_kafka.Message`` objects as ``consume()`` returned
    them (errors removed); the stream turns them into MessageAndMetadata as they are taken.
    """

    __slots__ = ("messages", "topic_info", "fetch_offset", "nbytes", "oversized")

    def __init__(self, messages: list[Message], topic_info: PartitionTopicInfo | None,
                 fetch_offset: int, nbytes: int | None = None, oversized: bool = False) -> None:
        self.messages = messages
        self.topic_info = topic_info
        self.fetch_offset = fetch_offset
        self.nbytes = value_bytes(messages) if nbytes is None else nbytes
        # True: the message at fetch_offset is larger than fetch.message.max.bytes (the
        # original's chunk with no valid bytes); the stream raises MessageSizeTooLarge on it.
        self.oversized = oversized

    def __repr__(self) -> str:
        return f"FetchedDataChunk({self.topic_info!r}, fetch_offset={self.fetch_offset}, " \
               f"{len(self.messages)} messages)"


# Compared by identity, as the original's ``shutdownCommand``.
SHUTDOWN_COMMAND = FetchedDataChunk([], None, -1)


class ChunkQueue:
    """A bounded FIFO of chunks (``queued.max.message.chunks``) with a stoppable blocking put.

    ``put`` blocks while the queue is full, which stalls the fetcher thread exactly as the
    original's ``LinkedBlockingQueue.put`` did; unlike it, the wait gives up as soon as the
    caller's stop event is set, so that stopping fetchers never waits for the application.
    """

    def __init__(self, capacity: int, name: str = "") -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"queued.max.message.chunks must be >= 1, got {capacity!r}")
        self.capacity = capacity
        self.name = name
        self._items: deque[FetchedDataChunk] = deque()
        #: Value bytes of the chunks waiting, and the most ever waiting at once: with chunks
        #: bounded by fetch.message.max.bytes, at most capacity x that (the memory bound).
        self.queued_bytes = 0
        self.peak_bytes = 0
        self._lock = threading.Lock()
        self._not_empty = threading.Condition(self._lock)
        self._not_full = threading.Condition(self._lock)

    def __len__(self) -> int:
        """Chunks waiting (the original's ``FetchQueueSize`` gauge)."""
        return len(self._items)

    def put(self, chunk: FetchedDataChunk, stop_event: threading.Event | None = None) -> bool:
        """Append ``chunk``, waiting for room; False (and nothing queued) once stop_event is set.

        The stop event is checked under the queue's lock right before appending, so after
        ``stop_event.set()`` followed by :meth:`barrier` no put can add anything.
        """
        with self._lock:
            while len(self._items) >= self.capacity:
                if stop_event is not None and stop_event.is_set():
                    return False
                self._not_full.wait(_PUT_POLL_S)
            if stop_event is not None and stop_event.is_set():
                return False
            self._items.append(chunk)
            self.queued_bytes += chunk.nbytes
            self.peak_bytes = max(self.peak_bytes, self.queued_bytes)
            self._not_empty.notify()
            return True

    def get(self, timeout: float | None = None) -> FetchedDataChunk | None:
        """The oldest chunk; None if none came within ``timeout`` seconds (None: wait forever)."""
        with self._lock:
            if not self._items:
                if timeout is None:
                    while not self._items:
                        self._not_empty.wait()
                else:
                    deadline = time.monotonic() + timeout
                    while not self._items:
                        remaining = deadline - time.monotonic()
                        if remaining <= 0:
                            return None
                        self._not_empty.wait(remaining)
            chunk = self._items.popleft()
            self.queued_bytes -= chunk.nbytes
            self._not_full.notify()
            return chunk

    def clear(self) -> int:
        """Drop every queued chunk (a rebalance does this); returns how many were dropped."""
        with self._lock:
            dropped = len(self._items)
            self._items.clear()
            self.queued_bytes = 0
            self._not_full.notify_all()
        if dropped:
            log.debug("cleared %d chunks from queue %s", dropped, self.name)
        return dropped

    def put_shutdown(self) -> None:
        """Queue the shutdown sentinel, ignoring the bound (it must never block a shutdown).

        Chunks already queued are still delivered first; call :meth:`clear` before, as the
        original's ``sendShutdownToAllQueues`` did, to end the stream at once.
        """
        with self._lock:
            self._items.append(SHUTDOWN_COMMAND)
            self._not_empty.notify_all()

    def wake_putters(self) -> None:
        """Let blocked puts re-check their stop event now instead of at the next poll."""
        with self._lock:
            self._not_full.notify_all()

    def barrier(self) -> None:
        """Return once no put is in progress (see :meth:`put`)."""
        with self._lock:
            pass

    def __repr__(self) -> str:
        return f"ChunkQueue({self.name!r}, {len(self._items)}/{self.capacity})"
