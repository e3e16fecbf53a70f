"""A legacy member's CPU per rebalance beyond its ZooKeeper requests, measured in a crowd.

The legacy model charges each ZooKeeper request the client CPU ``calibrate`` measures for one
kazoo client, times the factor of a crowded process (K kazoo clients busy in one process:
``client_cpu_scale_by_clients``). A real member does more in a rebalance than its requests:
its rebalancer stops and joins the fetcher threads, their clients close and new ones start
(a librdkafka client, its threads, the assignment and the first fetch), the listeners record
every step, and the threads of 24 members hand the GIL to one another. None of that is a
request, and none of it was measured.

:func:`measure_rebalance_cpu` measures it whole, with the body the herd's real mode runs
(:func:`zkconsumer.lab.member.run_member`, ``zk-range``): ``members`` lab members as threads
of this process on a topic carrying the lab's per-partition traffic, formed and quiet, then
one more member joins and every member rebalances. The process's CPU (every thread, by
``time.process_time``) over a fixed window after the join, less its CPU over an equal quiet
window just before, is the rebalance's; the members' own counters give its ZooKeeper
requests (commits left out, as the lab counts them). :func:`rebalance_cpu_parameters`
subtracts what those requests cost in the model (the calibration's per-request CPU at the
crowd's factor) and divides the rest by the members that rebalanced: ``rebalance_cpu_ms``.
The joiner's own start (its connector, session and threads) is in the window too and is
spread over the members with the rest.
"""

from __future__ import annotations

import logging
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from zkconsumer.calibration.leave import TRAFFIC_MESSAGES_PER_S

log = logging.getLogger(__name__)

CROWD_MEMBERS = 24
CROWD_REPEATS = 3
WINDOW_S = 3.0
QUIET_S = 2.0
READS = ("getData", "getChildren", "exists")
WRITES = ("create", "delete", "multi")


@dataclass(frozen=True)
class RebalanceCpuSample:
    """One join into a crowd of ``members - 1`` lab members in this process."""

    members: int  # in the process after the join, every one of them rebalancing
    rebalanced: int  # members that recorded a rebalance ending after the join
    reads: int  # their ZooKeeper reads in the window
    writes: int  # their ZooKeeper writes in the window (commits left out)
    cpu_ms: float  # process CPU over the window after the join less the quiet window's
    wall_ms: float  # the join until the last member's rebalance ended
    # per member that had fetchers: its first attempt after the join until its fetchers were
    # stopped (``revoked``), the rebalance's fetcher stop under traffic in a crowd
    closes_ms: tuple[float, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "closes_ms": list(self.closes_ms)}


def requests_cpu_ms(sample: RebalanceCpuSample, read_cpu_ms: float, write_cpu_ms: float,
                    scale: float) -> float:
    """What the sample's requests cost in the model: ``scale`` times the per-request CPU."""
    return (sample.reads * read_cpu_ms + sample.writes * write_cpu_ms) * scale


def extra_cpu_ms(sample: RebalanceCpuSample, read_cpu_ms: float, write_cpu_ms: float,
                 scale: float) -> float:
    """The sample's CPU per rebalancing member beyond its requests at ``scale`` times the
    per-request CPU (may be negative: the requests then cost less in the crowd than the
    factor says)."""
    if sample.rebalanced <= 0:
        raise ValueError("a sample with no member that rebalanced measures nothing")
    return ((sample.cpu_ms - requests_cpu_ms(sample, read_cpu_ms, write_cpu_ms, scale))
            / sample.rebalanced)


def costed(sample: RebalanceCpuSample, read_cpu_ms: float, write_cpu_ms: float,
           scale: float) -> dict[str, Any]:
    """The sample as written beside the calibration, with what its requests cost in the
    model (``requests_cpu_ms``) and the rest per member that rebalanced (``rest_ms``)."""
    requests_ms = requests_cpu_ms(sample, read_cpu_ms, write_cpu_ms, scale)
    return {**sample.to_dict(), "requests_cpu_ms": round(requests_ms, 3),
            "rest_ms": round(extra_cpu_ms(sample, read_cpu_ms, write_cpu_ms, scale), 3)}


def rebalance_cpu_parameters(samples: Sequence[RebalanceCpuSample], read_cpu_ms: float,
                             write_cpu_ms: float,
                             scale_at: Callable[[int], float]) -> dict[str, float]:
    """``rebalance_cpu_ms``: the median over the samples of :func:`extra_cpu_ms`, with the
    crowd factor ``scale_at(members)`` of each sample's process, and never below 0."""
    if not samples:
        raise ValueError("no measured rebalance")
    extras = [extra_cpu_ms(s, read_cpu_ms, write_cpu_ms, scale_at(s.members)) for s in samples]
    return {"rebalance_cpu_ms": round(max(0.0, statistics.median(extras)), 2)}


def requests_between(samples: Sequence[tuple[float, Mapping[str, int]]], start: float,
                     until: float) -> tuple[int, int]:
    """(reads, writes) a member's cumulative counter samples grew by from the last sample at or
    before ``start`` (none: from 0, a member that started later) to the last at or before
    ``until`` (commits are not among them)."""
    def last(t: float) -> Mapping[str, int]:
        at: Mapping[str, int] = {}
        for ts, counts in sorted(samples, key=lambda x: x[0]):
            if ts > t:
                break
            at = counts
        return at
    before, after = last(start), last(until)

    def grew(ops: Sequence[str]) -> int:
        return sum(max(0, int(after.get(op, 0)) - int(before.get(op, 0))) for op in ops)
    return grew(READS), grew(WRITES)


