"""The message record the application receives, and how a chunk's records are built.

The bottom of the data path: ``MessageAndMetadata`` and :func:`records`, which turns the client's
messages of one partition into records as they are taken (in C when ``_speedups`` was built).
It knows nothing of partitions' positions, queues or streams, which all build on it.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Iterable, Iterator
from types import ModuleType
from typing import Any, NamedTuple

from confluent_kafka import TIMESTAMP_NOT_AVAILABLE, Message

# ZKCONSUMER_REQUIRE_SPEEDUPS=1 turns a missing C extension into an error at import, so a build
# without it cannot pass for one with it (the test command sets it where a C compiler exists).
REQUIRE_SPEEDUPS_ENV = "ZKCONSUMER_REQUIRE_SPEEDUPS"

speedups: ModuleType | None
try:
    from zkconsumer.datapath import _speedups as speedups
except ImportError as exc:  # built without a C compiler: the pure-Python records below
    if os.environ.get(REQUIRE_SPEEDUPS_ENV) == "1":
        raise ImportError(
            f"{REQUIRE_SPEEDUPS_ENV}=1 but the C extension zkconsumer.datapath._speedups is "
            f"not built ({exc}); reinstall with a C compiler on PATH (make install) or unset "
            f"{REQUIRE_SPEEDUPS_ENV}") from exc
    speedups = None

log = logging.getLogger(__name__)


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
            return self._values() == MessageAndMetadata._values(other)
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
    return MessageAndMetadata._values(other) if isinstance(other, MessageAndMetadata) else other


OFFSET_OF = Message.offset  # unbound accessors of the client's Message, for C-level maps
KEY_OF, VALUE_OF = Message.key, Message.value
_new_tuple = tuple.__new__


def py_records(topic: str, partition: int, msgs: list[Message], start: int = 0
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
        itertools.repeat(topic), itertools.repeat(partition), map(OFFSET_OF, position),
        map(KEY_OF, keys), map(VALUE_OF, values), sources))


def c_records(topic: str, partition: int, msgs: list[Message], start: int = 0
              ) -> tuple[Iterator[Message], Iterator[MessageAndMetadata]]:
    """:func:`records` by the C iterator, which is its own position."""
    assert speedups is not None
    it = speedups.records(MessageAndMetadata, topic, partition, msgs, start,
                          OFFSET_OF, KEY_OF, VALUE_OF)
    return it, it


def speedups_enabled() -> bool:
    """Whether the C extension (``zkconsumer.datapath._speedups``) builds records and sorts batches.

    It is compiled when the package is installed, if a C compiler is there; without it, or
    with ``ZKCONSUMER_PURE_PYTHON=1`` in the environment, the pure-Python paths do the same,
    somewhat slower (see docs/datapath.md).
    """
    return _USE_C


# records(topic, partition, msgs, start=0) -> (position, records): MessageAndMetadata for
# msgs[start:],
# built one by one as they are taken, with no Python bytecode per record. The position is an
# iterator whose length_hint is the number of messages not returned yet and whose
# __setstate__(i) moves it to index i, so len(msgs) - length_hint(position) is the number of
# records returned so far, and moving it to the end ends the records. A record is built only
# when it is taken, so a record the application drops dies young; built ahead, a whole chunk of
# them would survive into the older garbage-collector generations and make every collection
# longer. The C iterator when it was built (and not disabled), else the same in Python.
_USE_C = speedups is not None and not os.environ.get("ZKCONSUMER_PURE_PYTHON")
records = c_records if _USE_C else py_records


def value_bytes(messages: list[Message]) -> int:
    """Bytes of the values of ``messages`` (``len`` of a client Message is its value's size)."""
    return sum(map(len, messages))
