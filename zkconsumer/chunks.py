"""Chunks and the bounded queues that carry them from fetcher threads to streams.

The original's ``FetchedDataChunk`` and the ``LinkedBlockingQueue`` of capacity
``queued.max.message.chunks`` per (topic, consumer thread), plus the message record itself.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from confluent_kafka import TIMESTAMP_NOT_AVAILABLE, Message

# ZKCONSUMER_REQUIRE_SPEEDUPS=1 turns a missing C extension into an error at import, so a build
# without it cannot pass for one with it (the test command sets it where a C compiler exists).
REQUIRE_SPEEDUPS_ENV = "ZKCONSUMER_REQUIRE_SPEEDUPS"

try:
    from zkconsumer import _speedups
except ImportError as exc:  # built without a C compiler: the pure-Python records below
    if os.environ.get(REQUIRE_SPEEDUPS_ENV) == "1":
        raise ImportError(
            f"{REQUIRE_SPEEDUPS_ENV}=1 but the C extension zkconsumer._speedups is not built "
            f"({exc}); reinstall with a C compiler on PATH (make install) or unset "
            f"{REQUIRE_SPEEDUPS_ENV}") from exc
    _speedups = None

if TYPE_CHECKING:
    from zkconsumer.stream import PartitionTopicInfo

log = logging.getLogger(__name__)

# How often a blocked put() looks at its stop event. A stop is also signalled by wake_putters().
_PUT_POLL_S = 0.05


class _Layout(NamedTuple):
    """How a MessageAndMetadata is stored: ``source`` is the timestamp or the client's Message."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    message: bytes | None
    source: Any


_SOURCE = _Layout.source  # the C-level field getter, which ignores the overrides below


class MessageAndMetadata(_Layout):
    """One message as the application receives it (the original's ``MessageAndMetadata``).

    It behaves as the ``NamedTuple`` of ``(topic, partition, offset, key, message,
    timestamp_ms)`` it used to be: immutable, compared, hashed, ordered, iterated, indexed,
    printed and pickled as those six values. It is a tuple underneath so that the stream can
    build it with C-level ``map``/``zip`` (no Python bytecode per message, see
    ``docs/datapath.md``); the five fields are read by C-level getters. The sixth slot holds
    the client's ``confluent_kafka.Message`` the record was built from, so that the timestamp
    (``Message.timestamp()`` builds a tuple per call) is only read when someone asks for it;
    a record built by hand holds the timestamp itself. ``timestamp_ms`` is None when the
    broker sent none.
    """

    __slots__ = ()
    _fields = ("topic", "partition", "offset", "key", "message", "timestamp_ms")
    _field_defaults = {"timestamp_ms": None}
    __match_args__ = _fields

    def __new__(cls, topic: str, partition: int, offset: int, key: bytes | None,
                message: bytes | None, timestamp_ms: int | None = None) -> MessageAndMetadata:
        return _new_tuple(cls, (topic, partition, offset, key, message, timestamp_ms))

    @property
    def timestamp_ms(self) -> int | None:
        source = _SOURCE.__get__(self)
        if isinstance(source, Message):
            kind, ts = source.timestamp()
            return None if kind == TIMESTAMP_NOT_AVAILABLE or ts == -1 else ts
        return source  # type: ignore[no-any-return]

    def _values(self) -> tuple[str, int, int, bytes | None, bytes | None, int | None]:
        return (self.topic, self.partition, self.offset, self.key, self.message,
                self.timestamp_ms)

    # The tuple protocol speaks of the six public values, never of the stored source.
    def __iter__(self) -> Iterator[Any]:
        return iter(self._values())

    def __getitem__(self, index: Any) -> Any:
        return self._values()[index]

    def __contains__(self, value: object) -> bool:
        return value in self._values()

    def count(self, value: Any) -> int:
        return self._values().count(value)

    def index(self, value: Any, *args: Any) -> int:
        return self._values().index(value, *args)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MessageAndMetadata):
            return self._values() == other._values()
        if isinstance(other, tuple):
            return self._values() == other
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __lt__(self, other: object) -> bool:
        return self._values() < _as_values(other)  # type: ignore[operator]

    def __le__(self, other: object) -> bool:
        return self._values() <= _as_values(other)  # type: ignore[operator]

    def __gt__(self, other: object) -> bool:
        return self._values() > _as_values(other)  # type: ignore[operator]

    def __ge__(self, other: object) -> bool:
        return self._values() >= _as_values(other)  # type: ignore[operator]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return "MessageAndMetadata(" + ", ".join(
            f"{name}={value!r}" for name, value in zip(self._fields, self._values(),
                                                       strict=True)) + ")"

    def __reduce__(self) -> tuple[Any, ...]:
        return (MessageAndMetadata, self._values())

    def __getnewargs__(self) -> tuple[Any, ...]:
        return self._values()

    def _asdict(self) -> dict[str, Any]:
        return dict(zip(self._fields, self._values(), strict=True))

    def _replace(self, **changes: Any) -> MessageAndMetadata:
        return MessageAndMetadata(**{**self._asdict(), **changes})

    @classmethod
    def _make(cls, iterable: Iterable[Any]) -> MessageAndMetadata:
        return cls(*iterable)


