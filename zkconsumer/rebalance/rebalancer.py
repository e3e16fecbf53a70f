"""The rebalancer thread: the original's watcher executor and ``syncedRebalance``.

One thread (``<consumer id>_watcher_executor``) owns every rebalance. Watch and session callbacks
only call :meth:`Rebalancer.trigger`, which records a reason and wakes the thread; reasons that
arrive while a rebalance runs are collected and coalesce into exactly one more rebalance (the
original's ``isWatcherTriggered`` flag, KAFKA-265; the thread itself is
``membership/worker.py``'s, shared with the leader mode). The first rebalance of
``create_message_streams`` is also run here; the caller waits for it with
:meth:`Rebalancer.rebalance_now`, which raises its ``ConsumerRebalanceFailedException`` as the
original's synchronous first rebalance did. Later failures are logged, reported as events and
leave the thread running: the consumer stays registered and owns nothing until the next trigger
(KAFKA-4228 was never merged).

States and transitions (one DEBUG log line each)::

    IDLE --trigger--> REBALANCING --attempt ok--> IDLE
                      REBALANCING --attempt failed--> BACKOFF --rebalance.backoff.ms--> REBALANCING
                      REBALANCING --last attempt failed--> IDLE (ConsumerRebalanceFailedException)
    any --stop()--> STOPPED
"""

from __future__ import annotations

import enum
import logging
import time
from concurrent.futures import Future
from typing import Any, Protocol

from zkconsumer.errors import ConsumerRebalanceFailedException
from zkconsumer.events import EventBus
from zkconsumer.membership.triggers import Trigger
from zkconsumer.membership.worker import ReasonThread
from zkconsumer.metrics import RebalanceMetrics
from zkconsumer.zk.session import SessionClosedError

log = logging.getLogger(__name__)


class RebalancerState(enum.Enum):
    IDLE = "idle"
    REBALANCING = "rebalancing"
    BACKOFF = "backoff"
    STOPPED = "stopped"


class RebalanceTarget(Protocol):
    """The ZooKeeper work the rebalancer drives (``rebalance/attempt.py``)."""

    def prepare(self, reasons: set[Trigger]) -> set[Trigger]:
        """Handle a new session, re-arm watches, refresh wildcard topics; the reasons that
        call for a rebalance (empty: none)."""

    def attempt(self, number: int) -> bool:
        """One rebalance attempt; False (or an exception) means it failed."""

    def after_failed_attempt(self) -> None:
        """Close fetchers and clear every queue before backing off."""

    def describe_assignment(self) -> dict[str, dict[int, str]]:
        """What this member owns now, for the success event."""

    def is_shutting_down(self) -> bool: ...


