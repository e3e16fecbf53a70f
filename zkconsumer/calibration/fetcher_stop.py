"""How long stopping a member's fetchers takes, alone and six of one process together
(``calibrate --fetcher-stop-onto``).

A legacy rebalance stops its member's fetchers before it releases anything, and the group
waits for the slowest owner. The fetcher thread looks at its stop flag only between
``consume()`` calls, and its wait for the next message is one poll (``POLL_S``, 100 ms), so a
stop asked at a moment unrelated to the thread's cycle (a watch firing) waits the rest of that
poll, then the client closes: a uniform wait whose ends are measured here
(:func:`measure_fetcher_stops`, on an idle topic; :func:`uniform_ends`).

A clean leave is different: the leaver's own consume loop sees the stop when its stream hands
it a message, which the fetcher thread has just queued before starting a new poll, so the
leave's stop waits the whole poll (``calibration.leave``: ``fetcher_close_traffic_ms``).

Whether the fetchers of one process poll in step, so that a process's members release
together: :func:`measure_crowd_stops` stops six fetchers of one process at the same moment,
under the lab's traffic and each read by a consumer thread, as a rebalance in a process of six
members does; :func:`in_step_share` counts the stops that ended with the others, and
:func:`in_step_fraction` says which share of fetchers on one common poll grid would end as
close together (0: no more than independent polls).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zkconsumer.datapath.chunks import ChunkQueue
    from zkconsumer.datapath.fetcher import FetcherManager

STOP_REPEATS = 24
STOP_PARTITIONS = 2  # the legacy herd's share at N = 12 over 24 partitions; one fetcher thread
CROWD_FETCHERS = 6  # a Spark task's members at N = 12 on two tasks
CROWD_REPEATS = 8
IN_STEP_MS = 10.0  # a stop this close to its crowd's median ended with it
START_SPREAD_S = 0.02  # the crowd's fetchers start up to this far apart, one after the other


@dataclass(frozen=True)
class UniformEnds:
    """The ends of a uniform distribution estimated from a sample (ms)."""

    low_ms: float
    high_ms: float


def uniform_ends(samples: Sequence[float]) -> UniformEnds:
    """The uniform's ends from the sample's extremes, each widened by one mean gap between
    order statistics ((max - min) / (n - 1)): the unbiased estimate, since the expected
    extremes of n uniform draws sit one gap inside the ends. Needs at least 2 samples."""
    if len(samples) < 2:
        raise ValueError(f"the ends of a uniform need at least 2 samples, got {len(samples)}")
    lo, hi = min(samples), max(samples)
    gap = (hi - lo) / (len(samples) - 1)
    return UniformEnds(round(max(0.0, lo - gap), 2), round(hi + gap, 2))


def measure_fetcher_stops(zk_connect: str, bootstrap: str, repeats: int = STOP_REPEATS,
                          partitions: int = STOP_PARTITIONS, seed: int = 0) -> list[float]:
    """``repeats`` stops (ms) of a ``FetcherManager`` fetching ``partitions`` partitions of an
    idle topic, each asked 1-2 s (seeded) after its fetcher started."""
    from zkconsumer.calibration.leave import measuring_topic
    from zkconsumer.datapath.chunks import ChunkQueue

    rng = random.Random(seed)
    out: list[float] = []
    with measuring_topic(zk_connect, bootstrap, "calibrate-stop", partitions) as (topic, zk):
        for i in range(repeats):
            manager = start_fetcher(zk_connect, zk, f"{topic}-{i}", "stopper", topic,
                                     range(partitions), ChunkQueue(16, f"{topic}-{i}"))
            try:
                wait_fetching(manager, partitions, 30.0)
                time.sleep(1.0 + rng.random())
                out.append(_stop_together([manager])[0])
            finally:
                manager.shutdown()
    return out


def start_fetcher(zk_connect: str, zk: Any, group: str, name: str, topic: str,
                   partitions: range, queue: ChunkQueue) -> FetcherManager:
    """A started ``FetcherManager`` of consumer ``name`` in ``group`` fetching ``partitions``
    of ``topic`` from their log end into ``queue``."""
    from zkconsumer.config import ConsumerConfig
    from zkconsumer.datapath.fetcher import FetcherManager
    from zkconsumer.datapath.position import PartitionTopicInfo

    config = ConsumerConfig({"zookeeper.connect": zk_connect, "group.id": group,
                             "auto.offset.reset": "largest"})
    manager = FetcherManager(config, name, zk)
    manager.start_connections([PartitionTopicInfo(topic, p, queue, -1, -1, f"{name}-0")
                               for p in partitions])
    return manager


def wait_fetching(manager: FetcherManager, partitions: int, timeout_s: float) -> None:
    """Until the manager's fetcher threads run for every partition (its leader finder placed
    them); an error naming the count if that takes over ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        threads = manager.fetcher_threads()
        placed = sum(len(t.get("partitions", ())) for t in threads)
        if placed >= partitions:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the measured fetcher placed {placed} of {partitions} "
                               f"partitions within {timeout_s:.0f} s")
        time.sleep(0.05)


