"""The leader mode's handover: adopt a published generation and move only what changed.

:class:`HandoverExecutor` is what the coordinator thread drives, as ``rebalance/attempt.py`` is
what the rebalancer drives. One :meth:`HandoverExecutor.apply` of the assignment record:

1. adopt: what this member must own (its partitions in the record, on its threads), the plan
   against what it owns now (``decide.plan_handover``), and the record's znode version as the
   fence of every later commit;
2. nothing moves: settle (STABLE once listed, the first time with a ``rebalance_succeeded``)
   and stop there;
3. begin: ``rebalance_started`` once per generation, ``attempt_started`` per try;
4. stop the fetchers of what moves away (every fetcher, once per version, for an eager
   strategy);
5. release: ``before_releasing_partitions``, keep the rest, disown the released partitions,
   then their last commit and owner deletion in one multi;
6. claim what arrives in one multi (``atomic_claims.claim``); if an owner znode is still there,
   watch it and wait (WAITING): its deletion wakes the coordinator for another try;
7. start: read the claimed partitions' offsets, install the generation,
   ``before_starting_fetchers``, start their fetchers, announce the generation applied.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kazoo.protocol.states import WatchedEvent

from zkconsumer.config import ConsumerConfig
from zkconsumer.coordination.atomic_claims import claim
from zkconsumer.coordination.decide import Handover, is_cooperative, plan_handover, thread_claims
from zkconsumer.coordination.fetchers import disown
from zkconsumer.coordination.gate import FetchGate
from zkconsumer.coordination.record import AssignmentRecord
from zkconsumer.coordination.states import CoordinatorState, Wake
from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.events import EventBus
from zkconsumer.identity import TopicPartition
from zkconsumer.membership.ownership import Generation, Ownership, assignment_by_topic
from zkconsumer.membership.rebalance_listener import ConsumerRebalanceListener
from zkconsumer.metrics import RebalanceMetrics
from zkconsumer.offsets.fenced import FencedOffsetStore
from zkconsumer.subscription import Subscription
from zkconsumer.zk.multi import MultiSession

log = logging.getLogger(__name__)

Infos = Mapping[TopicPartition, PartitionTopicInfo]


@dataclass(frozen=True)
class Adoption:
    """Step 1's outcome: the record adopted and what this member does about it."""

    listed: bool            # the record lists this member
    current: Generation     # what it owned before (of this session)
    plan: Handover
    new_generation: bool    # a record version this member had not adopted yet


def thread_map(infos: Infos) -> dict[TopicPartition, str]:
    return {tp: info.thread_id for tp, info in infos.items()}


