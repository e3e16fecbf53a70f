"""Zombie: one member cut off from its coordination server for longer than its session.

The member's connection to ZooKeeper (ZooKeeper family) or to the broker (broker family) is
*paused* through its proxy: nothing it sends arrives and nothing arrives for it, but the process
runs on. For the legacy protocol its fetchers talk to the broker directly and keep going; the
server expires its session, its ephemeral registration and owner znodes vanish, the others
rebalance and take its partitions: two members fetch and deliver the same partition until the
pause ends and the zombie learns it lost its session. For a broker-side group the pause cuts the
member off from the group coordinator *and* from its fetches (one broker), so what is measured
is what the client and the broker do about the member the group evicted.

Steps: form the group; pause the first member (it owns the most partitions in a range
assignment); wait until somebody else fetches one of its partitions; keep the pause
``overlap_s`` longer (and, for a little while, until a message was delivered by both); resume;
wait until settled. A :class:`~zkconsumer.lab.splitbrain.commits.CommitWatcher` records
committed offsets moving backwards (a late commit from the evicted member being accepted).
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

from zkconsumer.lab.group import member_name
from zkconsumer.lab.intervals import build_intervals
from zkconsumer.lab.records import RunRecords, Timeline
from zkconsumer.lab.runs import RunResult
from zkconsumer.lab.servers import Servers
from zkconsumer.lab.splitbrain.commits import CommitWatcher
from zkconsumer.lab.splitbrain.harness import SplitRun
from zkconsumer.lab.splitbrain.spec import SplitBrainSpec

log = logging.getLogger(__name__)

EVENT = "zombie"
# After the takeover, how long to wait (beyond overlap_s) for a message delivered by both.
BOTH_DELIVERED_GRACE_S = 3.0


@dataclass(frozen=True)
class Overlap:
    """A stretch during which the zombie and ``other`` both fetched ``partition``."""

    partition: int
    other: str
    start: float
    end: float
    zombie_deliveries: int
    other_deliveries: int


def overlaps(records: RunRecords, zombie: str, t0: float, t1: float) -> list[Overlap]:
    """Where, in ``[t0, t1]``, the zombie's fetching intersects another member's (pure)."""
    intervals = build_intervals(records, t1, Timeline.FETCHING)
    mine = [iv for iv in intervals if iv.member == zombie]
    theirs = [iv for iv in intervals if iv.member != zombie]
    by_part: dict[int, list[tuple[str, float]]] = defaultdict(list)
    for d in records.deliveries:
        by_part[d.partition].append((d.member, d.ts))
    out = []
    for a in mine:
        for b in theirs:
            if a.partition != b.partition:
                continue
            start, end = max(a.start, b.start, t0), min(a.end, b.end, t1)
            if end <= start:
                continue
            ds = [(m, ts) for m, ts in by_part[a.partition] if start <= ts < end]
            out.append(Overlap(a.partition, b.member, start, end,
                               sum(1 for m, _ in ds if m == zombie),
                               sum(1 for m, _ in ds if m == b.member)))
    return sorted(out, key=lambda o: (o.start, o.partition))


def delivered_by_two(records: RunRecords, since: float, until: float | None = None
                     ) -> list[tuple[int, int, tuple[str, ...]]]:
    """Messages (partition, offset) that two or more *different* members delivered, at least
    one of them at or after ``since`` (and by ``until``)."""
    who: dict[tuple[int, int], set[str]] = defaultdict(set)
    late: set[tuple[int, int]] = set()
    for d in records.deliveries:
        if until is not None and d.ts > until:
            continue
        key = (d.partition, d.offset)
        who[key].add(d.member)
        if d.ts >= since:
            late.add(key)
    return sorted((p, o, tuple(sorted(ms))) for (p, o), ms in who.items()
                  if len(ms) >= 2 and (p, o) in late)


@dataclass(frozen=True)
class ZombieView:
    """What the zombie itself reported from the pause on (pure summary of its records)."""

    stopped_s: float | None          # first time it stopped fetching anything, from the pause
    events: dict[str, int]           # its coordination records by kind (session_*, lost, ...)
    late_commits_accepted: int       # commits answered after the pause, before it fetched again
    late_commits_rejected: int
    rejections: tuple[str, ...]      # the errors of the rejected ones


def zombie_view(records: RunRecords, zombie: str, paused: float, resumed: float,
                until: float) -> ZombieView:
    stops = [e.ts for e in records.timeline
             if e.member == zombie and e.what is Timeline.REVOKED and e.ts >= paused]
    refetch = min((e.ts for e in records.timeline if e.member == zombie
                   and e.what is Timeline.FETCHING and e.ts > resumed), default=until)
    events: dict[str, int] = defaultdict(int)
    accepted = rejected = 0
    errors: set[str] = set()
    for c in records.coord:
        if c.member != zombie or not paused <= c.ts <= until:
            continue
        events[c.what.split(":", 1)[0]] += 1
        if resumed <= c.ts <= refetch and c.what.startswith("commit_"):
            if c.what == "commit_ok":
                accepted += 1
            else:
                rejected += 1
                errors.add(c.what.split(":", 1)[-1])
    return ZombieView(None if not stops else round(min(stops) - paused, 3),
                      dict(sorted(events.items())), accepted, rejected, tuple(sorted(errors)))


def _taken_over(run: SplitRun, zombie: str, parts: list[int]) -> bool:
    who = run.fetching_now()
    return any(who[p] - {zombie} for p in parts)


def run_zombie(spec: SplitBrainSpec, protocol: str, repeat: int, servers: Servers,
               records_dir: Path, kafka_home: str = "") -> RunResult:
    """``kafka_home``: the 0.10.2 build of an original protocol's members."""
    timing = spec.timing
    with SplitRun(spec, protocol, repeat, servers, records_dir, EVENT,
                  kafka_home=kafka_home) as run:
        assert run.proxies is not None
        run.form()
        zombie = member_name(0)
        parts = run.partitions_of(zombie)
        proxy = run.proxies.get(zombie)
        watcher = CommitWatcher.for_family(
            run.driver.family, zk_connect=servers.zk_connect, bootstrap=servers.bootstrap,
            group=run.group.group, topic=run.topic, partitions=spec.partitions).start()
        try:
            event_ts = time.time()
            proxy.pause()
            run.phases["paused"] = event_ts
            session_s = timing.session_timeout_ms / 1000.0
            took_over = run.wait_for(lambda: _taken_over(run, zombie, parts),
                                     3 * session_s + timing.event_deadline_s)
            takeover_ts = time.time() if took_over else None
            if takeover_ts is not None:
                run.phases["taken_over"] = takeover_ts
                time.sleep(spec.overlap_s)  # the fault's length, not an assertion
                run.wait_for(lambda: bool(delivered_by_two(run.group.records, event_ts)),
                             BOTH_DELIVERED_GRACE_S)
            resume_ts = time.time()
            proxy.resume()
            run.phases["resumed"] = resume_ts
            settled = run.group.wait_settled(timing.event_deadline_s)
        finally:
            regressions = watcher.stop()
        result = run.finish(event_ts, settled, details={
            "zombie": zombie,
            "zombie_partitions": parts,
            "pause_s": round(resume_ts - event_ts, 3),
            "takeover_s": None if takeover_ts is None else round(takeover_ts - event_ts, 3),
            "offset_regressions": [{**asdict(r), "ts": round(r.ts - event_ts, 3)}
                                   for r in regressions],
        })
    records = run.group.records
    ov = overlaps(records, zombie, event_ts, result.details["end_ts"])
    twice = delivered_by_two(records, event_ts, result.details["drained_ts"])
    result.details["overlaps"] = [{**asdict(o), "start": round(o.start - event_ts, 3),
                                   "end": round(o.end - event_ts, 3)} for o in ov]
    result.details["delivered_by_two_sample"] = [list(x) for x in twice[:10]]
    view = zombie_view(records, zombie, event_ts, resume_ts, result.details["end_ts"])
    result.details["zombie_view"] = asdict(view)
    result.metrics.update({
        "double_owned_s": round(sum(o.end - o.start for o in ov), 3),
        "zombie_overlap_deliveries": sum(o.zombie_deliveries for o in ov),
        "delivered_by_two": len(twice),
        "offset_regressions": len(regressions),
        "zombie_stopped_s": view.stopped_s,
        "stable_after_resume_s": (None if result.metrics.get("time_to_stable_s") is None else
                                  round(result.metrics["time_to_stable_s"]
                                        - (resume_ts - event_ts), 3)),
        "late_commits_accepted": view.late_commits_accepted,
        "late_commits_rejected": view.late_commits_rejected,
    })
    return result