def sample_from_records(records: Mapping[str, Sequence[Mapping[str, Any]]], joined: float,
                        until: float, cpu_ms: float) -> RebalanceCpuSample:
    """One sample from every member's records (member -> its records, in any order), read
    over the measured window ``[joined, until]`` only: what the members did when they were
    stopped after it is not the join's."""
    ends = []
    closes = []
    reads = writes = 0
    for recs in records.values():
        inside = [r for r in recs if joined <= float(r["ts"]) <= until]
        done = [float(r["ts"]) for r in inside
                if r.get("k") == "co" and r.get("w") == "rebalance_succeeded"]
        if done:
            ends.append(max(done))
        close = _close_ms(inside, joined)
        if close is not None:
            closes.append(close)
        r, w = requests_between([(float(x["ts"]), x["c"]) for x in recs if x.get("k") == "rq"],
                                joined, until)
        reads += r
        writes += w
    if not ends:
        raise RuntimeError("no member recorded a rebalance in the window after the join")
    return RebalanceCpuSample(len(records), len(ends), reads, writes, round(cpu_ms, 3),
                              round((max(ends) - joined) * 1000, 3), tuple(sorted(closes)))


def _close_ms(recs: Sequence[Mapping[str, Any]], joined: float) -> float | None:
    """A member's first attempt after ``joined`` until its first ``revoked`` after it and
    before its rebalance ended (None: it had no fetchers to stop, as a joiner, or recorded no
    attempt)."""
    def times(kind: str, what: str, after: float) -> list[float]:
        return sorted(float(r["ts"]) for r in recs
                      if r.get("k") == kind and r.get("w") == what and float(r["ts"]) >= after)
    attempts = times("co", "attempt", joined)
    if not attempts:
        return None
    ended = times("co", "rebalance_succeeded", attempts[0])
    revoked = [t for t in times("tl", "revoked", attempts[0]) if not ended or t <= ended[0]]
    return round((revoked[0] - attempts[0]) * 1000, 3) if revoked else None


def measure_rebalance_cpu(zk_connect: str, bootstrap: str, members: int = CROWD_MEMBERS,
                          repeats: int = CROWD_REPEATS, window_s: float = WINDOW_S,
                          messages_per_s: float = TRAFFIC_MESSAGES_PER_S
                          ) -> list[RebalanceCpuSample]:
    """``repeats`` joins into a fresh group of ``members`` lab ``zk-range`` members (threads of
    this process) on a topic of ``members`` partitions carrying ``messages_per_s`` each."""
    from kazoo.client import KazooClient

    from zkconsumer.admin import create_topic
    from zkconsumer.calibration.leave import Traffic, read_records, wait_owned
    from zkconsumer.lab.drivers import MemberSpec
    from zkconsumer.lab.handles import ThreadMember
    from zkconsumer.scenarios.timing import Timing

    if members < 1 or repeats < 1 or window_s <= 0:
        raise ValueError(f"members and repeats must be >= 1 and the window > 0, got "
                         f"{members}, {repeats}, {window_s}")
    run = uuid.uuid4().hex[:8]
    topic = f"calibrate-rebalance-{run}"
    partitions = members
    create_topic(zk_connect, topic, partitions, bootstrap=bootstrap)
    watcher = KazooClient(hosts=zk_connect)
    watcher.start(timeout=10)
    traffic = Traffic(bootstrap, topic, partitions, messages_per_s)
    out: list[RebalanceCpuSample] = []
    try:
        with tempfile.TemporaryDirectory(prefix="zkconsumer-rebalance-") as tmp:
            for i in range(repeats):
                group = f"calibrate-rebalance-{run}-{i}"

                def spec(name: str, group: str = group) -> MemberSpec:
                    return MemberSpec(protocol="zk-range", member=name, incarnation=0,
                                      topic=topic, group=group, partitions=partitions,
                                      zk_connect=zk_connect, bootstrap=bootstrap,
                                      records_path=str(Path(tmp) / f"{group}-{name}.jsonl"),
                                      timing=Timing())
                handles = [ThreadMember(spec(f"m{j:03d}")) for j in range(members)]
                try:
                    for h in handles:
                        h.start()
                    wait_owned(watcher, group, topic, partitions, handles, 90.0)
                    time.sleep(QUIET_S)
                    c0 = time.process_time()
                    time.sleep(window_s)
                    c1 = time.process_time()
                    joiner = ThreadMember(spec("joiner"))
                    joined = time.time()
                    joiner.start()
                    handles.append(joiner)
                    time.sleep(window_s)
                    c2, ended = time.process_time(), time.time()
                finally:
                    _stop_all(handles)
                recs = {h.spec.member: read_records(Path(h.spec.records_path)) for h in handles}
                sample = sample_from_records(recs, joined, ended,
                                             ((c2 - c1) - (c1 - c0)) * 1000)
                log.info("rebalance %d: %s", i, sample)
                out.append(sample)
    finally:
        traffic.stop()
        watcher.stop()
        watcher.close()
    return out


def _stop_all(handles: Sequence[Any]) -> None:
    """Stop every member at once (one after another, each leave would start another herd)."""
    stoppers = [threading.Thread(target=h.stop, daemon=True) for h in handles]
    for t in stoppers:
        t.start()
    for t in stoppers:
        t.join()