def _as_values(other: object) -> object:
    return other._values() if isinstance(other, MessageAndMetadata) else other


OFFSET_OF = Message.offset  # unbound accessors of the client's Message, for C-level maps
_KEY, _VALUE = Message.key, Message.value
_new_tuple = tuple.__new__


def _py_records(info: PartitionTopicInfo, msgs: list[Message], start: int = 0
                ) -> tuple[Iterator[Message], Iterator[MessageAndMetadata]]:
    """The pure-Python :func:`records`: C-level ``map``/``zip``, no bytecode per record.

    The position is a list iterator over ``msgs`` that the record iterable advances exactly
    once per record it hands out (``zip`` pulls the offset first, from that iterator, and stops
    there once it is exhausted).
    """
    position, keys, values, sources = iter(msgs), iter(msgs), iter(msgs), iter(msgs)
    if start:
        for it in (position, keys, values, sources):
            it.__setstate__(start)  # type: ignore[attr-defined]
    return position, map(_new_tuple, itertools.repeat(MessageAndMetadata), zip(
        itertools.repeat(info.topic), itertools.repeat(info.partition), map(OFFSET_OF, position),
        map(_KEY, keys), map(_VALUE, values), sources))


def _c_records(info: PartitionTopicInfo, msgs: list[Message], start: int = 0
               ) -> tuple[Iterator[Message], Iterator[MessageAndMetadata]]:
    """:func:`records` by the C iterator, which is its own position."""
    it = _speedups.records(MessageAndMetadata, info.topic, info.partition, msgs, start,
                           OFFSET_OF, _KEY, _VALUE)
    return it, it


def speedups_enabled() -> bool:
    """Whether the C extension (``zkconsumer._speedups``) builds records and sorts batches.

    It is compiled when the package is installed, if a C compiler is there; without it, or
    with ``ZKCONSUMER_PURE_PYTHON=1`` in the environment, the pure-Python paths do the same,
    somewhat slower (see docs/datapath.md).
    """
    return _USE_C


# records(info, msgs, start=0) -> (position, records): MessageAndMetadata for msgs[start:],
# built one by one as they are taken, with no Python bytecode per record. The position is an
# iterator whose length_hint is the number of messages not returned yet and whose
# __setstate__(i) moves it to index i, so len(msgs) - length_hint(position) is the number of
# records returned so far, and moving it to the end ends the records. A record is built only
# when it is taken, so a record the application drops dies young; built ahead, a whole chunk of
# them would survive into the older garbage-collector generations and make every collection
# longer. The C iterator when it was built (and not disabled), else the same in Python.
_USE_C = _speedups is not None and not os.environ.get("ZKCONSUMER_PURE_PYTHON")
records = _c_records if _USE_C else _py_records


def value_bytes(messages: list[Message]) -> int:
    """Bytes of the values of ``messages`` (``len`` of a client Message is its value's size)."""
    return sum(map(len, messages))


class FetchedDataChunk:
    """Messages of one partition from one fetch; ``fetch_offset`` is where that fetch started.

    ``messages`` are the client's ``confluent_kafka.Message`` objects as ``consume()`` returned
    them (errors removed); the stream turns them into MessageAndMetadata as they are taken.
    """

    __slots__ = ("messages", "topic_info", "fetch_offset", "nbytes")

    def __init__(self, messages: list[Message], topic_info: PartitionTopicInfo | None,
                 fetch_offset: int, nbytes: int | None = None) -> None:
        self.messages = messages
        self.topic_info = topic_info
        self.fetch_offset = fetch_offset
        self.nbytes = value_bytes(messages) if nbytes is None else nbytes

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
            self._not_full.notify()
            return chunk

    def clear(self) -> int:
        """Drop every queued chunk (a rebalance does this); returns how many were dropped."""
        with self._lock:
            dropped = len(self._items)
            self._items.clear()
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
