"""A member's own CPU per operation, measured with thread CPU clocks (``zkconsumer calibrate``).

The placement model (:mod:`zkconsumer.sim.placement`) queues each member's CPU work on its
process and the processes on the cores, so what it needs is the CPU one operation costs the
member itself, not the wall time and not the rest of the process:

* **per ZooKeeper request**: a kazoo client's synchronous ``get`` and ``create``, timed by
  the CPU clocks of the two threads a member's request runs on, the calling thread
  (``time.thread_time``) and the client's connection thread
  (``time.pthread_getcpuclockid``), which writes the request and reads the reply; the other
  threads of the process (the embedded broker's client, a test runner) are not counted;
* **per rebalance step**: the legacy assignor's plan over a group of N registrations
  (:func:`zkconsumer.rebalance.plan.plan_rebalance` with ``legacy-range``, what every member
  runs in every attempt), timed on the calling thread for several N; its CPU per member of the
  view is ``plan_us_per_member``.
"""

from __future__ import annotations

import logging
import statistics
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

log = logging.getLogger(__name__)

PLAN_SIZES = (100, 1000, 5000)
PLAN_PARTITIONS = 128
PLAN_REPEATS = 5


@dataclass(frozen=True)
class PlanSample:
    """The legacy range plan over ``members`` registrations: thread CPU (median of repeats)."""

    members: int
    partitions: int
    cpu_ms: float

    @property
    def us_per_member(self) -> float:
        return self.cpu_ms * 1000.0 / self.members


def plan_cpu(sizes: Sequence[int] = PLAN_SIZES, partitions: int = PLAN_PARTITIONS,
             repeats: int = PLAN_REPEATS) -> list[PlanSample]:
    """One :class:`PlanSample` per group size: legacy ids, one thread each, one topic."""
    from zkconsumer.assignors import get_assignor
    from zkconsumer.rebalance.plan import GroupView, plan_rebalance
    from zkconsumer.topic_filter import topic_count_from_registration
    from zkconsumer.zk.codec import ConsumerRegistration

    assignor = get_assignor("legacy-range")
    samples = []
    for n in sizes:
        if n < 1:
            raise ValueError(f"plan sizes must be >= 1, got {n}")
        regs = {f"g_host-{i:08x}": ConsumerRegistration((("t", 1),), "static", 1)
                for i in range(n)}
        view = GroupView(regs, {"t": range(partitions)})
        me = next(iter(regs))
        mine = topic_count_from_registration(me, regs[me], True).thread_ids_per_topic(None)
        times = []
        quiet = logging.getLogger("zkconsumer.assignors")
        level = quiet.level
        quiet.setLevel(logging.ERROR)  # N > P: the "no partitions for threads ..." warning
        try:
            for _ in range(max(1, repeats)):
                t0 = time.thread_time()
                plan_rebalance(view, mine, assignor)
                times.append((time.thread_time() - t0) * 1000.0)
        finally:
            quiet.setLevel(level)
        samples.append(PlanSample(n, partitions, statistics.median(times)))
    return samples


def plan_us_per_member(samples: Sequence[PlanSample]) -> float | None:
    """The CPU per member of the view at the largest N measured (the per-member slope is what
    scales; at small N fixed costs weigh)."""
    if not samples:
        return None
    return max(samples, key=lambda s: s.members).us_per_member


def _thread_clock(thread: threading.Thread) -> Callable[[], float]:
    """CPU seconds of ``thread`` so far (its POSIX thread CPU clock)."""
    ident = thread.ident
    if ident is None:
        raise ValueError(f"thread {thread.name!r} has not started")
    clock = time.pthread_getcpuclockid(ident)
    return lambda: time.clock_gettime(clock)


@dataclass(frozen=True)
class RequestCpu:
    """A member's CPU per synchronous request: the calling thread and its connection thread."""

    op: str
    requests: int
    caller_ms: float
    connection_ms: float

    @property
    def cpu_ms(self) -> float:
        return self.caller_ms + self.connection_ms


def request_cpu(zk_connect: str, samples: int = 300) -> list[RequestCpu]:
    """``samples`` reads then ``samples`` creates from one kazoo client, by thread clocks."""
    from kazoo.client import KazooClient

    before = set(threading.enumerate())
    client = KazooClient(hosts=zk_connect)
    client.start(timeout=10)
    base = f"/zkconsumer-calibrate/{uuid.uuid4().hex[:8]}-thread-cpu"
    try:
        started = [t for t in threading.enumerate() if t not in before and t.is_alive()]
        clocks = [_thread_clock(t) for t in started]
        client.ensure_path(base)
        counter = iter(range(10**9))
        out = []
        for op, call in (("read", lambda: client.get(base)),
                         ("write", lambda: client.create(f"{base}/c{next(counter)}"))):
            other0 = sum(c() for c in clocks)
            caller0 = time.thread_time()
            for _ in range(samples):
                call()
            caller = time.thread_time() - caller0
            other = sum(c() for c in clocks) - other0
            out.append(RequestCpu(op, samples, caller * 1000 / samples,
                                  other * 1000 / samples))
        return out
    finally:
        try:
            client.delete(base, recursive=True)
        finally:
            client.stop()
            client.close()


def thread_cpu_parameters(requests: Sequence[RequestCpu], plans: Sequence[PlanSample]
                          ) -> dict[str, float]:
    """The calibration parameters these measurements give (those measured)."""
    values: dict[str, float] = {}
    for r in requests:
        values[f"client_{r.op}_cpu_ms"] = round(r.cpu_ms, 4)
    per_member = plan_us_per_member(plans)
    if per_member is not None:
        values["plan_us_per_member"] = round(per_member, 3)
    return values
