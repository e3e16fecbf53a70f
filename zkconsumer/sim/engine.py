"""The discrete-event core: a time-ordered queue of callbacks, and the CPUs requests run on.

Determinism: events at the same instant run in the order they were scheduled (a sequence number
breaks ties), and nothing here reads the wall clock; all randomness lives in the one seeded
``random.Random`` the protocol models draw from.

Client CPU. A Python process running many connectors executes one bytecode stream at a time (the
GIL), so when ``SimConfig.client_processes`` puts several members in one process their client-side
request work is shared: :class:`SharedCpu` is a processor-sharing server (every active job
progresses at 1/n speed), which is how the GIL's switch interval treats runnable threads over
times much longer than 5 ms. :class:`DedicatedCpu` is one member per machine. What one request
costs on either is the calibrated client CPU times ``SimConfig.client_cpu_scale`` (a crowded
process spends more CPU per request: :mod:`zkconsumer.sim.calibration`).
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Callable
from typing import Any, Protocol

log = logging.getLogger(__name__)

Callback = Callable[..., Any]
_EPS = 1e-12


class SimulationLimit(RuntimeError):
    """The run hit its event or time budget before the group settled."""


class Engine:
    """Run callbacks in simulated-time order."""

    def __init__(self, max_events: int = 50_000_000) -> None:
        self.now = 0.0
        self.events = 0
        self._heap: list[tuple[float, int, bool, Callback, tuple[Any, ...]]] = []
        self._seq = 0
        self._work = 0  # queued events that are not timers
        self._max_events = max_events

    def at(self, when: float, fn: Callback, *args: Any) -> None:
        self._push(when, False, fn, args)

    def after(self, delay: float, fn: Callback, *args: Any) -> None:
        self._push(self.now + delay, False, fn, args)

    def timer(self, when: float, fn: Callback, *args: Any) -> None:
        """A timeout: it fires if other work is still queued, but keeps nothing alive.

        A rebalance timeout of five minutes must not stretch every run to five minutes when
        the group settled in seconds (when it fires it usually finds nothing to do).
        """
        self._push(when, True, fn, args)

    def _push(self, when: float, timer: bool, fn: Callback, args: tuple[Any, ...]) -> None:
        self._seq += 1
        if not timer:
            self._work += 1
        heapq.heappush(self._heap, (max(when, self.now), self._seq, timer, fn, args))

    def run(self, until: float) -> bool:
        """Run until no work is queued (True) or ``until`` is passed (False)."""
        heap = self._heap
        pop = heapq.heappop
        while heap and self._work:
            when, _, timer, fn, args = heap[0]
            if when > until:
                self.now = until
                return False
            pop(heap)
            if not timer:
                self._work -= 1
            self.now = when
            self.events += 1
            if self.events > self._max_events:
                raise SimulationLimit(f"more than {self._max_events} events by t={when:.3f} s")
            fn(*args)
        return True


class Cpu(Protocol):
    def run(self, work_s: float, fn: Callback, *args: Any) -> None:
        """Do ``work_s`` seconds of CPU work, then call ``fn(*args)``."""


class DedicatedCpu:
    """A member with a core of its own: work takes exactly its length."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def run(self, work_s: float, fn: Callback, *args: Any) -> None:
        self._engine.after(work_s, fn, *args)


class SharedCpu:
    """Processor sharing among the members of one client process (see the module docstring).

    Virtual time advances at 1/n per second with n active jobs; a job submitted at virtual time
    v with w seconds of work completes when virtual time reaches v + w. Only the earliest
    completion is scheduled; a token invalidates it when n changes.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._vt = 0.0
        self._last = 0.0
        self._jobs: list[tuple[float, int, Callback, tuple[Any, ...]]] = []
        self._seq = 0
        self._token = 0

    def run(self, work_s: float, fn: Callback, *args: Any) -> None:
        self._advance()
        self._seq += 1
        heapq.heappush(self._jobs, (self._vt + work_s, self._seq, fn, args))
        self._reschedule()

    def _advance(self) -> None:
        now = self._engine.now
        if self._jobs:
            self._vt += (now - self._last) / len(self._jobs)
        self._last = now

    def _reschedule(self) -> None:
        self._token += 1
        if self._jobs:
            finish_vt = self._jobs[0][0]
            delay = max(0.0, finish_vt - self._vt) * len(self._jobs)
            self._engine.after(delay, self._complete, self._token)

    def _complete(self, token: int) -> None:
        if token != self._token:
            return
        self._advance()
        while self._jobs and self._jobs[0][0] <= self._vt + _EPS:
            _, _, fn, args = heapq.heappop(self._jobs)
            self._engine.after(0.0, fn, *args)
        self._reschedule()
