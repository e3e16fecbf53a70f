"""``legacy-range`` and ``legacy-roundrobin``: the assignors of the ZooKeeper consumer.

Kafka 0.8-0.10's ``kafka.consumer.PartitionAssignor`` assigns partitions to consumer *threads*
(streams), named ``"<consumerId>-<n>"`` with ``n`` counting from 0 per topic. Every member runs
the assignor over the whole group as read from ZooKeeper and keeps its own share, so the result
must depend on nothing but that shared view.

Thread ids sort as plain strings (Scala ``ConsumerThreadId.compare`` compares ``toString``), not
as (consumer, number): ``c-10`` sorts before ``c-2`` and ``g_host-1-5`` before ``g_host-10-0``.

``legacy-range`` (the default), per topic: sort the topic's threads, split the sorted
partitions into consecutive ranges, the first ``n % threads`` threads one partition more.
Members C1 and C2 with two streams each on five partitions::

    p0, p1 -> C1-0    p2 -> C1-1    p3 -> C2-0    p4 -> C2-1

``legacy-roundrobin``: sort all thread ids, sort all partitions by the Java ``hashCode`` of
``"[<topic>,<partition>]"`` (a stable sort, to spread topics), and deal them out in turn over
one cycle of all threads, skipping a thread not subscribed to the partition's topic: Kafka
0.10.2's rule (KAFKA-2434), which the original 0.10.2.2 member runs, so members that subscribe
to different topics or stream counts still agree with it. With identical subscriptions this is
the plain deal of 0.8.2-0.10.1, which refused any other group.
"""

from __future__ import annotations

import logging
from abc import abstractmethod
from collections.abc import Iterable, Mapping, Sequence

from zkconsumer.identity import java_order_key, java_string_hash

from .base import AssignmentError, PartitionAssignor, Subscription, TopicPartition

log = logging.getLogger(__name__)

PartitionOwners = dict[TopicPartition, str]


def sorted_thread_ids(thread_ids: Iterable[str]) -> list[str]:
    """Distinct thread ids in Scala ``ConsumerThreadId`` order (whole-string comparison)."""
    return sorted(set(thread_ids), key=java_order_key)


def _threads_by_topic(
    consumer_threads_per_topic: Mapping[str, Sequence[str]],
) -> dict[str, list[str]]:
    if isinstance(consumer_threads_per_topic, str):
        raise AssignmentError("consumer_threads_per_topic must map topics to thread id lists")
    result: dict[str, list[str]] = {}
    keys: dict[str, bytes] = {}  # one encoding per thread id, however many topics it reads
    for topic, threads in consumer_threads_per_topic.items():
        if isinstance(threads, str):
            raise AssignmentError(
                f"threads of topic {topic!r} must be a list of thread ids, got {threads!r}")
        distinct = set(threads)
        for thread in distinct - keys.keys():
            keys[thread] = java_order_key(thread)
        if distinct:
            result[topic] = sorted(distinct, key=keys.__getitem__)
    return result


def _partition_ids(partitions_for_topic: Mapping[str, Iterable[int]], topic: str) -> list[int]:
    ids = sorted(set(partitions_for_topic.get(topic, ())))
    for p in ids:
        if not isinstance(p, int) or isinstance(p, bool) or p < 0:
            raise AssignmentError(f"partition ids of topic {topic!r} must be ints >= 0, got {p!r}")
    return ids


def assign_legacy_range(
    partitions_for_topic: Mapping[str, Iterable[int]],
    consumer_threads_per_topic: Mapping[str, Sequence[str]],
) -> PartitionOwners:
    """Per-topic range assignment of partitions to threads (``kafka.consumer.RangeAssignor``)."""
    owners: PartitionOwners = {}
    for topic, threads in sorted(_threads_by_topic(consumer_threads_per_topic).items()):
        partitions = _partition_ids(partitions_for_topic, topic)
        per_thread, with_extra = divmod(len(partitions), len(threads))
        busy = len(threads) if per_thread else with_extra
        for i, thread in enumerate(threads[:busy]):
            start = per_thread * i + min(i, with_extra)
            count = per_thread + (1 if i < with_extra else 0)
            for p in partitions[start:start + count]:
                owners[TopicPartition(topic, p)] = thread
        if busy < len(threads):
            _warn_idle(threads[busy:], topic)
    return owners