def in_step_share(crowds: Sequence[Sequence[float]], within_ms: float = IN_STEP_MS) -> float:
    """The share of the crowds' stops that ended within ``within_ms`` of their crowd's median
    (0 for no stops): about 1 when a process's fetchers poll in step, small when they poll
    independently over a 100 ms poll."""
    near = total = 0
    for stops in crowds:
        xs = sorted(stops)
        if not xs:
            continue
        mid = len(xs) // 2
        median = xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2
        near += sum(1 for x in xs if abs(x - median) <= within_ms)
        total += len(xs)
    return near / total if total else 0.0


def in_step_fraction(measured_share: float, period_ms: float, rate_per_s: float,
                     fetchers: int = CROWD_FETCHERS, crowds: int = 4000, seed: int = 0
                     ) -> float:
    """The share of fetchers on one common poll grid that reproduces a measured
    :func:`in_step_share`: crowds (``fetchers`` stops, each on one grid point with
    the share, else uniform over ``period_ms``, then cut short by an exponential message wait
    at ``rate_per_s``) scored with the same statistic over shares 0, 0.05, ..., 1 (seeded, so
    the same measurement gives the same value); the closest share."""
    best, best_gap = 0.0, float("inf")
    for step in range(21):
        share = step / 20
        rng = random.Random(seed)
        model = []
        for _ in range(crowds):
            grid = rng.uniform(0.0, period_ms)
            crowd = []
            for _ in range(fetchers):
                rest = grid if rng.random() < share else rng.uniform(0.0, period_ms)
                if rate_per_s > 0:
                    rest = min(rest, rng.expovariate(rate_per_s) * 1000.0)
                crowd.append(rest)
            model.append(crowd)
        gap = abs(in_step_share(model) - measured_share)
        if gap < best_gap:
            best, best_gap = share, gap
    return best


def measure_crowd_stops(zk_connect: str, bootstrap: str, repeats: int = CROWD_REPEATS,
                        fetchers: int = CROWD_FETCHERS, seed: int = 0,
                        messages_per_s: float | None = None) -> list[list[float]]:
    """``repeats`` times: ``fetchers`` fetchers of this process, each of :data:`STOP_PARTITIONS`
    partitions of a topic carrying the lab's per-partition traffic (or ``messages_per_s``),
    started up to :data:`START_SPREAD_S` apart and stopped together 3-4 s later (one thread
    each); each stop's duration (ms), sorted."""
    from zkconsumer.calibration.leave import TRAFFIC_MESSAGES_PER_S, measuring_topic
    from zkconsumer.datapath.chunks import ChunkQueue

    rate = TRAFFIC_MESSAGES_PER_S if messages_per_s is None else messages_per_s
    rng = random.Random(seed)
    out: list[list[float]] = []
    with measuring_topic(zk_connect, bootstrap, "calibrate-crowd", fetchers * STOP_PARTITIONS,
                         rate) as (topic, zk):
        for i in range(repeats):
            managers = []
            try:
                for k in range(fetchers):
                    # read as a member's stream reads it: its consumer thread wakes per chunk
                    queue = ChunkQueue(16, f"{topic}-{i}-{k}")
                    _Reader(queue)
                    managers.append(start_fetcher(
                        zk_connect, zk, f"{topic}-{i}-{k}", f"crowd{k}", topic,
                        range(k * STOP_PARTITIONS, (k + 1) * STOP_PARTITIONS), queue))
                    # a process's members restart their fetchers at the end of one rebalance,
                    # within milliseconds of each other
                    time.sleep(rng.random() * START_SPREAD_S)
                for manager in managers:
                    wait_fetching(manager, STOP_PARTITIONS, 30.0)
                time.sleep(3.0 + rng.random())
                out.append(_stop_together(managers))
            finally:
                for manager in managers:
                    manager.shutdown()
    return out


class _Reader:
    """A daemon thread taking chunks off a queue until the process ends, as a member's
    consumer thread reads its stream (a ``put`` wakes it)."""

    def __init__(self, queue: ChunkQueue) -> None:
        import threading

        self._queue = queue
        threading.Thread(target=self._run, name="crowd-reader", daemon=True).start()

    def _run(self) -> None:
        while True:
            self._queue.get(timeout=1.0)


def _stop_together(managers: Sequence[FetcherManager]) -> list[float]:
    """Stop every manager at once, one thread each; each stop's duration (ms), sorted."""
    import threading

    ends = [0.0] * len(managers)
    start = time.monotonic()

    def stop(k: int) -> None:
        managers[k].stop_connections()
        ends[k] = round((time.monotonic() - start) * 1000, 3)
    threads = [threading.Thread(target=stop, args=(k,), name=f"crowd-stop-{k}")
               for k in range(len(managers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(ends)
