"""How long a rebalance takes to stop a member's fetchers (``calibrate --fetcher-stop-onto``).

A legacy rebalance stops its member's fetchers before it releases anything, and the group
waits for the slowest owner. The fetcher thread looks at its stop flag only between
``consume()`` calls, and its wait for the next message is one poll (``POLL_S``, 100 ms), so a
stop asked at a moment unrelated to the thread's cycle (a watch firing) waits the rest of that
poll, then the client closes: a uniform wait whose ends are measured here.

A clean leave is different: the leaver's own consume loop sees the stop when its stream hands
it a message, which the fetcher thread has just queued before starting a new poll, so the
leave's stop waits the whole poll (``calibration.leave``: ``fetcher_close_traffic_ms``).

:func:`measure_fetcher_stops` runs the connector's own ``FetcherManager`` on real servers on
an idle topic (a rebalance's stop under traffic is the same wait cut short by the next
message, which the simulator draws from the cell's rate), asks it to stop after a random
pause and times ``stop_connections``. :func:`uniform_ends` turns the durations into the
uniform's ends the simulator draws from.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zkconsumer.datapath.fetcher import FetcherManager

STOP_REPEATS = 24
STOP_PARTITIONS = 2  # the legacy herd's share at N = 12 over 24 partitions; one fetcher thread


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
    from kazoo.client import KazooClient

    from zkconsumer.admin import create_topic
    from zkconsumer.config import ConsumerConfig
    from zkconsumer.datapath.chunks import ChunkQueue
    from zkconsumer.datapath.fetcher import FetcherManager
    from zkconsumer.datapath.position import PartitionTopicInfo

    rng = random.Random(seed)
    run = uuid.uuid4().hex[:8]
    topic = f"calibrate-stop-{run}"
    create_topic(zk_connect, topic, partitions, bootstrap=bootstrap)
    zk = KazooClient(hosts=zk_connect)
    zk.start(timeout=10)
    out: list[float] = []
    try:
        for i in range(repeats):
            config = ConsumerConfig({"zookeeper.connect": zk_connect,
                                     "group.id": f"calibrate-stop-{run}-{i}",
                                     "auto.offset.reset": "largest"})
            queue = ChunkQueue(16, f"{topic}-{i}")
            manager = FetcherManager(config, "stopper", zk)
            manager.start_connections([PartitionTopicInfo(topic, p, queue, -1, -1, "stopper-0")
                                       for p in range(partitions)])
            try:
                _wait_fetching(manager, partitions, 30.0)
                time.sleep(1.0 + rng.random())
                start = time.monotonic()
                manager.stop_connections()
                out.append(round((time.monotonic() - start) * 1000, 3))
            finally:
                manager.shutdown()
    finally:
        zk.stop()
        zk.close()
    return out


def _wait_fetching(manager: FetcherManager, partitions: int, timeout_s: float) -> None:
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
