"""``sticky``: balance first, then keep every owned partition the balance allows.

The algorithm of Kafka's ``AbstractStickyAssignor`` (KIP-54, KIP-341; the same for
``cooperative-sticky``, KIP-429), as shipped in Kafka 3.6 and later with no rack information.
It has two paths:

*Identical subscriptions* (:func:`_constrained_assign`): with ``P`` partitions and ``N``
members every member ends with ``P // N`` or one more. Members are visited in Java ``HashMap``
order; each keeps its owned partitions (sorted by partition number, then topic) up to its
quota, and at most ``P % N`` members may keep the larger quota. The partitions left over are
dealt round-robin to the sorted members still short of their quota. Example, one topic of 3
partitions, C1 owned p0 and p1, C2 owned p2, C3 joins::

    C1: p0    C2: p2    C3: p1          (p1 moves: C1 was over its quota of 1)

*Different subscriptions* (:mod:`._sticky_general`): keep the valid owned partitions, hand
each unassigned partition to the least-loaded member subscribed to it, then move partitions
from members with two or more above a fellow subscriber until no such move is left.

Before either path, owned partitions are checked across members (Java's
``allSubscriptionsEqual``): a partition claimed by two members stays with the one of the higher
generation; when the generations are equal neither keeps it. A member of an older generation
keeps the partitions nobody else claims (KAFKA-14639, Kafka 3.5+). Members without a
generation count as generation -1.

See https://cwiki.apache.org/confluence/display/KAFKA/KIP-54+-+Sticky+Partition+Assignment+Strategy
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ._java import hashmap_order, java_order_key
from ._sticky_general import general_assign
from .base import (
    AssignmentError,
    PartitionAssignor,
    Subscription,
    TopicPartition,
    sorted_partitions,
)

log = logging.getLogger(__name__)

DEFAULT_GENERATION = -1


@dataclass(frozen=True)
class StickyResult:
    """A sticky assignment plus what the cooperative assignor needs to withhold.

    ``transferring`` maps each partition handed to a member other than its previous owner to
    that new member. The identical-subscription path knows it as it builds the assignment; the
    general path leaves it ``None`` and :mod:`.cooperative_sticky` derives it from the owned
    partitions, as Java does.
    """

    assignment: dict[str, list[TopicPartition]]
    transferring: dict[TopicPartition, str] | None


@dataclass
class _Claims:
    """Owned partitions after resolving members that claim the same partition."""

    all_subscriptions_equal: bool
    owned: dict[str, dict[TopicPartition, None]]  # insertion-ordered set per member
    claimed_by_several: set[TopicPartition] = field(default_factory=set)
    max_generation: int = DEFAULT_GENERATION


def _generation(sub: Subscription) -> int:
    return DEFAULT_GENERATION if sub.generation is None else sub.generation


def resolve_claims(
    partitions_per_topic: Mapping[str, int],
    subscriptions: Mapping[str, Subscription],
    order: list[str],
) -> _Claims:
    """Decide which member keeps each claimed partition, visiting members in ``order``.

    Partitions of topics that no longer exist are dropped. Unlike Java, an owned partition
    number beyond the topic's current count is dropped too (Java would hand it out).
    """
    claims = _Claims(all_subscriptions_equal=True, owned={})
    first_topics: frozenset[str] | None = None
    claimed_by: dict[TopicPartition, str] = {}
    for member in order:
        sub = subscriptions[member]
        topics = frozenset(sub.topics)
        if first_topics is None:
            first_topics = topics
        elif topics != first_topics:
            claims.all_subscriptions_equal = False
        generation = _generation(sub)
        claims.max_generation = max(claims.max_generation, generation)
        mine: dict[TopicPartition, None] = {}
        claims.owned[member] = mine
        for tp in sub.owned_partitions:
            count = partitions_per_topic.get(tp.topic)
            if count is None or tp.partition >= count:
                continue
            other = claimed_by.get(tp)
            if other is None:
                mine[tp] = None
                claimed_by[tp] = member
                continue
            other_generation = _generation(subscriptions[other])
            if generation == other_generation:
                log.error("members %s and %s both claim %s in generation %d; neither keeps it",
                          member, other, tp, generation)
                claims.claimed_by_several.add(tp)
                claims.owned[other].pop(tp, None)
                claimed_by[tp] = member
            elif generation > other_generation:
                log.warning("members %s (generation %d) and %s (generation %d) both claim %s; "
                            "the higher generation keeps it", member, generation, other,
                            other_generation, tp)
                mine[tp] = None
                claims.owned[other].pop(tp, None)
                claimed_by[tp] = member
            else:
                log.warning("members %s (generation %d) and %s (generation %d) both claim %s; "
                            "the higher generation keeps it", member, generation, other,
                            other_generation, tp)
    return claims


def _constrained_assign(
    partitions_per_topic: Mapping[str, int],
    claims: _Claims,
    order: list[str],
) -> StickyResult:
    """The identical-subscription path (Java's ``ConstrainedAssignmentBuilder``)."""
    total = sum(partitions_per_topic.values())
    min_quota, expected_over_min = divmod(total, len(order))
    max_quota = min_quota + (1 if expected_over_min else 0)
    over_min = 0
    assignment: dict[str, list[TopicPartition]] = {member: [] for member in order}
    under_min: list[str] = []
    at_min: list[str] = []  # members at minQuota that may still take one more
    revoked: set[TopicPartition] = set()
    kept: set[TopicPartition] = set()
    several = claims.claimed_by_several

    for member in order:
        owned = sorted((tp for tp in claims.owned[member] if tp not in several),
                       key=lambda tp: (tp.partition, java_order_key(tp.topic)))
        if len(owned) < min_quota:
            keep = owned
            under_min.append(member)
        elif len(owned) >= max_quota and over_min < expected_over_min:
            over_min += 1
            if over_min == expected_over_min:
                at_min.clear()
            keep = owned[:max_quota]
        else:
            keep = owned[:min_quota]
            if over_min < expected_over_min:
                at_min.append(member)
        assignment[member].extend(keep)
        kept.update(keep)
        revoked.update(owned[len(keep):])

    under_min.sort(key=java_order_key)
    at_min_queue = deque(sorted(at_min, key=java_order_key))
    transferring: dict[TopicPartition, str] = {}
    cursor = 0  # Java walks under_min with one iterator that removes members as they fill up
    for tp in (tp for tp in sorted_partitions(partitions_per_topic) if tp not in kept):
        if cursor < len(under_min):
            member = under_min[cursor]
            cursor += 1
        elif not under_min and not at_min_queue:
            raise AssignmentError(f"sticky assignment error: no member left to take {tp}")
        elif not under_min:
            member = at_min_queue.popleft()
        else:
            member = under_min[0]
            cursor = 1
        assignment[member].append(tp)
        if tp in revoked or tp in several:
            transferring[tp] = member
        size = len(assignment[member])
        if size == min_quota:
            cursor -= 1
            under_min.pop(cursor)
            at_min_queue.append(member)
        elif size == max_quota:
            over_min += 1

    if under_min and over_min != expected_over_min:
        raise AssignmentError(f"sticky assignment error: members {under_min} are below their quota")
    for member in under_min:
        if len(assignment[member]) != min_quota:
            raise AssignmentError(f"sticky assignment error: member {member} is below its quota")
    return StickyResult(assignment, transferring)


def sticky_assign(
    partitions_per_topic: Mapping[str, int],
    subscriptions: Mapping[str, Subscription],
) -> StickyResult:
    """Run Kafka's sticky algorithm; see the module docstring for the two paths."""
    order = hashmap_order(subscriptions)
    claims = resolve_claims(partitions_per_topic, subscriptions, order)
    if claims.all_subscriptions_equal:
        log.debug("all %d members subscribe to the same topics: constrained sticky path",
                  len(order))
        return _constrained_assign(partitions_per_topic, claims, order)
    log.debug("members subscribe to different topics: general sticky path")
    general = general_assign(partitions_per_topic, subscriptions,
                             {m: list(owned) for m, owned in claims.owned.items()},
                             order, claims.max_generation)
    return StickyResult({m: list(tps) for m, tps in general.items()}, None)


class StickyAssignor(PartitionAssignor):
    """Kafka's ``sticky`` strategy (eager: members give up everything before the rebalance,
    yet get back every owned partition the balance allows)."""

    name = "sticky"

    def _assign(
        self,
        partitions_per_topic: dict[str, int],
        subscriptions: dict[str, Subscription],
    ) -> Mapping[str, Iterable[TopicPartition]]:
        return sticky_assign(partitions_per_topic, subscriptions).assignment