def _warn_idle(threads: list[str], topic: str) -> None:
    """The original warned once per idle thread; a group of a thousand threads on a small
    topic would log a thousand lines per member and rebalance, so idle threads of one topic
    share a line (the original's exact line when there is only one)."""
    if not log.isEnabledFor(logging.WARNING):
        return
    if len(threads) == 1:
        log.warning("No broker partitions consumed by consumer thread %s for topic %s",
                    threads[0], topic)
        return
    shown = ", ".join(threads[:10])
    if len(threads) > 10:
        shown += f" and {len(threads) - 10} more"
    log.warning("No broker partitions consumed by consumer threads %s for topic %s",
                shown, topic)


def assign_legacy_roundrobin(
    partitions_for_topic: Mapping[str, Iterable[int]],
    consumer_threads_per_topic: Mapping[str, Sequence[str]],
) -> PartitionOwners:
    """Hash-ordered round-robin of partitions over threads (``kafka.consumer.RoundRobinAssignor``).

    Partitions whose hashes are equal keep topic, then partition order; Scala kept the
    iteration order of a ``HashMap`` of topics there, which cannot be reproduced.
    """
    threads_by_topic = _threads_by_topic(consumer_threads_per_topic)
    if not threads_by_topic:
        return {}
    threads = sorted_thread_ids(t for ts in threads_by_topic.values() for t in ts)
    partitions = [TopicPartition(topic, p) for topic in sorted(threads_by_topic, key=java_order_key)
                  for p in _partition_ids(partitions_for_topic, topic)]
    partitions.sort(key=lambda tp: java_string_hash(f"[{tp.topic},{tp.partition}]"))
    subscribed = {topic: set(ts) for topic, ts in threads_by_topic.items()}
    owners: PartitionOwners = {}
    turn = 0  # one cycle shared by every partition; a topic's partitions skip other threads
    for tp in partitions:
        while threads[turn % len(threads)] not in subscribed[tp.topic]:
            turn += 1
        owners[tp] = threads[turn % len(threads)]
        turn += 1
    return owners


class LegacyAssignor(PartitionAssignor):
    """A ZooKeeper-consumer assignor: members are thread ids, one thread per subscription key."""

    @abstractmethod
    def assign_threads(
        self,
        partitions_for_topic: Mapping[str, Iterable[int]],
        consumer_threads_per_topic: Mapping[str, Sequence[str]],
    ) -> PartitionOwners:
        """Owner thread of every partition, given each topic's partition ids and *all* thread
        ids of the group subscribed to it (what the connector reads from ZooKeeper)."""

    def _assign(
        self,
        partitions_per_topic: dict[str, int],
        subscriptions: dict[str, Subscription],
    ) -> Mapping[str, Iterable[TopicPartition]]:
        threads_per_topic: dict[str, list[str]] = {}
        for thread, sub in subscriptions.items():
            for topic in sub.topics:
                threads_per_topic.setdefault(topic, []).append(thread)
        partitions = {topic: range(n) for topic, n in partitions_per_topic.items()}
        result: dict[str, list[TopicPartition]] = {thread: [] for thread in subscriptions}
        for tp, thread in self.assign_threads(partitions, threads_per_topic).items():
            result[thread].append(tp)
        return result


class LegacyRangeAssignor(LegacyAssignor):
    """``legacy-range``: the ZooKeeper consumer's default ``range`` strategy."""

    name = "legacy-range"

    def assign_threads(
        self,
        partitions_for_topic: Mapping[str, Iterable[int]],
        consumer_threads_per_topic: Mapping[str, Sequence[str]],
    ) -> PartitionOwners:
        return assign_legacy_range(partitions_for_topic, consumer_threads_per_topic)


class LegacyRoundRobinAssignor(LegacyAssignor):
    """``legacy-roundrobin``: the ZooKeeper consumer's ``roundrobin`` strategy (0.10.2 rules)."""

    name = "legacy-roundrobin"

    def assign_threads(
        self,
        partitions_for_topic: Mapping[str, Iterable[int]],
        consumer_threads_per_topic: Mapping[str, Sequence[str]],
    ) -> PartitionOwners:
        return assign_legacy_roundrobin(partitions_for_topic, consumer_threads_per_topic)
