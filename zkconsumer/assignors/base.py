"""Records and the abstract base every partition assignor implements.

An assignor is a pure function from *what exists* (partition counts per topic) and *who wants
it* (one :class:`Subscription` per member) to *who gets what*. It keeps no state between calls,
so one instance may serve any number of connectors in a process, unlike aiokafka's sticky
assignor, which kept the previous assignment on the class.

Example (``range``)::

    assign({"t0": 3}, {"C0": Subscription(["t0"]), "C1": Subscription(["t0"])})
    == {"C0": [TopicPartition("t0", 0), TopicPartition("t0", 1)],
        "C1": [TopicPartition("t0", 2)]}
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal

from zkconsumer.errors import ZkConsumerError
from zkconsumer.identity import TopicPartition, java_order_key

log = logging.getLogger(__name__)

RebalanceProtocol = Literal["eager", "cooperative"]
Assignment = dict[str, list[TopicPartition]]


class AssignmentError(ZkConsumerError, ValueError):
    """The input cannot be assigned: a bad partition count, a malformed subscription, or (for
    ``legacy-roundrobin``) consumers whose subscriptions differ. The message names the culprits."""


@dataclass(frozen=True, init=False)
class Subscription:
    """What one member asks for, as carried in Kafka's ``ConsumerProtocolSubscription``.

    ``owned_partitions`` and ``generation`` are what the member held and in which group
    generation; the sticky assignors use them, the others ignore them. ``group_instance_id``
    (static membership, KIP-345) puts a member ahead of dynamic ones in range and round-robin
    ordering, as in Java. Lists are accepted and stored as tuples; repeated topics or owned
    partitions are kept once, in first-seen order.
    """

    topics: tuple[str, ...]
    owned_partitions: tuple[TopicPartition, ...]
    generation: int | None
    group_instance_id: str | None

    def __init__(
        self,
        topics: Iterable[str],
        owned_partitions: Iterable[tuple[str, int]] = (),
        generation: int | None = None,
        group_instance_id: str | None = None,
    ) -> None:
        if isinstance(topics, str):
            raise AssignmentError(
                f"Subscription topics must be a list of names, got the string {topics!r}")
        topic_tuple = tuple(dict.fromkeys(topics))
        for topic in topic_tuple:
            if not isinstance(topic, str):
                raise AssignmentError(f"Subscription topic names must be strings, got {topic!r}")
        owned: list[TopicPartition] = []
        for item in owned_partitions:
            try:
                topic, partition = item
            except (TypeError, ValueError):
                raise AssignmentError(
                    f"owned partition must be (topic, partition >= 0), got {item!r}") from None
            if not isinstance(topic, str) or not _is_int(partition) or partition < 0:
                raise AssignmentError(
                    f"owned partition must be (topic, partition >= 0), got {item!r}")
            owned.append(TopicPartition(topic, partition))
        if generation is not None and not _is_int(generation):
            raise AssignmentError(f"generation must be an int or None, got {generation!r}")
        if group_instance_id is not None and not isinstance(group_instance_id, str):
            raise AssignmentError(
                f"group_instance_id must be a string or None, got {group_instance_id!r}")
        object.__setattr__(self, "topics", topic_tuple)
        object.__setattr__(self, "owned_partitions", tuple(dict.fromkeys(owned)))
        object.__setattr__(self, "generation", generation)
        object.__setattr__(self, "group_instance_id", group_instance_id)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def member_order_key(member_id: str, subscription: Subscription) -> tuple[int, bytes]:
    """Java's ``MemberInfo`` order: static members (by instance id) first, then member ids."""
    if subscription.group_instance_id is not None:
        return (0, java_order_key(subscription.group_instance_id))
    return (1, java_order_key(member_id))


def sorted_partitions(partitions_per_topic: Mapping[str, int]) -> list[TopicPartition]:
    """Every partition, topics in Java string order, partitions ascending."""
    return [
        TopicPartition(topic, p)
        for topic in sorted(partitions_per_topic, key=java_order_key)
        for p in range(partitions_per_topic[topic])
    ]


class PartitionAssignor(ABC):
    """A partition assignment strategy.

    Subclasses implement :meth:`_assign` on validated input; :meth:`assign` checks the input,
    drops topics nobody subscribes to (Kafka's leader only asks metadata for subscribed
    topics), and returns every member with its partitions sorted.
    """

    name: ClassVar[str]
    protocol: ClassVar[RebalanceProtocol] = "eager"
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = ("eager",)

    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
    ) -> Assignment:
        """Assign the partitions of ``partitions_per_topic`` to the members of ``subscriptions``.

        Returns ``{member: [TopicPartition, ...]}`` with every member present, members and
        partitions sorted. Topics absent from ``partitions_per_topic`` are ignored, as a
        subscribed topic that does not exist yet is in Kafka.
        """
        counts = _validated_counts(partitions_per_topic)
        subs = _validated_subscriptions(subscriptions)
        subscribed = {topic for sub in subs.values() for topic in sub.topics}
        counts = {topic: n for topic, n in counts.items() if topic in subscribed}
        if not subs:
            return {}
        raw = self._assign(counts, subs)
        result = {member: sorted(raw.get(member, ())) for member in sorted(subs)}
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s assigned %d partitions to %d members", self.name,
                      sum(len(v) for v in result.values()), len(result))
        return result

    @abstractmethod
    def _assign(
        self,
        partitions_per_topic: dict[str, int],
        subscriptions: dict[str, Subscription],
    ) -> Mapping[str, Iterable[TopicPartition]]:
        """The strategy proper; input is validated and limited to subscribed topics."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, protocol={self.protocol!r})"


def _validated_counts(partitions_per_topic: Mapping[str, int]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for topic, n in partitions_per_topic.items():
        if not isinstance(topic, str):
            raise AssignmentError(f"topic names must be strings, got {topic!r}")
        if not _is_int(n) or n < 0:
            raise AssignmentError(
                f"partition count of topic {topic!r} must be an int >= 0, got {n!r}")
        counts[topic] = n
    return counts


def _validated_subscriptions(subscriptions: Mapping[str, Subscription]) -> dict[str, Subscription]:
    subs: dict[str, Subscription] = {}
    for member, sub in subscriptions.items():
        if not isinstance(member, str):
            raise AssignmentError(f"member ids must be strings, got {member!r}")
        if not isinstance(sub, Subscription):
            raise AssignmentError(
                f"subscription of member {member!r} must be a Subscription, got {sub!r}")
        subs[member] = sub
    return subs
