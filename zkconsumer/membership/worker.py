"""The thread both coordination modes run on: woken by reasons, one pass per batch of them.

ZooKeeper forbids blocking its callback thread, so watch and session callbacks only record a
reason (:meth:`ReasonThread.wake`) and the mode's own thread does the ZooKeeper work. Reasons that
arrive while a pass runs are collected and coalesce into exactly one more pass (the original's
``isWatcherTriggered`` flag, KAFKA-265). The legacy rebalancer (``rebalance/rebalancer.py``) and
the leader mode's coordinator (``coordination/coordinator.py``) differ only in what one pass does
and in how a failure is reported, which they define in :meth:`ReasonThread.handle` and
:meth:`ReasonThread.crashed`.
"""

from __future__ import annotations

import enum
import logging
import threading
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

R = TypeVar("R", bound=enum.Enum)  # why the thread woke up
S = TypeVar("S", bound=enum.Enum)  # the mode's states

#: How often an idle thread looks at its stop flag without being woken (the original's
#: watcher executor checked for shutdown once a second).
IDLE_CHECK_S = 1.0


class ReasonThread(Generic[R, S]):
    """One daemon thread, its pending reasons, its state and its stop flag."""

    def __init__(self, consumer_id: str, thread_name: str, role: str, initial: S,
                 stopped: S) -> None:
        self.consumer_id = consumer_id
        self.role = role  # "rebalancer" or "coordinator", for logs
        self.cond = threading.Condition()  # guards ``pending`` and what :meth:`taken` moves
        self.pending: set[R] = set()
        self.stopping = threading.Event()
        self._state = initial
        self._stopped_state = stopped
        self._thread = threading.Thread(target=self._run, name=thread_name, daemon=True)

    # --- any thread ------------------------------------------------------------------------------

    @property
    def state(self) -> S:
        return self._state

    def set_state(self, state: S) -> None:
        if state is not self._state:
            log.debug("[%s] %s %s -> %s", self.consumer_id, self.role, self._state.name,
                      state.name)
            self._state = state

    def start(self) -> None:
        if not self._thread.is_alive() and not self.stopping.is_set():
            self._thread.start()

    def wake(self, reason: R, detail: str = "") -> None:
        """Non-blocking: record a reason and wake the thread (safe on kazoo's threads)."""
        with self.cond:
            self.pending.add(reason)
            self.cond.notify_all()
        log.debug("[%s] %s woken: %s %s", self.consumer_id, self.role, reason.value, detail)

    def take(self, reason: R) -> bool:
        """Remove ``reason`` from the pending ones; True if it was pending."""
        with self.cond:
            pending = reason in self.pending
            self.pending.discard(reason)
        return pending

    def stop_thread(self, timeout: float) -> bool:
        """Set the stop flag and wait up to ``timeout`` for a running pass; True if it ended."""
        with self.cond:
            self.stopping.set()
            self.cond.notify_all()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        alive = self._thread.is_alive()
        if not alive:
            self.set_state(self._stopped_state)
        return not alive

    # --- what a mode defines -------------------------------------------------------------------

    def taken(self) -> None:
        """Called with :attr:`cond` held right after the pending reasons were taken: move what
        must go with them (callers waiting for this pass)."""

    def handle(self, reasons: set[R]) -> None:
        """One pass over the reasons gathered since the last one."""
        raise NotImplementedError

    def crashed(self, exc: BaseException) -> None:
        """The thread is ending on an error :meth:`handle` let through: report it."""

    # --- the thread ------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self.stopping.is_set():
                with self.cond:
                    while not self.pending and not self.stopping.is_set():
                        self.cond.wait(IDLE_CHECK_S)
                    if self.stopping.is_set():
                        break
                    reasons, self.pending = self.pending, set()
                    self.taken()
                self.handle(reasons)
        except BaseException as exc:  # the thread's failure must reach the user
            log.exception("[%s] %s thread crashed", self.consumer_id, self.role)
            self.crashed(exc)
        finally:
            self.set_state(self._stopped_state)
