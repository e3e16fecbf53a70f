"""The sticky assignor's movement log (Java's ``PartitionMovements``), kept apart because it
reproduces one more Java detail: which element ``HashSet.iterator().next()`` returns.

When the general path wants to move a partition from A to B while an earlier move of the same
topic went from B to A, it undoes that earlier move instead, so partitions do not criss-cross
between two members. Example: p3 moved B -> A earlier; moving p5 from A to B now moves p3 back.
"""

from __future__ import annotations

from ._java import hashmap_bucket, hashmap_capacity, topic_partition_hash
from .base import TopicPartition


class _MovedSet:
    """The partitions moved between one pair of members, iterated as a Java ``HashSet`` would.

    Java picks ``set.iterator().next()`` when it undoes a move; that element is the one in the
    lowest hash bucket, the earliest added among those sharing it.
    """

    __slots__ = ("_added", "_next", "_capacity")

    def __init__(self) -> None:
        self._added: dict[TopicPartition, int] = {}
        self._next = 0
        self._capacity = hashmap_capacity(0)

    def add(self, tp: TopicPartition) -> None:
        if tp not in self._added:
            self._added[tp] = self._next
            self._next += 1
            self._capacity = max(self._capacity, hashmap_capacity(len(self._added)))

    def discard(self, tp: TopicPartition) -> None:
        self._added.pop(tp, None)

    def __bool__(self) -> bool:
        return bool(self._added)

    def first(self) -> TopicPartition:
        return min(self._added, key=lambda tp: (
            hashmap_bucket(topic_partition_hash(tp.topic, tp.partition), self._capacity),
            self._added[tp]))


class PartitionMovements:
    """Java's ``PartitionMovements``: where each moved partition came from, per topic and pair.

    It lets a move be replaced by the undo of an earlier move in the opposite direction, so that
    a partition does not travel A -> B while another of the same topic travels B -> A.
    """

    def __init__(self) -> None:
        self._by_topic: dict[str, dict[tuple[str, str], _MovedSet]] = {}
        self._moves: dict[TopicPartition, tuple[str, str]] = {}

    def _remove_record(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self._moves.pop(tp)
        topic_moves = self._by_topic[tp.topic]
        moved = topic_moves[pair]
        moved.discard(tp)
        if not moved:
            del topic_moves[pair]
        if not topic_moves:
            del self._by_topic[tp.topic]
        return pair

    def _add_record(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self._moves[tp] = pair
        self._by_topic.setdefault(tp.topic, {}).setdefault(pair, _MovedSet()).add(tp)

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self._moves:
            source, _ = self._remove_record(tp)
            if source != new:
                self._add_record(tp, (source, new))
        else:
            self._add_record(tp, (old, new))

    def partition_to_move(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        topic_moves = self._by_topic.get(tp.topic)
        if topic_moves is None:
            return tp
        if tp in self._moves:
            old = self._moves[tp][0]
        reverse = topic_moves.get((new, old))
        return tp if reverse is None else reverse.first()
