"""``range``: Kafka's default assignor, topic by topic.

For each topic, the members subscribed to it are sorted (static members by
``group.instance.id`` first, then member ids in Java string order) and the topic's partitions
are cut into consecutive ranges: each member gets ``n // m``, the first ``n % m`` one more.
Topics are handled independently, so the first members collect the extras of every topic:

    C0, C1 both subscribe t0 and t1, 3 partitions each:
        C0: t0p0, t0p1, t1p0, t1p1
        C1: t0p2, t1p2

Consecutive ranges keep partition *i* of co-partitioned topics on the same member, which is
why joins rely on it. Reproduces ``org.apache.kafka.clients.consumer.RangeAssignor`` without
rack awareness (KIP-881).
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Iterable, Mapping

from .base import PartitionAssignor, Subscription, TopicPartition, member_order_key

log = logging.getLogger(__name__)


def assign_range(
    partitions_per_topic: Mapping[str, int],
    subscriptions: Mapping[str, Subscription],
) -> dict[str, list[TopicPartition]]:
    """Per-topic range assignment; every member of ``subscriptions`` appears in the result."""
    assignment: dict[str, list[TopicPartition]] = {member: [] for member in subscriptions}
    order = {m: member_order_key(m, sub) for m, sub in subscriptions.items()}
    members_by_topic: dict[str, list[str]] = {}
    for member, sub in subscriptions.items():
        for topic in sub.topics:
            members_by_topic.setdefault(topic, []).append(member)
    for topic, members in members_by_topic.items():
        count = partitions_per_topic.get(topic)
        if count is None:
            continue
        per_member, with_extra = divmod(count, len(members))
        if per_member:
            receivers = sorted(members, key=order.__getitem__)
        else:  # fewer partitions than members: only the first ``count`` get one
            receivers = heapq.nsmallest(with_extra, members, key=order.__getitem__)
        for i, member in enumerate(receivers):
            start = per_member * i + min(i, with_extra)
            length = per_member + (1 if i < with_extra else 0)
            assignment[member].extend(
                TopicPartition(topic, p) for p in range(start, start + length))
    return assignment


class RangeAssignor(PartitionAssignor):
    """Kafka's ``range`` strategy (eager)."""

    name = "range"

    def _assign(
        self,
        partitions_per_topic: dict[str, int],
        subscriptions: dict[str, Subscription],
    ) -> Mapping[str, Iterable[TopicPartition]]:
        return assign_range(partitions_per_topic, subscriptions)