class Rebalancer(ReasonThread[Trigger, RebalancerState]):
    """Owns the watcher-executor thread; see the module docstring for the state machine."""

    def __init__(self, consumer_id: str, target: RebalanceTarget, max_retries: int,
                 backoff_ms: int, events: EventBus, metrics: RebalanceMetrics) -> None:
        super().__init__(consumer_id, f"{consumer_id}_watcher_executor", "rebalancer",
                         RebalancerState.IDLE, RebalancerState.STOPPED)
        self._target = target
        self._max_retries = max_retries
        self._backoff_s = backoff_ms / 1000.0
        self._events = events
        self._metrics = metrics
        self._waiters: list[Future[None]] = []
        self._batch_waiters: list[Future[None]] = []  # the waiters of the pass running now
        self.last_error: BaseException | None = None

    # --- called from any thread ----------------------------------------------------------------

    def trigger(self, reason: Trigger, detail: str = "") -> None:
        """Non-blocking: record a reason and wake the thread (safe on kazoo's threads)."""
        self.wake(reason, detail)

    def rebalance_now(self, reason: Trigger, timeout: float | None = None) -> None:
        """Run a rebalance on the rebalancer thread and wait for its outcome."""
        future: Future[None] = Future()
        with self.cond:
            if self.stopping.is_set():
                raise ConsumerRebalanceFailedException(f"{self.consumer_id} is shutting down")
            self._waiters.append(future)
            self.pending.add(reason)
            self.cond.notify_all()
        future.result(timeout)

    def stop(self, timeout: float = 10.0) -> bool:
        """Stop the thread; waits for a running attempt up to ``timeout``. True if it ended."""
        ended = self.stop_thread(timeout)
        if not ended:
            log.warning("[%s] rebalancer thread did not stop within %.1f s", self.consumer_id,
                        timeout)
        self._fail_waiters(ConsumerRebalanceFailedException(f"{self.consumer_id} shut down"))
        return ended

    def _fail_waiters(self, exc: BaseException) -> None:
        with self.cond:
            waiters, self._waiters = self._waiters, []
        for w in waiters:
            if not w.done():
                w.set_exception(exc)

    # --- the thread ------------------------------------------------------------------------------

    def taken(self) -> None:
        self._batch_waiters, self._waiters = self._waiters, []

    def crashed(self, exc: BaseException) -> None:
        self.last_error = exc
        self._events.emit("error", where="rebalancer", error=repr(exc))
        self._fail_waiters(exc)

    def handle(self, reasons: set[Trigger]) -> None:
        waiters, self._batch_waiters = self._batch_waiters, []
        self._handle(reasons, waiters)

    def _handle(self, reasons: set[Trigger], waiters: list[Future[None]]) -> None:
        outcome: BaseException | None = None
        try:
            needed = self._target.prepare(reasons)
            if needed or waiters:
                self.synced_rebalance(needed or reasons)
        except SessionClosedError as exc:
            outcome = exc
            if not self.stopping.is_set():
                raise
        except ConsumerRebalanceFailedException as exc:
            outcome = exc
            self.last_error = exc
            log.error("[%s] error during syncedRebalance: %s", self.consumer_id, exc)
        except Exception as exc:
            outcome = exc
            self.last_error = exc
            log.exception("[%s] error during syncedRebalance", self.consumer_id)
            self._events.emit("error", where="rebalance", error=repr(exc))
            # Watches may be left unarmed (the error may have hit their re-read): come back
            # after a backoff instead of waiting, deaf, for a trigger that cannot arrive.
            if not self.stopping.wait(self._backoff_s):
                with self.cond:
                    self.pending |= (reasons - {Trigger.STARTUP}) | {Trigger.REARM}
        finally:
            for w in waiters:
                if outcome is None:
                    w.set_result(None)
                else:
                    w.set_exception(outcome)

    def synced_rebalance(self, reasons: set[Trigger]) -> None:
        """Up to ``rebalance.max.retries`` attempts, ``rebalance.backoff.ms`` apart."""
        if self._target.is_shutting_down():
            return
        started = time.monotonic()
        why = sorted(r.value for r in reasons)
        self._events.emit("rebalance_started", reasons=why)
        last_error: Any = None
        for number in range(self._max_retries):
            if self._target.is_shutting_down() or self.stopping.is_set():
                self.set_state(RebalancerState.IDLE)
                return
            self.set_state(RebalancerState.REBALANCING)
            if self._take_new_session() and Trigger.NEW_SESSION.value not in why:
                why.append(Trigger.NEW_SESSION.value)
            self._metrics.add(attempts=1)
            self._events.emit("attempt_started", attempt=number)
            log.debug("[%s] begin rebalancing consumer %s try #%d", self.consumer_id,
                      self.consumer_id, number)
            try:
                done = self._target.attempt(number)
                last_error = None if done else "owner conflict or shutdown"
            except SessionClosedError:
                raise
            except Exception as exc:
                log.info("[%s] exception during rebalance: %r", self.consumer_id, exc,
                         exc_info=log.isEnabledFor(logging.DEBUG))
                done, last_error = False, repr(exc)
            log.debug("[%s] end rebalancing consumer %s try #%d", self.consumer_id,
                      self.consumer_id, number)
            if done:
                self._succeeded(started, number + 1, why)
                return
            self._metrics.add(failed_attempts=1)
            self._events.emit("attempt_failed", attempt=number, error=last_error)
            log.debug("[%s] Rebalancing attempt failed. Clearing the cache before the next "
                      "rebalancing operation is triggered", self.consumer_id)
            self._target.after_failed_attempt()
            self.set_state(RebalancerState.BACKOFF)
            if self.stopping.wait(self._backoff_s):
                self.set_state(RebalancerState.IDLE)
                return
        duration = (time.monotonic() - started) * 1000
        self._metrics.finished(duration, ok=False)
        self.set_state(RebalancerState.IDLE)
        message = f"{self.consumer_id} can't rebalance after {self._max_retries} retries"
        self._events.emit("rebalance_failed", attempts=self._max_retries, duration_ms=duration,
                          error=last_error, reasons=why)
        log.info("[%s] rebalance FAILED after %d attempts in %.0f ms (reasons: %s; last error: "
                 "%s)", self.consumer_id, self._max_retries, duration, ",".join(why), last_error)
        raise ConsumerRebalanceFailedException(message)

    def _take_new_session(self) -> bool:
        """A new session during the retries: register again now, as the original's session
        listener did concurrently, so that the next attempt can find this member."""
        if not self.take(Trigger.NEW_SESSION):
            return False
        self._target.prepare({Trigger.NEW_SESSION})
        return True

    def _succeeded(self, started: float, attempts: int, why: list[str]) -> None:
        duration = (time.monotonic() - started) * 1000
        self._metrics.finished(duration, ok=True)
        self.set_state(RebalancerState.IDLE)
        assignment = self._target.describe_assignment()
        owned = sum(len(p) for p in assignment.values())
        self._events.emit("rebalance_succeeded", attempts=attempts, duration_ms=duration,
                          assignment=assignment, reasons=why)
        log.info("[%s] rebalance succeeded after %d attempt(s) in %.0f ms, owning %d "
                 "partition(s) (reasons: %s)", self.consumer_id, attempts, duration, owned,
                 ",".join(why))
