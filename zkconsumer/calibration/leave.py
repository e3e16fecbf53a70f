"""How long a cleanly leaving connector takes to stop, and how spread the sampled durations are.

Two calibration parameters come from here (``zkconsumer calibrate``):

* **The leave.** In a legacy leave the rest of the group waits for the leaver: nothing moves
  until its owner znodes and registration are deleted, and those deletes come after it has
  stopped. :func:`measure_leaves` runs the lab's own ``zk-range`` member (the body the real
  mode runs, :func:`zkconsumer.lab.member.run_member`) in a thread on the real servers, lets it
  own every partition of an idle topic, asks it to stop as a real leave does, and reads its own
  records: the stop request until its consume loop saw it (``stopping``: the loop looks at its
  flag when ``next()`` on the stream returns, a message or ``consumer.timeout.ms``) is the
  *wake*; from there until its fetchers were stopped (``revoked``: the connector's shutdown
  closes its watches, stops its rebalancer and auto-commit threads and stops the fetchers) is
  the *shutdown*. The ZooKeeper writes after that (commit, owner deletes, registration) are
  simulated as writes. The topic is idle so that the wake is the loop's whole timeout wait
  (the simulator shortens it by the traffic of the cell, as it does the fetcher poll): the
  stop lands uniformly in that wait, so the wake's median is its mean, which scatters less
  over a few leaves than their median.
* **The close under traffic.** A fetcher client whose partitions carry messages has a fetch
  in flight when it is closed, which the broker holds up to ``fetch.wait.max.ms`` (100 ms)
  unless data comes; an idle one closes at once. So the leaves are measured twice: on the
  idle topic (the wake, ``leave_shutdown_ms``) and with a producer writing the lab herd's
  per-partition rate to a one-partition topic (``fetcher_close_traffic_ms``: the shutdown
  then, the fetcher stop of any member whose partitions carry traffic). On the reference
  machine the idle shutdown took about 10 ms and the one under traffic about 100.
* **The spread.** Every duration the simulator samples is its mean times a factor of
  coefficient of variation ``jitter_cv``. :func:`jitter_cv` estimates it from the repeated
  measured durations of ``calibrate`` (reads, creates, watch deliveries, session set-ups, the
  leaves' shutdowns): per series a robust coefficient of variation (:func:`robust_cv`: the
  interquartile range over 1.349, the normal's, divided by the median, so a GC pause in 300
  samples does not set the spread of every step), and the median over the series.
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

LEAVE_REPEATS = 8
LEAVE_PARTITIONS = 4
# The lab herd's traffic on one partition: Timing.produce_rate (40 messages/s) over the
# validation plans' 24 partitions.
TRAFFIC_MESSAGES_PER_S = 40.0 / 24
# The interquartile range of a normal distribution in standard deviations.
NORMAL_IQR_SD = 1.349


@dataclass(frozen=True)
class LeaveSample:
    """One clean leave of a lab member that owned ``partitions`` partitions (ms)."""

    partitions: int
    wake_ms: float  # stop requested -> its consume loop saw the request
    shutdown_ms: float  # -> its fetchers were stopped (the shutdown before its writes)
    gone_ms: float | None  # -> its registration znode was gone, as a watcher saw it
    messages_per_s: float = 0.0  # the traffic on its partitions while it ran

    def to_dict(self) -> dict[str, float | int | None]:
        return asdict(self)


def quartiles(samples: Sequence[float]) -> tuple[float, float, float]:
    """(Q1, median, Q3) by linear interpolation between order statistics (numpy's default)."""
    if not samples:
        raise ValueError("quartiles of no samples")
    xs = sorted(float(x) for x in samples)

    def at(q: float) -> float:
        pos = q * (len(xs) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(xs) - 1)
        return xs[lo] + (pos - lo) * (xs[hi] - xs[lo])
    return at(0.25), at(0.5), at(0.75)


def robust_cv(samples: Sequence[float]) -> float:
    """Coefficient of variation from the quartiles: (Q3 - Q1) / 1.349 / median.

    For normal samples it estimates the standard deviation over the mean; unlike them it is
    not moved by a few outliers. Needs at least 4 samples and a positive median.
    """
    if len(samples) < 4:
        raise ValueError(f"a coefficient of variation needs at least 4 samples, got "
                         f"{len(samples)}")
    q1, med, q3 = quartiles(samples)
    if med <= 0:
        raise ValueError(f"a coefficient of variation needs a positive median, got {med!r}")
    return (q3 - q1) / NORMAL_IQR_SD / med


def jitter_cv(series: Mapping[str, Sequence[float]]) -> tuple[float, dict[str, float]]:
    """``jitter_cv``: the median of the series' robust coefficients of variation.

    Returns it rounded to 3 decimals and each series' own value (rounded alike), for the
    record. Series with fewer than 4 samples are left out; none left is an error.
    """
    per = {name: round(robust_cv(xs), 3) for name, xs in sorted(series.items())
           if len(xs) >= 4}
    if not per:
        raise ValueError(f"no series of at least 4 durations to estimate jitter_cv from: "
                         f"{ {k: len(v) for k, v in series.items()} }")
    return round(statistics.median(per.values()), 3), per


def leave_parameters(samples: Sequence[LeaveSample]) -> dict[str, float]:
    """``leave_wake_ms`` (the mean wake of the idle leaves: a uniform wait's median),
    ``leave_shutdown_ms`` (their median shutdown) and, when some leaves ran under traffic,
    ``fetcher_close_traffic_ms`` (their median shutdown)."""
    idle = [s for s in samples if s.messages_per_s <= 0]
    busy = [s for s in samples if s.messages_per_s > 0]
    if not idle:
        raise ValueError("no measured leave on an idle topic")
    out = {"leave_wake_ms": round(statistics.fmean(s.wake_ms for s in idle), 2),
           "leave_shutdown_ms": round(statistics.median(s.shutdown_ms for s in idle), 2)}
    if busy:
        out["fetcher_close_traffic_ms"] = round(statistics.median(s.shutdown_ms for s in busy),
                                                2)
    return out


def read_records(path: Path) -> list[dict[str, object]]:
    """A member's records file, line by line (a line cut short by a stop is skipped; no file:
    nothing recorded)."""
    out: list[dict[str, object]] = []
    if not path.is_file():
        return out
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
    return out


def leave_from_records(records: Sequence[Mapping[str, object]], requested: float,
                       partitions: int, gone: float | None,
                       messages_per_s: float = 0.0) -> LeaveSample:
    """One leave from the member's records: its ``stopping`` and its last ``revoked``."""
    stopping = [float(r["ts"]) for r in records  # type: ignore[arg-type]
                if r.get("k") == "lc" and r.get("w") == "stopping"]
    revoked = [float(r["ts"]) for r in records  # type: ignore[arg-type]
               if r.get("k") == "tl" and r.get("w") == "revoked"
               and float(r["ts"]) >= requested]  # type: ignore[arg-type]
    if not stopping or not revoked:
        raise RuntimeError(f"the leaving member recorded no stop (stopping: {stopping}, "
                           f"revoked after the request: {revoked})")
    return LeaveSample(partitions, round((stopping[0] - requested) * 1000, 3),
                       round((max(revoked) - stopping[0]) * 1000, 3),
                       None if gone is None else round((gone - requested) * 1000, 3),
                       messages_per_s)


def measure_leaves(zk_connect: str, bootstrap: str, repeats: int = LEAVE_REPEATS,
                   partitions: int = LEAVE_PARTITIONS, seed: int = 0,
                   messages_per_s: float = 0.0) -> list[LeaveSample]:
    """``repeats`` clean leaves of a lab ``zk-range`` member owning ``partitions`` partitions.

    Each member starts alone in a fresh group, owns every partition and fetches; after a
    random pause (seeded, up to a second: the request lands anywhere in the loop's wait) it
    is stopped as the real mode's leave stops it. With ``messages_per_s`` a producer writes
    that many messages a second to each partition the whole time.
    """
    from zkconsumer.lab.drivers import MemberSpec
    from zkconsumer.lab.handles import ThreadMember
    from zkconsumer.scenarios.timing import Timing
    from zkconsumer.zk import paths

    rng = random.Random(seed)
    samples: list[LeaveSample] = []
    with measuring_topic(zk_connect, bootstrap, "calibrate-leave", partitions,
                         messages_per_s) as (topic, watcher):
        with tempfile.TemporaryDirectory(prefix="zkconsumer-leave-") as tmp:
            for i in range(repeats):
                group = f"{topic}-{i}"
                spec = MemberSpec(protocol="zk-range", member="leaver", incarnation=0,
                                  topic=topic, group=group, partitions=partitions,
                                  zk_connect=zk_connect, bootstrap=bootstrap,
                                  records_path=str(Path(tmp) / f"leaver-{i}.jsonl"),
                                  timing=Timing())
                handle = ThreadMember(spec)
                handle.start()
                try:
                    wait_owned(watcher, group, topic, partitions, [handle], 60.0)
                except RuntimeError:
                    handle.stop()
                    raise
                time.sleep(1.0 + rng.random())
                ids = watcher.get_children(paths.consumer_ids(group))
                gone: list[float] = []
                if len(ids) == 1:
                    watcher.exists(paths.consumer_registration(group, ids[0]),
                                   watch=lambda _e, g=gone: g.append(time.time()))
                requested = time.time()
                handle.stop()
                end = time.monotonic() + 10
                while not gone and time.monotonic() < end:
                    time.sleep(0.01)
                sample = leave_from_records(read_records(Path(spec.records_path)), requested,
                                            partitions, gone[0] if gone else None,
                                            messages_per_s)
                log.info("leave %d: %s", i, sample)
                samples.append(sample)
    return samples


@contextlib.contextmanager
def measuring_topic(zk_connect: str, bootstrap: str, prefix: str, partitions: int,
                    messages_per_s: float = 0.0) -> Iterator[tuple[str, Any]]:
    """A new topic ``prefix-<run>`` of ``partitions`` partitions, ``messages_per_s`` messages
    a second written to each of them (none for 0), and a started kazoo client; the producer
    and the client are stopped after."""
    from kazoo.client import KazooClient

    from zkconsumer.admin import create_topic

    topic = f"{prefix}-{uuid.uuid4().hex[:8]}"
    create_topic(zk_connect, topic, partitions, bootstrap=bootstrap)
    zk = KazooClient(hosts=zk_connect)
    zk.start(timeout=10)
    traffic = Traffic(bootstrap, topic, partitions, messages_per_s) if messages_per_s > 0 \
        else None
    try:
        yield topic, zk
    finally:
        if traffic is not None:
            traffic.stop()
        zk.stop()
        zk.close()


def wait_owned(watcher: Any, group: str, topic: str, partitions: int,
               handles: Sequence[Any], timeout_s: float) -> None:
    """Until every partition of ``topic`` has an owner znode in ``group``; an error naming the
    topic if that takes over ``timeout_s`` or a measured member's thread ends first."""
    from zkconsumer.zk import paths

    owners = [paths.owner(group, topic, p) for p in range(partitions)]
    deadline = time.monotonic() + timeout_s
    while not all(watcher.exists(o) for o in owners):
        if time.monotonic() > deadline or not all(h.alive() for h in handles):
            raise RuntimeError(f"the measured group did not own every partition of {topic} "
                               f"within {timeout_s:.0f} s")
        time.sleep(0.05)


def measured_leaves(zk_connect: str, bootstrap: str, repeats: int = LEAVE_REPEATS
                    ) -> list[LeaveSample]:
    """The calibration's leaves: ``repeats`` on an idle topic of :data:`LEAVE_PARTITIONS`
    partitions, then ``repeats`` on one partition carrying :data:`TRAFFIC_MESSAGES_PER_S`."""
    return (measure_leaves(zk_connect, bootstrap, repeats)
            + measure_leaves(zk_connect, bootstrap, repeats, partitions=1, seed=1,
                             messages_per_s=TRAFFIC_MESSAGES_PER_S))


class Traffic:
    """A producer thread writing ``rate`` messages a second to each of ``partitions``."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, rate: float) -> None:
        from confluent_kafka import Producer

        self._producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
        self._topic, self._partitions, self._rate = topic, partitions, rate
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="calibrate-leave-traffic",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        period = 1.0 / (self._rate * self._partitions)
        i = 0
        while not self._stop.wait(period):
            self._producer.produce(self._topic, value=str(i).encode(),
                                   partition=i % self._partitions)
            self._producer.poll(0)
            i += 1

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._producer.flush(5)
