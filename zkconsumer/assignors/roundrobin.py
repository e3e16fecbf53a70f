"""``roundrobin``: deal every partition of every subscribed topic around the sorted members.

Partitions are laid out topic by topic (topics in Java string order, partitions ascending) and
handed out by one cursor that cycles over the sorted members, skipping a member not subscribed
to the partition's topic. Identical subscriptions give counts within one of each other;
different ones can leave the result lopsided:

    C0 subscribes t0; C1 t0, t1; C2 t0, t1, t2 (1, 2 and 3 partitions):
        C0: t0p0    C1: t1p0    C2: t1p1, t2p0, t2p1, t2p2

Reproduces ``org.apache.kafka.clients.consumer.RoundRobinAssignor``. The cursor search uses a
per-topic sorted index of subscriber positions (a bisection) instead of stepping member by
member, so a thousand members with sparse subscriptions stay fast; the result is the same.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping

from .base import (
    PartitionAssignor,
    Subscription,
    TopicPartition,
    member_order_key,
    sorted_partitions,
)


def assign_roundrobin(
    partitions_per_topic: Mapping[str, int],
    subscriptions: Mapping[str, Subscription],
) -> dict[str, list[TopicPartition]]:
    """Round-robin assignment; every member of ``subscriptions`` appears in the result."""
    members = sorted(subscriptions, key=lambda m: member_order_key(m, subscriptions[m]))
    assignment: dict[str, list[TopicPartition]] = {member: [] for member in members}
    positions_by_topic: dict[str, list[int]] = {}
    for position, member in enumerate(members):
        for topic in subscriptions[member].topics:
            positions_by_topic.setdefault(topic, []).append(position)
    subscribed_counts = {t: n for t, n in partitions_per_topic.items() if t in positions_by_topic}
    cursor = 0
    for tp in sorted_partitions(subscribed_counts):
        positions = positions_by_topic[tp.topic]
        i = bisect.bisect_left(positions, cursor)
        chosen = positions[i] if i < len(positions) else positions[0]
        assignment[members[chosen]].append(tp)
        cursor = (chosen + 1) % len(members)
    return assignment


class RoundRobinAssignor(PartitionAssignor):
    """Kafka's ``roundrobin`` strategy (eager)."""

    name = "roundrobin"

    def _assign(
        self,
        partitions_per_topic: dict[str, int],
        subscriptions: dict[str, Subscription],
    ) -> Mapping[str, Iterable[TopicPartition]]:
        return assign_roundrobin(partitions_per_topic, subscriptions)
