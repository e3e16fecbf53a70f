"""Pure decisions of the leader mode: the group's assignment and one member's handover.

Nothing here talks to ZooKeeper. The leader turns what it read (registrations, partition counts,
the previous record) into a new :class:`AssignmentRecord` with :func:`compute_assignment`; each
member turns a record into a :class:`Handover` with :func:`plan_handover`.

Assignment is per member, with the modern assignors (``range``, ``roundrobin``, ``sticky``,
``cooperative-sticky``); a member spreads its partitions over its own consumer threads
(:func:`thread_claims`), so owner znodes still name thread ids, as the original tools expect.
``cooperative-sticky`` is assigned like ``sticky`` in one round: KIP-429's second round exists
because a broker coordinator cannot see when a revoked partition was let go, whereas here the
new owner's claim waits on the old owner's znode deletion (``claims.py``), which gives the same
order. What makes it cooperative here is :func:`plan_handover`: only moved partitions stop.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from zkconsumer.assignors import Subscription, get_assignor
from zkconsumer.coordination.record import AssignmentRecord
from zkconsumer.identity import TopicPartition, thread_number
from zkconsumer.topic_filter import topic_count_from_registration
from zkconsumer.zk.codec import ConsumerRegistration

log = logging.getLogger(__name__)

COOPERATIVE = frozenset({"cooperative-sticky"})


def assignor_name(strategy: str) -> str:
    """The assignor the leader runs for ``partition.assignment.strategy`` (see module doc)."""
    return "sticky" if strategy == "cooperative-sticky" else strategy


def is_cooperative(strategy: str) -> bool:
    return strategy in COOPERATIVE


def member_threads(registrations: Mapping[str, ConsumerRegistration],
                   all_topics: Iterable[str] | None,
                   exclude_internal_topics: bool) -> dict[str, dict[str, list[str]]]:
    """member -> topic -> its thread ids; a wildcard member's regex is matched here."""
    topics = list(all_topics or ())
    out: dict[str, dict[str, list[str]]] = {}
    for member in sorted(registrations):
        count = topic_count_from_registration(member, registrations[member],
                                              exclude_internal_topics)
        out[member] = {t: sorted(tids, key=thread_number)
                       for t, tids in count.thread_ids_per_topic(topics).items() if tids}
    return out


def subscribed_topics(threads: Mapping[str, Mapping[str, Sequence[str]]]) -> list[str]:
    return sorted({t for per_topic in threads.values() for t in per_topic})


def compute_assignment(strategy: str, threads: Mapping[str, Mapping[str, Sequence[str]]],
                       partition_counts: Mapping[str, int],
                       previous: AssignmentRecord | None) -> dict[str, dict[str, tuple[int, ...]]]:
    """Every member's partitions; sticky strategies keep what the previous record gave."""
    subs = {}
    for member, per_topic in threads.items():
        owned = [tp for tp in (previous.partitions_of(member) if previous else ())
                 if tp.partition < partition_counts.get(tp.topic, 0)]
        subs[member] = Subscription(sorted(per_topic), owned,
                                    previous.generation if previous else None)
    counts = {t: n for t, n in partition_counts.items()}
    result = get_assignor(assignor_name(strategy)).assign(counts, subs) if subs else {}
    out: dict[str, dict[str, tuple[int, ...]]] = {}
    for member in threads:
        per_topic: dict[str, list[int]] = {}
        for tp in result.get(member, ()):
            per_topic.setdefault(tp.topic, []).append(tp.partition)
        out[member] = {t: tuple(sorted(p)) for t, p in sorted(per_topic.items())}
    return out


def next_record(previous: AssignmentRecord | None, leader: str,
                members: Mapping[str, Mapping[str, tuple[int, ...]]]) -> AssignmentRecord:
    return AssignmentRecord((previous.generation if previous else 0) + 1, leader, dict(members))


def thread_claims(partitions: Iterable[TopicPartition],
                  my_threads: Mapping[str, Sequence[str]]) -> dict[TopicPartition, str]:
    """Spread a member's partitions over its threads: per topic, partition i -> thread i mod n.

    A topic with no thread of ours (the subscription changed under the leader) is skipped.
    """
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    claims: dict[TopicPartition, str] = {}
    for topic, parts in sorted(by_topic.items()):
        threads = sorted(my_threads.get(topic, ()), key=thread_number)
        if not threads:
            log.warning("assigned partitions of %s but no thread subscribes to it", topic)
            continue
        for i, p in enumerate(sorted(parts)):
            claims[TopicPartition(topic, p)] = threads[i % len(threads)]
    return claims


@dataclass(frozen=True)
class Handover:
    """What one member does to go from what it owns to what a record gives it.

    ``release``: owner znodes to give up (after a last commit); ``claim``: owner znodes to create
    in one multi; ``keep``: untouched. ``pause_all``: eager assignors stop every fetcher of a
    member whose assignment changed; cooperative ones stop only ``release``.
    """

    release: tuple[TopicPartition, ...] = ()
    claim: Mapping[TopicPartition, str] = field(default_factory=dict)
    keep: Mapping[TopicPartition, str] = field(default_factory=dict)
    pause_all: bool = False

    @property
    def changes(self) -> bool:
        return bool(self.release or self.claim)


def plan_handover(owned: Mapping[TopicPartition, str], target: Mapping[TopicPartition, str],
                  cooperative: bool) -> Handover:
    """A partition staying on the same thread is kept; any other difference is release/claim."""
    keep = {tp: tid for tp, tid in owned.items() if target.get(tp) == tid}
    release = tuple(sorted(tp for tp in owned if tp not in keep))
    claim = {tp: tid for tp, tid in sorted(target.items()) if tp not in keep}
    changed = bool(release or claim)
    return Handover(release, claim, keep, pause_all=changed and not cooperative)
