"""The leader mode's coordinator: one thread per connector that follows the published record.

It replaces the legacy rebalancer (``rebalance/rebalancer.py``) when ``coordination.mode=leader``
and shares everything else with it: registration, streams and queues, the generation holder,
offsets, fetchers. Watch and session callbacks only hand it a :class:`Wake` reason; reasons
that arrive while it works coalesce into one more pass. One pass:

1. after a new session: forget ownership without committing, register again, stand again;
2. election, when this pass's reasons may have changed it (``states.ELECTION_WAKES``): lead if
   no candidate is before ours, else watch the predecessor only;
3. leader only: re-read what changed and publish a new generation when needed;
4. read the assignment znode (and watch it; while the watch is set, the record last read is
   current, ``assignment.py``), adopt its version for commits, and hand over
   (``handover.py``, step by step): release what moved away (last commit + owner deletion in
   one multi), claim what arrived (one multi; if an owner znode still exists, watch it and
   wait), start the new fetchers.

The thread, its pending reasons and its states are ``membership/worker.py``'s.

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
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from kazoo.exceptions import SessionExpiredError

from zkconsumer.config import ConsumerConfig
from zkconsumer.coordination.assignment import AssignmentWatch
from zkconsumer.coordination.election import LeaderElection
from zkconsumer.coordination.fetchers import PartitionFetchers
from zkconsumer.coordination.gate import LOST, FetchGate
from zkconsumer.coordination.handover import HandoverExecutor
from zkconsumer.coordination.leader import LeaderDuty
from zkconsumer.coordination.record import AssignmentRecord
from zkconsumer.coordination.states import (
    RECORD_READ_WAKES,
    CoordinatorState,
    Wake,
    election_check_needed,
    wake_for,
)
from zkconsumer.errors import ConsumerRebalanceFailedException
from zkconsumer.events import EventBus
from zkconsumer.membership.ownership import Ownership
from zkconsumer.membership.rebalance_listener import ConsumerRebalanceListener
from zkconsumer.membership.worker import ReasonThread
from zkconsumer.metrics import RebalanceMetrics
from zkconsumer.offsets.fenced import FencedOffsetStore
from zkconsumer.subscription import Subscription
from zkconsumer.zk import codec, paths
from zkconsumer.zk.multi import MultiSession
from zkconsumer.zk.session import SessionClosedError, SessionEvent

log = logging.getLogger(__name__)

#: How many times one pass decides again after its publication lost a race. The loss means the
#: assignment znode moved since it was read (another writer got in first, typically a deposed
#: leader whose candidacy had not yet gone, or a retried write of our own whose reply was lost)
#: or this member's own candidate znode is gone; a fresh read and a new decision settle the
#: first kind at the next try. The bound keeps a leader that cannot win (its candidacy gone
#: with its session) from spinning on the coordinator thread: after the last try it applies
#: the record it read, and the next wake (a new session, the assignment znode's watch, the
#: predecessor's) brings it back. A small number, not a measured one.
PUBLISH_TRIES = 5


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
        self.election = LeaderElection(session, self.group, consumer_id,
                                       lambda path: self.wake(Wake.PREDECESSOR, path))
        self.duty = LeaderDuty(session, self.group, consumer_id,
                               config.partition_assignment_strategy,
                               config.exclude_internal_topics, events,
                               lambda t, d: self.wake(wake_for(t), d))
        self._backoff_s = config.rebalance_backoff_ms / 1000.0
        self.gate = FetchGate(fetchers, subscription, ownership, is_shutting_down)
        self.assignment = AssignmentWatch(session, self.group, events,
                                          lambda path: self.wake(Wake.ASSIGNMENT, path))
        self._joined: list[Future[None]] = []
        self.handover = HandoverExecutor(
            consumer_id=consumer_id, config=config, session=session,
            subscription=subscription, ownership=ownership, offsets=offsets, gate=self.gate,
            events=events, metrics=metrics, listener=listener, set_state=self.set_state,
            wake=self.wake,
            joined=lambda: self._resolve_joined(None))
        self.last_error: BaseException | None = None

    # --- any thread ----------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        return self.duty.active and self.election.standing

    @property
    def generation(self) -> int | None:
        return self.handover.generation

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
        if election_check_needed(reasons, self.election.standing):
            if self.election.check():
                self.duty.activate()
            elif self.duty.active:
                self.duty.deactivate()
        record, version = self.assignment.read(force=bool(reasons & RECORD_READ_WAKES))
        if self.duty.active:
            record, version = self._lead(reasons, record, version, session_id)
        if record is not None and version is not None:
            self.handover.apply(record, version, session_id)

    def _lead(self, reasons: set[Wake], record: AssignmentRecord | None, version: int | None,
              session_id: int) -> tuple[AssignmentRecord | None, int | None]:
        """Decide and publish when needed; the record (and its version) to apply afterwards.

        A publication that lost a race (:attr:`Published.conflict`) is decided again over a
        fresh read of the record, at most :data:`PUBLISH_TRIES` times in this pass.
        """
        force = bool(reasons & {Wake.MEMBERSHIP, Wake.NEW_SESSION}) or record is None
        for _ in range(PUBLISH_TRIES):
            published = self.duty.run(record, version, force, self.election.candidate_path
                                      or "", session_id)
            if not published.conflict:
                break
            record, version = self.assignment.read(force=True)
        if published.wrote:
            # what it wrote, at the version its write made; its own watch fires on the write
            # and the next pass reads the record again (and sets the watch again)
            record, version = published.record, published.version
        return record, version

    def _new_session(self) -> None:
        """``handleNewSession``: ownership died with the old session; nothing is committed."""
        log.info("[%s] new ZooKeeper session: re-registering and standing again",
                 self.consumer_id)
        self.gate.reset()
        self.offsets.set_fence(None, None)
        self.handover.forget()
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
        """Shutdown, after the thread stopped: ``HandoverExecutor.release_all``."""
        self.handover.release_all()

    def describe(self) -> dict[str, Any]:
        return {"state": self.state.value, "leader": self.is_leader,
                "generation": self.generation, "candidate": self.election.candidate}
