"""The few JVM rules the assignors must reproduce to hand out the same partitions as Kafka.

Kafka's assignors are deterministic only up to Java's own ordering and hashing rules, so
copying the algorithm is not enough to get the same answer:

* ``String.compareTo`` compares UTF-16 code units. Python compares code points; the two orders
  differ only for characters outside the Basic Multilingual Plane, but they do differ.
* ``String.hashCode`` is ``h = 31*h + unit`` over UTF-16 code units, wrapped to a signed 32-bit
  int. The legacy round-robin assignor sorts partitions by it.
* ``java.util.HashMap`` iterates bucket by bucket. The sticky assignor walks its members in
  that order, and the order decides who keeps a surplus partition when quotas are tight.

Example::

    >>> java_string_hash("[t,0]")
    87540032
    >>> sorted(["c-2", "c-10"], key=java_order_key)
    ['c-10', 'c-2']
"""

from __future__ import annotations

from collections.abc import Iterable

from zkconsumer.identity import java_order_key, java_string_hash, to_int32

__all__ = ["hashmap_bucket", "hashmap_capacity", "hashmap_order", "java_order_key",
           "java_string_hash", "topic_partition_hash"]

_INT_MASK = 0xFFFFFFFF
_HASHMAP_DEFAULT_CAPACITY = 16


def topic_partition_hash(topic: str, partition: int) -> int:
    """Kafka's ``TopicPartition.hashCode()``: ``31 * (31 + partition) + topic.hashCode()``."""
    return to_int32(31 * (31 + partition) + java_string_hash(topic))


def hashmap_bucket(hash_code: int, capacity: int) -> int:
    """The bucket ``java.util.HashMap`` puts a key in: the hash spread by ``h ^ (h >>> 16)``."""
    h = hash_code & _INT_MASK
    return (h ^ (h >> 16)) & (capacity - 1)


def hashmap_capacity(size: int) -> int:
    """Table size of a default ``HashMap``/``HashSet`` that has grown to ``size`` entries.

    The table doubles once the size exceeds three quarters of the capacity and never shrinks.
    """
    capacity = _HASHMAP_DEFAULT_CAPACITY
    while size > capacity * 3 // 4:
        capacity *= 2
    return capacity


def hashmap_order(keys: Iterable[str]) -> list[str]:
    """The order in which a ``HashMap<String, V>`` holding ``keys`` iterates them.

    Keys that share a bucket come out in insertion order in Java, which here means the order
    in which members joined the group: unknowable to an assignor, so ties are broken by Java
    string order to keep the result independent of how the caller built its dict. (Buckets that
    Java turns into trees, eight or more colliding keys, are treated the same way.)
    """
    key_list = list(keys)
    capacity = hashmap_capacity(len(key_list))
    return sorted(
        key_list,
        key=lambda k: (hashmap_bucket(java_string_hash(k), capacity), java_order_key(k)),
    )
