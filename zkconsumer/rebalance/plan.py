"""Pure rebalance decisions: from a snapshot of the group to what one attempt releases and claims.

Nothing here talks to ZooKeeper. The rebalance attempt (``rebalance/attempt.py``) reads a
:class:`GroupView`, calls :func:`plan_rebalance` and carries the plan out; these functions are
unit-tested without servers. They reproduce the original's ``AssignmentContext`` and the parts of
``ZKRebalancerListener.rebalance`` that decide (spec detailed §3.6, §4.1):

* every member's registration is turned into thread ids per topic; a wildcard member's regex is
  re-evaluated by the reader against the current topic list with the reader's own
  ``exclude.internal.topics``;
* thread ids per topic are sorted as whole strings, partitions numerically;
* the legacy assignor computes the whole group's assignment and this member keeps its part;
* release is eager: everything owned is released before any claim.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from zkconsumer.identity import TopicPartition, consumer_id_of
from zkconsumer.topic_filter import topic_count_from_registration
from zkconsumer.zk.codec import ConsumerRegistration

log = logging.getLogger(__name__)


class Assignor(Protocol):
    """What plan needs from ``zkconsumer.assignors.get_assignor(...)``."""

    def assign_threads(self, partitions_for_topic: Mapping[str, Sequence[int]],
                       consumer_threads_per_topic: Mapping[str, Sequence[str]]
                       ) -> Mapping[TopicPartition, str]: ...


@dataclass(frozen=True)
class GroupView:
    """What one attempt read: members' registrations, the topic list, partitions per topic."""

    registrations: Mapping[str, ConsumerRegistration]
    partitions: Mapping[str, Sequence[int]] = field(default_factory=dict)
    all_topics: Sequence[str] | None = None
    exclude_internal_topics: bool = True


def consumers_per_topic(registrations: Mapping[str, ConsumerRegistration],
                        all_topics: Iterable[str] | None,
                        exclude_internal_topics: bool) -> dict[str, list[str]]:
    """``ZkUtils.getConsumersPerTopic``: topic -> every member's thread ids, string-sorted."""
    topics = list(all_topics or ())
    result: dict[str, list[str]] = {}
    for member in sorted(registrations):
        count = topic_count_from_registration(member, registrations[member],
                                              exclude_internal_topics)
        for topic, threads in count.thread_ids_per_topic(topics).items():
            result.setdefault(topic, []).extend(threads)
    return {topic: sorted(threads) for topic, threads in result.items()}


@dataclass(frozen=True)
class ReleasePlan:
    """Eager release: every owned partition, and the map ``before_releasing_partitions`` gets."""

    partitions: tuple[TopicPartition, ...]
    listener_map: dict[str, set[int]]


def plan_release(owned: Iterable[TopicPartition]) -> ReleasePlan:
    """The original released ownership of *all* partitions on every attempt (eager protocol)."""
    parts = tuple(sorted(owned))
    listener_map: dict[str, set[int]] = {}
    for tp in parts:
        listener_map.setdefault(tp.topic, set()).add(tp.partition)
    return ReleasePlan(parts, listener_map)


@dataclass(frozen=True)
class RebalancePlan:
    """This member's decision for one attempt.

    ``claims`` maps each partition this member must own to the owning thread (sorted by topic and
    partition: the order owner znodes are created in); ``offsets_to_read`` are the committed
    offsets to fetch; ``listener_assignment`` is what ``before_starting_fetchers`` receives.
    """

    claims: Mapping[TopicPartition, str]
    offsets_to_read: tuple[TopicPartition, ...]
    global_assignment: Mapping[TopicPartition, str]
    listener_assignment: dict[str, dict[int, str]]
    consumers_per_topic: Mapping[str, Sequence[str]]


def plan_rebalance(view: GroupView, my_threads: Mapping[str, Sequence[str]],
                   assignor: Assignor, strategy: str = "range") -> RebalancePlan:
    """Run the legacy assignor over the group and keep this member's part.

    ``my_threads`` is this member's topic -> thread ids, from its own registration as re-read
    in this attempt. With ``range`` the listener map holds only this member's topics, with
    ``roundrobin`` every topic (the original's ``beforeStartingFetchers`` argument).
    """
    per_topic = consumers_per_topic(view.registrations, view.all_topics,
                                    view.exclude_internal_topics)
    partitions = {t: sorted(view.partitions.get(t, ())) for t in per_topic}
    global_assignment = dict(assignor.assign_threads(
        partitions_for_topic=partitions, consumer_threads_per_topic=per_topic))
    mine = {tid for threads in my_threads.values() for tid in threads}
    claims = {tp: tid for tp, tid in sorted(global_assignment.items()) if tid in mine}
    listener: dict[str, dict[int, str]] = {}
    for tp, tid in sorted(global_assignment.items()):
        if strategy == "roundrobin" or tp.topic in my_threads:
            listener.setdefault(tp.topic, {})[tp.partition] = tid
    return RebalancePlan(
        claims=claims,
        offsets_to_read=tuple(claims),
        global_assignment=global_assignment,
        listener_assignment=listener,
        consumers_per_topic=per_topic,
    )


def decision_fields(plan: RebalancePlan, view: GroupView) -> dict[str, Any]:
    """The ``assignment_decided`` event of one legacy attempt, shaped as leader mode's.

    Every legacy member decides for the whole group on every attempt; members whose views differ
    decide differently, which is what the lab's ``conflicting_decisions`` looks for. The fields
    are leader mode's (``members``, ``partition_counts``, ``threads`` and ``assignment`` per
    member), with ``generation`` None: the legacy protocol has no generations.
    """
    threads: dict[str, dict[str, list[str]]] = {}
    for topic, tids in sorted(plan.consumers_per_topic.items()):
        for tid in tids:
            threads.setdefault(consumer_id_of(tid), {}).setdefault(topic, []).append(tid)
    assignment: dict[str, dict[str, list[int]]] = {member: {} for member in threads}
    for tp, tid in sorted(plan.global_assignment.items()):
        assignment.setdefault(consumer_id_of(tid), {}).setdefault(tp.topic, []).append(
            tp.partition)
    return {"generation": None, "members": sorted(threads),
            "partition_counts": {t: len(view.partitions.get(t, ()))
                                 for t in sorted(plan.consumers_per_topic)},
            "threads": threads, "assignment": assignment}
