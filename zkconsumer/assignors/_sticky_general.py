"""The sticky assignor's general path, for members whose subscriptions differ.

Java's ``GeneralAssignmentBuilder`` (Kafka 3.6+, no racks), step by step:

1. Keep every owned partition whose member still subscribes to its topic.
2. Give each unassigned partition (topics with the fewest subscribers first) to the subscriber
   with the fewest partitions, ties to the smaller member id.
3. Set aside topics with a single subscriber and members that cannot change.
4. Repeatedly walk the partitions and move one from its owner to a fellow subscriber holding two
   or more fewer, preferring to hand it back to its previous owner (an older generation's claim)
   and, via the movement log, to undo an earlier move rather than add a new one, until no such
   move exists.
5. If the moves did not lower the balance score (the sum of pairwise size differences), undo
   them all.

Java rescans every member and partition to decide whether another move is needed and which
member is least loaded. Here those answers come from per-topic heaps keyed by assignment size
(lazily invalidated) and a set of topics whose most- and least-loaded subscribers are two or
more apart, refreshed only for the topics of members whose size changed. The decisions are the
same; a group of a thousand members no longer costs a thousand scans per move.

Example (Java's ``testMultipleConsumersMixedTopicSubscriptions``): t1 has 3 partitions, t2 two;
C1 and C3 subscribe t1, C2 both::

    C1: t1p0, t1p2    C2: t2p0, t2p1    C3: t1p1
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Mapping
from typing import NamedTuple

from ._java import java_order_key
from ._sticky_movements import PartitionMovements
from .base import Subscription, TopicPartition

log = logging.getLogger(__name__)

_DEFAULT_GENERATION = -1


class _PreviousOwner(NamedTuple):
    member: str
    generation: int


class _LoadIndex:
    """Assignment sizes, indexed for the two questions the algorithm keeps asking.

    ``least_loaded(topic)``: the active subscriber of ``topic`` with the fewest partitions,
    ties to the smaller member id (Java walks a ``TreeSet`` ordered that way).
    ``is_balanced()``: no active member could take a partition from a fellow subscriber of the
    partition's topic holding two or more partitions more than it.
    """

    def __init__(self, rank: dict[str, int], topics_of: dict[str, list[str]]) -> None:
        self._rank = rank
        self._topics_of = topics_of
        self.size: dict[str, int] = dict.fromkeys(rank, 0)
        self._active: set[str] = set(rank)
        self._subscribers: dict[str, list[tuple[int, int, str]]] = {}
        self._balancing = False
        self._owned_in_topic: dict[str, dict[str, int]] = {}
        self._owners: dict[str, list[tuple[int, int, str]]] = {}
        self._histogram: dict[int, int] = {}
        self._lowest = 0
        self._highest = 0
        self._dirty: set[str] = set()
        self._violating: set[str] = set()
        self._tracked_topics: set[str] = set()

    def rebuild(self, assignment: Mapping[str, set[TopicPartition]], active: set[str],
                consumers_of: Mapping[str, list[str]], tracked_topics: set[str] | None) -> None:
        """Reset the index; with ``tracked_topics`` set, also track balance over those topics."""
        self._active = set(active)
        for member, tps in assignment.items():
            self.size[member] = len(tps)
        self._subscribers = {
            topic: [(self.size[m], self._rank[m], m) for m in members if m in self._active]
            for topic, members in consumers_of.items()
        }
        for heap in self._subscribers.values():
            heapq.heapify(heap)
        self._balancing = tracked_topics is not None
        if tracked_topics is None:
            return
        self._tracked_topics = tracked_topics
        self._owned_in_topic = {topic: {} for topic in tracked_topics}
        for member in self._active:
            for tp in assignment[member]:
                owned = self._owned_in_topic.get(tp.topic)
                if owned is not None:
                    owned[member] = owned.get(member, 0) + 1
        self._owners = {
            topic: [(-self.size[m], self._rank[m], m) for m in owned]
            for topic, owned in self._owned_in_topic.items()
        }
        for heap in self._owners.values():
            heapq.heapify(heap)
        self._histogram = {}
        for member in self._active:
            self._histogram[self.size[member]] = self._histogram.get(self.size[member], 0) + 1
        self._lowest = min(self._histogram, default=0)
        self._highest = max(self._histogram, default=0)
        self._dirty = set(tracked_topics)
        self._violating = set()

    # Heap entries go stale when sizes change. Each active member keeps at least one entry
    # per subscribed topic whose size is <= its current size (in the owner heaps: >=); a stale
    # entry that reaches the top is re-keyed to the current size. So a member that grows needs
    # no push into its subscriber heaps and one that shrinks none into its owner heaps, and
    # handing out unassigned partitions (sizes only grow) pushes nothing at all.

    def least_loaded(self, topic: str) -> str | None:
        heap = self._subscribers.get(topic)
        while heap:
            size, rank, member = heap[0]
            if member not in self._active:
                heapq.heappop(heap)
            elif self.size[member] == size:
                return member
            else:
                heapq.heapreplace(heap, (self.size[member], rank, member))
        return None

    def _most_loaded_owner_size(self, topic: str) -> int:
        heap = self._owners[topic]
        owned = self._owned_in_topic[topic]
        while heap:
            negative_size, rank, member = heap[0]
            if owned.get(member, 0) == 0:
                heapq.heappop(heap)
            elif self.size[member] == -negative_size:
                return -negative_size
            else:
                heapq.heapreplace(heap, (-self.size[member], rank, member))
        return -1

    def _resized(self, member: str, grew: bool) -> None:
        size, rank = self.size[member], self._rank[member]
        if not grew:
            entry = (size, rank, member)
            for topic in self._topics_of[member]:
                heapq.heappush(self._subscribers[topic], entry)
        if self._balancing:
            for topic in self._topics_of[member]:
                if topic in self._tracked_topics:
                    if grew and self._owned_in_topic[topic].get(member, 0) > 0:
                        heapq.heappush(self._owners[topic], (-size, rank, member))
                    self._dirty.add(topic)

    def add(self, member: str) -> None:
        """One more partition for ``member`` (before balance tracking starts)."""
        self.size[member] += 1
        self._resized(member, grew=True)

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        """``tp`` moved from ``old`` to ``new`` (during balance tracking)."""
        owned = self._owned_in_topic.get(tp.topic)
        if owned is not None:
            owned[old] -= 1
            owned[new] = owned.get(new, 0) + 1
        for member, delta in ((old, -1), (new, 1)):
            before = self.size[member]
            self.size[member] = before + delta
            self._histogram[before] -= 1
            self._histogram[before + delta] = self._histogram.get(before + delta, 0) + 1
            self._lowest = min(self._lowest, before + delta)
            self._highest = max(self._highest, before + delta)
        while self._histogram.get(self._lowest, 0) == 0:
            self._lowest += 1
        while self._histogram.get(self._highest, 0) == 0:
            self._highest -= 1
        self._resized(old, grew=False)
        self._resized(new, grew=True)

    def is_balanced(self) -> bool:
        if self._highest - self._lowest <= 1:
            return True
        for topic in self._dirty:
            least = self.least_loaded(topic)
            if least is not None and self._most_loaded_owner_size(topic) > self.size[least] + 1:
                self._violating.add(topic)
            else:
                self._violating.discard(topic)
        self._dirty.clear()
        return not self._violating


class _GeneralAssignment:
    """One run of the general path; build it, call :meth:`build`, throw it away."""

    def __init__(self, partitions_per_topic: Mapping[str, int],
                 subscriptions: Mapping[str, Subscription],
                 owned: Mapping[str, list[TopicPartition]],
                 order: list[str], max_generation: int) -> None:
        self._counts = partitions_per_topic
        self._subscriptions = subscriptions
        self._order = order
        self._max_generation = max_generation
        self._rank = {m: i for i, m in enumerate(sorted(order, key=java_order_key))}
        self._topics_of = {m: [t for t in subscriptions[m].topics if t in partitions_per_topic]
                           for m in order}
        self._consumers_of: dict[str, list[str]] = {t: [] for t in partitions_per_topic}
        for member in order:
            for topic in self._topics_of[member]:
                self._consumers_of[topic].append(member)
        self._owned = owned
        self.assignment: dict[str, set[TopicPartition]] = {m: set() for m in order}
        self._owner: dict[TopicPartition, str] = {}
        self._load = _LoadIndex(self._rank, self._topics_of)
        self._movements = PartitionMovements()

    def build(self) -> dict[str, set[TopicPartition]]:
        previous = self._previous_owners()
        revocation_required = self._keep_owned()
        sorted_topics = sorted(self._counts,
                               key=lambda t: (len(self._consumers_of[t]), java_order_key(t)))
        all_partitions = [TopicPartition(t, p)
                          for t in sorted_topics for p in range(self._counts[t])]
        unassigned = [tp for tp in all_partitions if tp not in self._owner]
        self._balance(previous, all_partitions, unassigned, revocation_required)
        return self.assignment

    def _previous_owners(self) -> dict[TopicPartition, _PreviousOwner]:
        """Java's ``prepopulateCurrentAssignments``: for each partition claimed by a member of
        an older generation, the newest such claim (the first seen wins a tie)."""
        previous: dict[TopicPartition, _PreviousOwner] = {}
        for member in self._order:
            sub = self._subscriptions[member]
            if sub.generation is not None and sub.generation < self._max_generation:
                generation = sub.generation
            elif sub.generation is None and self._max_generation > _DEFAULT_GENERATION:
                generation = _DEFAULT_GENERATION
            else:
                continue
            for tp in sub.owned_partitions:
                known = previous.get(tp)
                if known is None or generation > known.generation:
                    previous[tp] = _PreviousOwner(member, generation)
        return previous

    def _keep_owned(self) -> bool:
        revocation_required = False
        for member in self._order:
            topics = set(self._topics_of[member])
            for tp in self._owned.get(member, ()):
                if tp.topic not in self._counts:
                    continue
                if tp.topic not in topics:
                    revocation_required = True
                    continue
                self.assignment[member].add(tp)
                self._owner[tp] = member
        return revocation_required

    def _balance(self, previous: dict[TopicPartition, _PreviousOwner],
                 all_partitions: list[TopicPartition], unassigned: list[TopicPartition],
                 revocation_required: bool) -> None:
        load = self._load
        initializing = all(not tps for tps in self.assignment.values())
        load.rebuild(self.assignment, set(self._order), self._consumers_of, None)
        for tp in unassigned:
            member = load.least_loaded(tp.topic)
            if member is None:
                continue
            self.assignment[member].add(tp)
            self._owner[tp] = member
            load.add(member)

        movable_topics = {t for t, members in self._consumers_of.items() if len(members) >= 2}
        all_partitions = [tp for tp in all_partitions if tp.topic in movable_topics]
        unassigned = [tp for tp in unassigned if tp.topic in movable_topics]
        active = {m for m in self._order if self._can_change(m, movable_topics)}
        load.rebuild(self.assignment, active, self._consumers_of, movable_topics)

        before = {m: set(self.assignment[m]) for m in active}
        if not revocation_required:
            self._reassign_until_balanced(unassigned, previous, active)
        moved = self._reassign_until_balanced(all_partitions, previous, active)
        if not initializing and moved and _balance_score(self.assignment, active) >= \
                _balance_score(before, active):
            log.debug("sticky general path: moves did not improve the balance, undoing them")
            for member, tps in before.items():
                self.assignment[member] = tps

    def _can_change(self, member: str, movable_topics: set[str]) -> bool:
        capacity = sum(self._counts[t] for t in self._topics_of[member])
        if len(self.assignment[member]) < capacity:
            return True
        return any(tp.topic in movable_topics for tp in self.assignment[member])

    def _reassign_until_balanced(self, partitions: list[TopicPartition],
                                 previous: dict[TopicPartition, _PreviousOwner],
                                 active: set[str]) -> bool:
        load = self._load
        size = load.size
        moved = False
        # Java loops until a full pass moves nothing; the bound only guards against a cycle.
        for _ in range(4 * len(partitions) + 16):
            modified = False
            for tp in partitions:
                if load.is_balanced():
                    break
                owner = self._owner[tp]
                back = previous.get(tp)
                # Java would also hand a partition back to a previous owner that no longer
                # subscribes to its topic, or fail on one that cannot change; neither is done here.
                if back is not None and back.member in active and \
                        tp.topic in self._subscriptions[back.member].topics and \
                        size[owner] > size[back.member] + 1:
                    self._reassign(tp, back.member)
                    moved = modified = True
                    continue
                least = load.least_loaded(tp.topic)
                if least is not None and size[owner] > size[least] + 1:
                    self._reassign(tp, least)
                    moved = modified = True
            if not modified:
                return moved
        log.warning("sticky general path: stopped moving partitions after too many passes")
        return moved

    def _reassign(self, tp: TopicPartition, new: str) -> None:
        target = self._movements.partition_to_move(tp, self._owner[tp], new)
        old = self._owner[target]
        self._movements.move(target, old, new)
        self.assignment[old].discard(target)
        self.assignment[new].add(target)
        self._owner[target] = new
        self._load.move(target, old, new)


def _balance_score(assignment: Mapping[str, set[TopicPartition]], members: set[str]) -> int:
    """Sum of ``|size(a) - size(b)|`` over all pairs of ``members``, in O(n log n)."""
    sizes = sorted(len(assignment[m]) for m in members)
    n = len(sizes)
    return sum(s * (2 * i - n + 1) for i, s in enumerate(sizes))


def general_assign(
    partitions_per_topic: Mapping[str, int],
    subscriptions: Mapping[str, Subscription],
    owned: Mapping[str, list[TopicPartition]],
    order: list[str],
    max_generation: int,
) -> dict[str, set[TopicPartition]]:
    """Sticky assignment for members whose subscriptions differ.

    ``owned`` is each member's claim after cross-member conflicts were settled, ``order`` the
    members in Java ``HashMap`` order, ``max_generation`` the newest generation any member
    reported.
    """
    return _GeneralAssignment(partitions_per_topic, subscriptions, owned, order,
                              max_generation).build()
