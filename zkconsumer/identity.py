"""The identities every layer speaks of: topic-partitions, consumer and thread ids, Java hashes.

One home for each, so that the connector, the assignors, the data path, the lab and the
simulator agree on what a thread id is and on the hash that orders partitions, exactly as the
original (Scala ``TopicAndPartition``, ``ConsumerThreadId``, Java ``String.hashCode``) did.
Pure functions and values; this module imports nothing else from the package.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import NamedTuple

_INT_MASK = 0xFFFFFFFF


class TopicPartition(NamedTuple):
    """One partition of one topic; sorts by topic, then partition number.

    A tuple underneath, so ``("t", 0)`` and ``TopicPartition("t", 0)`` are the same key.
    """

    topic: str
    partition: int


def thread_id(consumer_id: str, n: int) -> str:
    """``ConsumerThreadId.toString``: ``<consumer id>-<n>``."""
    return f"{consumer_id}-{n}"


def consumer_id_of(thread_id: str) -> str:
    """The consumer id of a thread id ``"<consumerId>-<n>"``: everything before the last '-'."""
    head, sep, _ = thread_id.rpartition("-")
    return head if sep else thread_id


def thread_number(thread_id: str) -> int:
    """The stream number of a thread id (the part after the last ``-``)."""
    _, sep, number = thread_id.rpartition("-")
    if not sep or not number.isdigit():
        raise ValueError(f"not a thread id '<consumer id>-<n>': {thread_id!r}")
    return int(number)


def is_thread_id(value: str) -> bool:
    """Whether ``value`` has the shape ``<something>-<n>`` (the name itself is not checked)."""
    head, sep, number = value.rpartition("-")
    return bool(sep and head and number.isdigit())


def consumer_ids_of(thread_ids: Iterable[str]) -> list[str]:
    """Consumer ids behind thread ids, sorted and unique."""
    return sorted({consumer_id_of(tid) for tid in thread_ids})


def java_order_key(s: str) -> bytes:
    """A sort key that orders strings exactly as Java's ``String.compareTo`` does.

    Big-endian UTF-16 bytes compare byte by byte in the same order as the 16-bit code units
    they encode, and a proper prefix sorts first, as in Java.
    """
    return s.encode("utf-16-be", "surrogatepass")


def utf16_units(s: str) -> tuple[int, ...]:
    """The UTF-16 code units of ``s``, as Java's ``char``s."""
    data = s.encode("utf-16-be", "surrogatepass")
    return struct.unpack(f">{len(data) // 2}H", data)


def to_int32(value: int) -> int:
    """``value`` wrapped to a Java ``int`` (signed 32-bit overflow)."""
    value &= _INT_MASK
    return value - (1 << 32) if value & 0x80000000 else value


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode()``: a signed 32-bit int (``"[t,0]"`` -> 87540032)."""
    h = 0
    for unit in utf16_units(s):
        h = (31 * h + unit) & _INT_MASK
    return to_int32(h)