class HandoverExecutor:
    """Applies assignment records for one connector; every method runs on the coordinator
    thread except :meth:`release_all` (shutdown, after the thread stopped)."""

    def __init__(self, *, consumer_id: str, config: ConsumerConfig, session: MultiSession,
                 subscription: Subscription, ownership: Ownership, offsets: FencedOffsetStore,
                 gate: FetchGate, events: EventBus, metrics: RebalanceMetrics,
                 listener: ConsumerRebalanceListener | None,
                 set_state: Callable[[CoordinatorState], None],
                 wake: Callable[[Wake, str], None], joined: Callable[[], None]) -> None:
        self.consumer_id = consumer_id
        self.group = config.group_id
        self.auto_commit = config.auto_commit_enable
        self.cooperative = is_cooperative(config.partition_assignment_strategy)
        self.session = session
        self.subscription = subscription
        self.ownership = ownership
        self.offsets = offsets
        self.gate = gate
        self.events = events
        self.metrics = metrics
        self.listener = listener
        self._set_state = set_state
        self._wake = wake
        self._joined = joined  # resolves the callers of join_now
        self.adopted: tuple[int, int] | None = None   # (generation, znode version)
        self._paused_for_version: int | None = None
        self._waiting_on: str | None = None
        self._handover_started: float | None = None
        self._announced = False  # rebalance_succeeded sent since (re)joining

    @property
    def generation(self) -> int | None:
        return self.adopted[0] if self.adopted else None

    def forget(self) -> None:
        """A new session: nothing adopted, announced or waited for any more."""
        self.adopted = None
        self._announced = False
        self._waiting_on = None

    # --- one record ----------------------------------------------------------------------------

    def apply(self, record: AssignmentRecord, version: int, session_id: int) -> None:
        """Steps 1-7 of the module docstring."""
        adoption = self._adopt(record, version, session_id)
        plan = adoption.plan
        if not plan.changes:
            self._settle(record, adoption)
            return
        self._begin(record, adoption)
        pause_all = self._stop_moving(plan, version)
        kept = self._release(plan, adoption.current, session_id)
        if pause_all and kept:
            self.gate.start(list(kept.values()))
        if not plan.claim:
            self._finish(record, kept, session_id)
            return
        claimed = self._claim(plan, session_id)
        if claimed is None:
            return
        infos = {**kept, **claimed}
        self._start(infos, claimed, session_id)
        self._finish(record, infos, session_id)

    def _my_threads(self, record: AssignmentRecord) -> dict[str, list[str]]:
        topics = sorted({t for a in record.members.values() for t in a})
        return self.subscription.topic_count.thread_ids_per_topic(topics)

    def _adopt(self, record: AssignmentRecord, version: int, session_id: int) -> Adoption:
        """1. Plan against what this session owns; fence commits at the record's version."""
        target = thread_claims(record.partitions_of(self.consumer_id), self._my_threads(record))
        current = self.ownership.current
        if current.session_id not in (None, session_id):
            self.ownership.clear()  # owner znodes of a dead session are not ours any more
            current = self.ownership.current
        plan = plan_handover(current.assignment(), target, self.cooperative)
        new_generation = self.adopted is None or self.adopted[1] != version
        self.adopted = (record.generation, version)
        self.offsets.set_fence(version, session_id)
        return Adoption(self.consumer_id in record.members, current, plan, new_generation)

    def _settle(self, record: AssignmentRecord, adoption: Adoption) -> None:
        """2. Nothing moves: joined once the record lists this member."""
        self._waiting_on = None
        self._set_state(CoordinatorState.STABLE if adoption.listed else CoordinatorState.JOINING)
        if adoption.listed:
            if not self._announced:  # joined with nothing to hand over: still a success
                self._announce(record, adoption.current.infos, 0, 0.0)
            self._joined()

    def _begin(self, record: AssignmentRecord, adoption: Adoption) -> None:
        """3. One ``rebalance_started`` per generation, one ``attempt_started`` per try."""
        if adoption.new_generation or self._handover_started is None:
            self._handover_started = time.monotonic()
            self.events.emit("rebalance_started", reasons=[f"generation {record.generation}"])
        self._set_state(CoordinatorState.HANDING_OVER)
        self.metrics.add(attempts=1)
        self.events.emit("attempt_started", attempt=0, generation=record.generation)

    def _stop_moving(self, plan: Handover, version: int) -> bool:
        """4. Stop what moves away; True if every fetcher stopped (eager, once per version)."""
        pause_all = plan.pause_all and self._paused_for_version != version
        if pause_all:
            self._paused_for_version = version
            self.gate.stop_all()
        else:
            self.gate.stop(plan.release)
        return pause_all

    def _release(self, plan: Handover, current: Generation, session_id: int
                 ) -> dict[TopicPartition, PartitionTopicInfo]:
        """5. Give up what moves away; returns the infos kept."""
        released = [current.infos[tp] for tp in plan.release]
        kept = {tp: current.infos[tp] for tp in plan.keep}
        if not released:
            return kept
        if self.listener is not None:
            listener_map: dict[str, set[int]] = {}
            for tp in plan.release:
                listener_map.setdefault(tp.topic, set()).add(tp.partition)
            self.listener.before_releasing_partitions(listener_map)
        self.ownership.install(kept, session_id)
        final = {TopicPartition(i.topic, i.partition): i.consumed_offset for i in released}
        for info in released:
            disown(info)  # a commit still holding the old generation now skips them
        self.offsets.barrier()
        self.offsets.release(final, session_id)
        return kept

    def _claim(self, plan: Handover, session_id: int
               ) -> dict[TopicPartition, PartitionTopicInfo] | None:
        """6. Claim what arrives in one multi; None if an owner znode is still there."""
        outcome = claim(self.session, self.group, plan.claim, session_id)
        if not outcome.claimed:
            self._wait_for(outcome.blocked_by, outcome.owner)
            return None
        self._waiting_on = None
        offsets = self.offsets.read(plan.claim)
        self.offsets.checkpoint(offsets)
        return {tp: PartitionTopicInfo(tp.topic, tp.partition,
                                       self.subscription.queue_for(tp.topic, tid),
                                       offsets[tp], offsets[tp], tid)
                for tp, tid in plan.claim.items()}

    def _start(self, infos: Infos, claimed: Infos, session_id: int) -> None:
        """7. Install the new generation, tell the user, start the claimed partitions."""
        self.ownership.install(infos, session_id)
        if self.listener is not None:
            self.listener.before_starting_fetchers(self.consumer_id,
                                                   assignment_by_topic(thread_map(infos)))
        self.gate.start(list(claimed.values()))

    def _finish(self, record: AssignmentRecord, infos: Infos, session_id: int) -> None:
        if self.ownership.current.infos.keys() != infos.keys():
            self.ownership.install(infos, session_id)
        self._set_state(CoordinatorState.STABLE)
        started = self._handover_started or time.monotonic()
        duration = (time.monotonic() - started) * 1000
        self._handover_started = None
        self.metrics.finished(duration, ok=True)
        self._announce(record, infos, 1, duration)
        if self.consumer_id in record.members:
            self._joined()

    def _announce(self, record: AssignmentRecord, infos: Infos, attempts: int,
                  duration: float) -> None:
        self._announced = True
        self.events.emit("rebalance_succeeded", attempts=attempts, duration_ms=duration,
                         assignment=assignment_by_topic(thread_map(infos)),
                         generation=record.generation,
                         reasons=[f"generation {record.generation}"])
        log.info("[%s] generation %d applied in %.0f ms, owning %d partition(s)",
                 self.consumer_id, record.generation, duration, len(infos))

    # --- waiting for a previous owner ----------------------------------------------------------

    def _wait_for(self, path: str | None, owner: str | None) -> None:
        """The previous owner has not released yet: wait for its owner znode's deletion."""
        self._set_state(CoordinatorState.WAITING)
        self.events.emit("claim_waiting", path=path, owner=owner)
        if path is None:
            self._wake(Wake.OWNER_RELEASED, "retry")
            return
        if self._waiting_on == path:
            return  # a watch is already set on it
        self._waiting_on = path  # before the request: a watch firing at once must reset it
        stat = None
        try:
            stat = self.session.exists(path, watch=self._on_owner_event)
        finally:
            if stat is None:  # gone meanwhile, or the request failed: no watch to count on
                self._waiting_on = None
        if stat is None:
            self._wake(Wake.OWNER_RELEASED, path)  # gone meanwhile: try again now
            return
        log.info("[%s] waiting for %s (owner %s) to be released", self.consumer_id, path, owner)

    def _on_owner_event(self, event: WatchedEvent) -> None:
        self._waiting_on = None
        self.events.emit("watch_fired", path=event.path, watch="exists", event=str(event.type))
        self._wake(Wake.OWNER_RELEASED, event.path or "")

    # --- shutdown ------------------------------------------------------------------------------

    def release_all(self) -> None:
        """Final commits and owner deletions in one multi, whatever the generation; after the
        thread stopped (owner znodes are ours only if claimed in the live session)."""
        gen = self.ownership.clear()
        session_id = self.session.session_id
        if not gen.infos or session_id is None or gen.session_id != session_id:
            return
        final = {tp: info.consumed_offset for tp, info in gen.infos.items()}
        if not self.auto_commit:
            final = {tp: -1 for tp in final}  # delete only: nothing is committed for the user
        for info in gen.infos.values():
            disown(info)
        self.offsets.barrier()
        self.offsets.release(final, session_id)
