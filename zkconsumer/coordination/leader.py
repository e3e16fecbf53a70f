"""What only the leader does: watch membership and topics, decide, publish one record.

The leader keeps a cache of registrations: after taking over it reads each member's
registration once, and afterwards only members that appear (a join costs one getChildren and
one getData, not N of each). Partition counts are re-read only when a topic's data watch fired.
Publication is one multi: a check that this member's election candidate still exists (a
leader that lost its candidacy cannot publish) and a conditional write of the assignment znode
at the version last read (two writers cannot both succeed).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from kazoo.exceptions import NoNodeError

from zkconsumer.coordination.decide import (
    compute_assignment,
    member_threads,
    next_record,
    subscribed_topics,
)
from zkconsumer.coordination.record import AssignmentRecord, encode_assignment
from zkconsumer.errors import CorruptZnode
from zkconsumer.events import EventBus
from zkconsumer.membership.triggers import CHILDREN, DATA, Trigger, WatchSet
from zkconsumer.topic_filter import needs_topic_list
from zkconsumer.zk import codec, paths
from zkconsumer.zk.multi import Check, Create, MultiSession, SetData

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Published:
    """Outcome of one leader pass: the record now in force and whether this pass wrote it."""

    record: AssignmentRecord | None
    wrote: bool
    conflict: bool = False  # the znode moved under us: read it again and decide again
    # the znode's version after our write: a conditional setData at version v leaves v + 1, a
    # create 0, so the leader applies what it wrote without reading it back
    version: int | None = None


class LeaderDuty:
    """The leader's watches, caches and publication; runs on the coordinator thread."""

    def __init__(self, session: MultiSession, group: str, consumer_id: str, strategy: str,
                 exclude_internal_topics: bool, events: EventBus,
                 notify: Callable[[Trigger, str], None]) -> None:
        self._session = session
        self._group = group
        self._consumer_id = consumer_id
        self._strategy = strategy
        self._excl = exclude_internal_topics
        self._events = events
        self._watches = WatchSet(session, notify, events)
        self._registrations: dict[str, codec.ConsumerRegistration] = {}
        self._counts: dict[str, tuple[object, int]] = {}  # topic -> (mzxid seen, count)
        self.active = False

    def activate(self) -> None:
        if not self.active:
            log.info("[%s] became the group's leader", self._consumer_id)
            self._events.emit("leader_elected")
        self.active = True
        self._watches.watch(paths.consumer_ids(self._group), CHILDREN, Trigger.MEMBERSHIP)

    def deactivate(self) -> None:
        """Lost the candidacy (new session): forget caches; watches stay but are ignored."""
        self.active = False
        self._registrations.clear()
        self._counts.clear()
        self._watches.invalidate()

    def invalidate(self) -> None:
        self._watches.invalidate()

    def _members(self) -> dict[str, codec.ConsumerRegistration]:
        children = self._watches.last_value(paths.consumer_ids(self._group)) or ()
        for gone in set(self._registrations) - set(children):
            del self._registrations[gone]
        for member in sorted(set(children) - set(self._registrations)):
            path = paths.consumer_registration(self._group, member)
            try:
                data, _ = self._session.get(path)
                self._registrations[member] = codec.decode_registration(path, data)
            except NoNodeError:
                continue  # left again before we read it; its deletion fires the watch
            except CorruptZnode as exc:
                log.warning("[%s] ignoring member %s: %s", self._consumer_id, member, exc)
        return dict(self._registrations)

    def _partition_counts(self, topics: list[str]) -> dict[str, int]:
        for topic in topics:
            self._watches.watch(paths.topic(topic), DATA, Trigger.TOPIC_DATA)
        self._watches.arm()
        counts: dict[str, int] = {}
        for topic in topics:
            path = paths.topic(topic)
            seen = self._watches.last_value(path)
            cached = self._counts.get(topic)
            if cached is not None and cached[0] == seen:
                counts[topic] = cached[1]
                continue
            try:
                data, _ = self._session.get(path)
                n = len(codec.decode_topic_assignment(path, data))
            except NoNodeError:
                n = 0
            self._counts[topic] = (seen, n)
            counts[topic] = n
        return counts

    def run(self, current: AssignmentRecord | None, version: int | None, force: bool,
            candidate_path: str, session_id: int) -> Published:
        """Decide over the current view; publish when the decision or the members changed."""
        self._watches.arm()
        regs = self._members()
        all_topics = None
        if needs_topic_list(regs.values()):
            self._watches.watch(paths.BROKER_TOPICS, CHILDREN, Trigger.TOPICS)
            self._watches.arm()
            all_topics = sorted(self._watches.last_value(paths.BROKER_TOPICS) or ())
        threads = member_threads(regs, all_topics, self._excl)
        counts = self._partition_counts(subscribed_topics(threads))
        members = compute_assignment(self._strategy, threads, counts, current)
        candidate = next_record(current, self._consumer_id, members)
        unchanged = candidate.same_decision(current) and set(members) == set(
            current.members if current else ())
        if unchanged and not force:
            return Published(current, False)
        body = encode_assignment(candidate)
        write = SetData(paths.assignment(self._group), body, version) if version is not None \
            else Create(paths.assignment(self._group), body)
        result = self._session.multi([Check(candidate_path), write], session_id)
        if not result.ok:
            log.info("[%s] publication of generation %d lost a race: %s", self._consumer_id,
                     candidate.generation, result.failures)
            return Published(current, False, conflict=True)
        self._events.emit("assignment_decided", generation=candidate.generation,
                          members=sorted(members), partition_counts=counts,
                          threads={m: dict(t) for m, t in threads.items()},
                          assignment={m: {t: list(p) for t, p in a.items()}
                                      for m, a in members.items()})
        log.info("[%s] published generation %d for %d member(s)", self._consumer_id,
                 candidate.generation, len(members))
        return Published(candidate, True, version=0 if version is None else version + 1)
