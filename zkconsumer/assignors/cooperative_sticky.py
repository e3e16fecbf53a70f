"""``cooperative-sticky``: the sticky assignment, minus partitions that must be revoked first.

Under the cooperative protocol (KIP-429) members keep their partitions through a rebalance, so
a partition may not go straight from one member to another: the old owner would still be
consuming it. The assignor therefore runs the sticky algorithm and then leaves out of the new
owner's assignment every partition that is moving away from someone. The old owner, seeing the
partition missing from its own assignment, revokes it and rejoins; the follow-up rebalance,
where nobody owns it any more, hands it over.

Example: C1 owns p0 and p1, C2 owns p2, C3 joins (one topic, three partitions). Sticky wants
C3 to take p1, so this round gives ``C1: p0, C2: p2, C3: (nothing)``; after C1 revokes p1 the
next round gives ``C3: p1``.

See https://cwiki.apache.org/confluence/display/KAFKA/KIP-429%3A+Kafka+Consumer+Incremental+Rebalance+Protocol
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from .base import PartitionAssignor, Subscription, TopicPartition
from .sticky import sticky_assign

log = logging.getLogger(__name__)


def partitions_changing_owner(
    subscriptions: Mapping[str, Subscription],
    assignment: Mapping[str, Iterable[TopicPartition]],
) -> dict[TopicPartition, str]:
    """Partitions assigned to a member that did not own them while another member did.

    Java's ``computePartitionsTransferringOwnership``, used when the sticky general path ran:
    a partition counts if some member reported it as owned and is not getting it back.
    """
    added: dict[TopicPartition, str] = {}
    revoked: set[TopicPartition] = set()
    for member, assigned in assignment.items():
        owned = set(subscriptions[member].owned_partitions)
        assigned_set = set(assigned)
        added.update((tp, member) for tp in assigned_set - owned)
        revoked.update(owned - assigned_set)
    return {tp: member for tp, member in added.items() if tp in revoked}


def assign_cooperative_sticky(
    partitions_per_topic: Mapping[str, int],
    subscriptions: Mapping[str, Subscription],
) -> dict[str, list[TopicPartition]]:
    """Sticky assignment with every partition that changes owner withheld for one round."""
    result = sticky_assign(partitions_per_topic, subscriptions)
    transferring = result.transferring
    if transferring is None:
        transferring = partitions_changing_owner(subscriptions, result.assignment)
    if transferring:
        log.info("cooperative-sticky: %d partitions change owner and are withheld until revoked",
                 len(transferring))
    withheld: dict[str, set[TopicPartition]] = {}
    for tp, member in transferring.items():
        withheld.setdefault(member, set()).add(tp)
    return {
        member: [tp for tp in tps if tp not in withheld.get(member, ())]
        for member, tps in result.assignment.items()
    }


class CooperativeStickyAssignor(PartitionAssignor):
    """Kafka's ``cooperative-sticky`` strategy (cooperative; also usable with eager members)."""

    name = "cooperative-sticky"
    protocol = "cooperative"
    supported_protocols = ("cooperative", "eager")

    def _assign(
        self,
        partitions_per_topic: dict[str, int],
        subscriptions: dict[str, Subscription],
    ) -> Mapping[str, Iterable[TopicPartition]]:
        return assign_cooperative_sticky(partitions_per_topic, subscriptions)
