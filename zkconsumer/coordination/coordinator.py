"""The leader mode's coordinator: one thread per connector that follows the published record.

It replaces the legacy rebalancer (``rebalance/rebalancer.py``) when ``coordination.mode=leader``
and shares everything else with it: registration, streams and queues, the generation holder,
offsets, fetchers. Watch and session callbacks only hand it a :class:`Wake` reason; reasons
that arrive while it works coalesce into one more pass. One pass:

1. after a new session: forget ownership without committing, register again, stand again;
2. election: lead if no candidate is before ours, else watch the predecessor only;
3. leader only: re-read what changed and publish a new generation when needed;
4. read the assignment znode (and watch it), adopt its version for commits, and hand over:
   release what moved away (last commit + owner deletion in one multi), claim what arrived
   (one multi; if an owner znode still exists, watch it and wait), start the new fetchers.

States (one DEBUG line per transition)::

    JOINING --record lists us, claims done--> STABLE --new record--> HANDING_OVER
    HANDING_OVER --claims done--> STABLE      HANDING_OVER --owner znode exists--> WAITING
    WAITING --owner deleted--> HANDING_OVER   any --session suspended--> PAUSED
    PAUSED --same session back--> previous    PAUSED --new session--> JOINING
    any --stop()--> STOPPED

``zookeeper.pause.fetchers.on.disconnect``: while the session is suspended, fetchers are stopped
and buffered chunks dropped (on a short-lived thread, since the coordinator may be blocked in a
ZooKeeper request); they restart from the consumed offsets only if the same session comes back.
A member cut off long enough for its session to expire has therefore stopped delivering before
anybody else could own its partitions.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

from kazoo.exceptions import SessionExpiredError
from kazoo.protocol.states import WatchedEvent

from zkconsumer.config import ConsumerConfig
from zkconsumer.coordination.assignment import AssignmentWatch
from zkconsumer.coordination.atomic_claims import claim
from zkconsumer.coordination.decide import is_cooperative, plan_handover, thread_claims
from zkconsumer.coordination.election import LeaderElection
from zkconsumer.coordination.fetchers import PartitionFetchers, disown
from zkconsumer.coordination.gate import LOST, FetchGate
from zkconsumer.coordination.leader import LeaderDuty
from zkconsumer.coordination.record import AssignmentRecord
from zkconsumer.coordination.states import CoordinatorState, Wake, wake_for
from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.errors import ConsumerRebalanceFailedException
from zkconsumer.events import EventBus
from zkconsumer.identity import TopicPartition
from zkconsumer.membership.ownership import Ownership, assignment_by_topic
from zkconsumer.membership.rebalance_listener import ConsumerRebalanceListener
from zkconsumer.membership.worker import ReasonThread
from zkconsumer.metrics import RebalanceMetrics
from zkconsumer.offsets.fenced import FencedOffsetStore
from zkconsumer.subscription import Subscription
from zkconsumer.zk import codec, paths
from zkconsumer.zk.multi import MultiSession
from zkconsumer.zk.session import SessionClosedError, SessionEvent

log = logging.getLogger(__name__)


class Coordinator(ReasonThread[Wake, CoordinatorState]):
    """Owns the ``<consumer id>_coordinator`` thread; see the module docstring."""

    def __init__(self, *, consumer_id: str, config: ConsumerConfig, session: MultiSession,
                 subscription: Subscription, ownership: Ownership, offsets: FencedOffsetStore,
                 fetchers: PartitionFetchers, events: EventBus, metrics: RebalanceMetrics,
                 listener: ConsumerRebalanceListener | None,
                 is_shutting_down: Callable[[], bool]) -> None:
        super().__init__(consumer_id, f"{consumer_id}_coordinator", "coordinator",
                         CoordinatorState.JOINING, CoordinatorState.STOPPED)
        self.group = config.group_id
        self.config = config
        self.session = session
        self.subscription = subscription
        self.ownership = ownership
        self.offsets = offsets
        self.fetchers = fetchers
        self.events = events
        self.metrics = metrics
        self.listener = listener
        self._is_shutting_down = is_shutting_down
        self.cooperative = is_cooperative(config.partition_assignment_strategy)
        self.election = LeaderElection(session, self.group, consumer_id,
                                       lambda path: self.wake(Wake.PREDECESSOR, path))
        self.duty = LeaderDuty(session, self.group, consumer_id,
                               config.partition_assignment_strategy,
                               config.exclude_internal_topics, events,
                               lambda t, d: self.wake(wake_for(t), d))
        self._backoff_s = config.rebalance_backoff_ms / 1000.0
        self.gate = FetchGate(fetchers, subscription, ownership, is_shutting_down)
        self._adopted: tuple[int, int] | None = None   # (generation, znode version)
        self._paused_for_version: int | None = None
        self.assignment = AssignmentWatch(session, self.group, events,
                                          lambda path: self.wake(Wake.ASSIGNMENT, path))
        self._waiting_on: str | None = None
        self._joined: list[Future[None]] = []
        self._handover_started: float | None = None
        self._announced = False  # rebalance_succeeded sent since (re)joining
        self.last_error: BaseException | None = None

    # --- any thread ----------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        return self.duty.active and self.election.standing

    @property
    def generation(self) -> int | None:
        return self._adopted[0] if self._adopted else None

    def join_now(self, timeout: float) -> None:
        """Wait until a published generation lists this member and its claims are done."""
        future: Future[None] = Future()
        with self.cond:
            self._joined.append(future)
        self.wake(Wake.STARTUP)
        try:
            future.result(timeout)
        except TimeoutError:
            raise ConsumerRebalanceFailedException(
                f"{self.consumer_id} was not assigned by a leader within {timeout:.0f} s"
            ) from None

    def stop(self, timeout: float = 10.0) -> bool:
        ended = self.stop_thread(timeout)
        self._resolve_joined(ConsumerRebalanceFailedException(f"{self.consumer_id} shut down"))
        return ended

    def on_session_event(self, event: SessionEvent) -> None:
        """kazoo's thread: pause on suspension (on another thread), hand reasons over."""
        if event.new_session:
            self.wake(Wake.NEW_SESSION, f"0x{event.session_id or 0:x}")
        elif event.state == "CONNECTED" and self.gate.paused:
            self.wake(Wake.RECONNECTED)
        if event.state in ("SUSPENDED", "LOST") and self.config.pause_fetchers_on_disconnect \
                and not self.stopping.is_set():
            paused_for = (event.session_id or LOST) if event.state == "SUSPENDED" else LOST
            threading.Thread(target=self._pause, args=(paused_for, self.gate.epoch), daemon=True,
                             name=f"{self.consumer_id}-pause").start()

    # --- pause / resume ------------------------------------------------------------------------

    def _pause(self, session_id: int, epoch: int) -> None:
        """No ZooKeeper here: works while the coordinator is blocked on ZooKeeper."""
        if not self.gate.pause(session_id, epoch):
            return
        self.set_state(CoordinatorState.PAUSED)
        log.warning("[%s] ZooKeeper session suspended: fetchers paused "
                    "(zookeeper.pause.fetchers.on.disconnect)", self.consumer_id)
        self.events.emit("fetchers_paused_on_disconnect", session_id=session_id)
        if self.session.connected and self.session.session_id == session_id:
            self.wake(Wake.RECONNECTED, "back before the pause finished")

    def _resume_if_same_session(self) -> None:
        if not self.session.connected:
            return
        infos = self.gate.resume(self.session.session_id)
        if infos is None:
            return
        self.set_state(CoordinatorState.STABLE)
        log.info("[%s] same ZooKeeper session back: fetchers resumed", self.consumer_id)
        self.events.emit("fetchers_resumed", partitions=len(infos))

    # --- the thread ------------------------------------------------------------------------------

    def handle(self, reasons: set[Wake]) -> None:
        try:
            self._pass(reasons)
        except SessionClosedError:
            if not self.stopping.is_set():
                raise
        except SessionExpiredError as exc:
            log.info("[%s] session expired during a pass (%s); waiting for the new one",
                     self.consumer_id, exc)
        except Exception as exc:
            self.last_error = exc
            log.exception("[%s] coordinator pass failed", self.consumer_id)
            self.events.emit("error", where="coordinator", error=repr(exc))
            if not self.stopping.wait(self._backoff_s):
                self.wake(Wake.REARM, "after an error")

    def crashed(self, exc: BaseException) -> None:
        self.last_error = exc
        self.events.emit("error", where="coordinator", error=repr(exc))
        self._resolve_joined(exc)

    def _pass(self, reasons: set[Wake]) -> None:
        if self._is_shutting_down():
            return
        if Wake.NEW_SESSION in reasons:
            self._new_session()
        if Wake.RECONNECTED in reasons:
            self._resume_if_same_session()
        session_id = self.session.session_id
        if session_id is None:
            raise SessionExpiredError("no ZooKeeper session")
        if self.election.check():
            self.duty.activate()
        elif self.duty.active:
            self.duty.deactivate()
        record, version = self.assignment.read()
        if self.duty.active:
            force = bool(reasons & {Wake.MEMBERSHIP, Wake.NEW_SESSION}) or record is None
            for _ in range(5):
                published = self.duty.run(record, version, force, self.election.candidate_path
                                          or "", session_id)
                if not published.conflict:
                    break
                record, version = self.assignment.read()
            if published.wrote:
                record, version = self.assignment.read()
        if record is not None and version is not None:
            self._apply(record, version, session_id)

    def _new_session(self) -> None:
        """``handleNewSession``: ownership died with the old session; nothing is committed."""
        log.info("[%s] new ZooKeeper session: re-registering and standing again",
                 self.consumer_id)
        self.gate.reset()
        self.offsets.set_fence(None, None)
        self._adopted = None
        self._announced = False
        self._waiting_on = None
        self.assignment.forget()
        self.election.forget()
        self.duty.deactivate()
        self._register()
        self.set_state(CoordinatorState.JOINING)

    def _register(self) -> None:
        path = paths.consumer_registration(self.group, self.consumer_id)
        data = codec.encode_registration(
            self.subscription.topic_count.registration(int(time.time() * 1000)))
        self.session.create_checked_ephemeral(path, data)
        self.events.emit("registered", path=path, session_id=self.session.session_id)

    def register(self) -> None:
        """First registration, on the caller's thread (as ``create_message_streams`` does)."""
        self._register()

    # --- handover ------------------------------------------------------------------------------

    def _my_threads(self, record: AssignmentRecord) -> dict[str, list[str]]:
        topics = sorted({t for a in record.members.values() for t in a})
        return self.subscription.topic_count.thread_ids_per_topic(topics)

    def _apply(self, record: AssignmentRecord, version: int, session_id: int) -> None:
        listed = self.consumer_id in record.members
        target = thread_claims(record.partitions_of(self.consumer_id), self._my_threads(record))
        current = self.ownership.current
        if current.session_id not in (None, session_id):
            self.ownership.clear()  # owner znodes of a dead session are not ours any more
            current = self.ownership.current
        owned = current.assignment()
        handover = plan_handover(owned, target, self.cooperative)
        new_generation = self._adopted is None or self._adopted[1] != version
        self._adopted = (record.generation, version)
        self.offsets.set_fence(version, session_id)
        if not handover.changes:
            self._waiting_on = None
            self.set_state(CoordinatorState.STABLE if listed else CoordinatorState.JOINING)
            if listed:
                if not self._announced:  # joined with nothing to hand over: still a success
                    self._announce(record, current.infos, 0, 0.0)
                self._resolve_joined(None)
            return
        if new_generation or self._handover_started is None:
            self._handover_started = time.monotonic()
            self.events.emit("rebalance_started", reasons=[f"generation {record.generation}"])
        self.set_state(CoordinatorState.HANDING_OVER)
        self.metrics.add(attempts=1)
        self.events.emit("attempt_started", attempt=0, generation=record.generation)
        pause_all = handover.pause_all and self._paused_for_version != version
        released = [current.infos[tp] for tp in handover.release]
        kept = {tp: current.infos[tp] for tp in handover.keep}
        if pause_all:
            self._paused_for_version = version
            self.gate.stop_all()
        else:
            self.gate.stop(handover.release)
        if released:
            if self.listener is not None:
                listener_map: dict[str, set[int]] = {}
                for tp in handover.release:
                    listener_map.setdefault(tp.topic, set()).add(tp.partition)
                self.listener.before_releasing_partitions(listener_map)
            self.ownership.install(kept, session_id)
            final = {TopicPartition(i.topic, i.partition): i.consumed_offset for i in released}
            for info in released:
                disown(info)  # a commit still holding the old generation now skips them
            self.offsets.barrier()
            self.offsets.release(final, session_id)
        if pause_all and kept:
            self.gate.start(list(kept.values()))
        if not handover.claim:
            self._finish(record, kept, session_id)
            return
        outcome = claim(self.session, self.group, handover.claim, session_id)
        if not outcome.claimed:
            self._wait_for(outcome.blocked_by, outcome.owner)
            return
        self._waiting_on = None
        offsets = self.offsets.read(handover.claim)
        self.offsets.checkpoint(offsets)
        claimed = {tp: PartitionTopicInfo(tp.topic, tp.partition,
                                          self.subscription.queue_for(tp.topic, tid),
                                          offsets[tp], offsets[tp], tid)
                   for tp, tid in handover.claim.items()}
        infos = {**kept, **claimed}
        self.ownership.install(infos, session_id)
        if self.listener is not None:
            self.listener.before_starting_fetchers(self.consumer_id,
                                                   assignment_by_topic(self._thread_map(infos)))
        self.gate.start(list(claimed.values()))
        self._finish(record, infos, session_id)

    @staticmethod
    def _thread_map(infos: Mapping[TopicPartition, PartitionTopicInfo]
                    ) -> dict[TopicPartition, str]:
        return {tp: info.thread_id for tp, info in infos.items()}

    def _finish(self, record: AssignmentRecord, infos: dict[TopicPartition, PartitionTopicInfo],
                session_id: int) -> None:
        if self.ownership.current.infos.keys() != infos.keys():
            self.ownership.install(infos, session_id)
        self.set_state(CoordinatorState.STABLE)
        started = self._handover_started or time.monotonic()
        duration = (time.monotonic() - started) * 1000
        self._handover_started = None
        self.metrics.finished(duration, ok=True)
        self._announce(record, infos, 1, duration)
        if self.consumer_id in record.members:
            self._resolve_joined(None)

    def _announce(self, record: AssignmentRecord,
                  infos: Mapping[TopicPartition, PartitionTopicInfo], attempts: int,
                  duration: float) -> None:
        self._announced = True
        self.events.emit("rebalance_succeeded", attempts=attempts, duration_ms=duration,
                         assignment=assignment_by_topic(self._thread_map(infos)),
                         generation=record.generation,
                         reasons=[f"generation {record.generation}"])
        log.info("[%s] generation %d applied in %.0f ms, owning %d partition(s)",
                 self.consumer_id, record.generation, duration, len(infos))

    def _wait_for(self, path: str | None, owner: str | None) -> None:
        """The previous owner has not released yet: wait for its owner znode's deletion."""
        self.set_state(CoordinatorState.WAITING)
        self.events.emit("claim_waiting", path=path, owner=owner)
        if path is None:
            self.wake(Wake.OWNER_RELEASED, "retry")
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
            self.wake(Wake.OWNER_RELEASED, path)  # gone meanwhile: try again now
            return
        log.info("[%s] waiting for %s (owner %s) to be released", self.consumer_id, path, owner)

    def _on_owner_event(self, event: WatchedEvent) -> None:
        self._waiting_on = None
        self.events.emit("watch_fired", path=event.path, watch="exists", event=str(event.type))
        self.wake(Wake.OWNER_RELEASED, event.path or "")

    def _resolve_joined(self, exc: BaseException | None) -> None:
        with self.cond:
            waiters, self._joined = self._joined, []
        for w in waiters:
            if w.done():
                continue
            if exc is None:
                w.set_result(None)
            else:
                w.set_exception(exc)

    def release_all(self) -> None:
        """Shutdown: final commits and owner deletions in one multi, whatever the generation;
        after the thread stopped (owner znodes are ours only if claimed in the live session)."""
        gen = self.ownership.clear()
        session_id = self.session.session_id
        if not gen.infos or session_id is None or gen.session_id != session_id:
            return
        final = {tp: info.consumed_offset for tp, info in gen.infos.items()}
        if not self.config.auto_commit_enable:
            final = {tp: -1 for tp in final}  # delete only: nothing is committed for the user
        for info in gen.infos.values():
            disown(info)
        self.offsets.barrier()
        self.offsets.release(final, session_id)

    def describe(self) -> dict[str, Any]:
        return {"state": self.state.value, "leader": self.is_leader,
                "generation": self.generation, "candidate": self.election.candidate}
