"""Per-partition ownership intervals rebuilt from the members' timeline records (pure).

An interval is half-open ``[start, end)``: a member fetching partition 3 from ``start`` until
``end``. Intervals left open when an incarnation ends (a SIGKILL writes nothing, a clean stop may
race its last record) are closed at the incarnation's end; anything still open at the end of the
observation is closed there. Metrics and plots both read these intervals.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from zkconsumer.lab.records import Lifecycle, RunRecords, Timeline


@dataclass(frozen=True)
class Interval:
    member: str
    incarnation: int
    partition: int
    start: float
    end: float

    def covers(self, t: float) -> bool:
        return self.start <= t < self.end


def incarnation_ends(records: RunRecords) -> dict[tuple[str, int], float]:
    """When each incarnation stopped existing: its STOPPED or KILLED record, whichever is first."""
    ends: dict[tuple[str, int], float] = {}
    for lc in records.lifecycle:
        if lc.what in (Lifecycle.STOPPED, Lifecycle.KILLED):
            key = (lc.member, lc.incarnation)
            ends[key] = min(ends.get(key, lc.ts), lc.ts)
    return ends


def departures(records: RunRecords) -> dict[tuple[str, int], float]:
    """When each incarnation began leaving on purpose (STOPPING) or was killed."""
    out: dict[tuple[str, int], float] = {}
    for lc in records.lifecycle:
        if lc.what in (Lifecycle.STOPPING, Lifecycle.KILLED):
            key = (lc.member, lc.incarnation)
            out[key] = min(out.get(key, lc.ts), lc.ts)
    return out


def build_intervals(records: RunRecords, until: float,
                    opens: Timeline = Timeline.FETCHING) -> list[Interval]:
    """Intervals during which a member held ``opens`` (FETCHING or ASSIGNED) for a partition."""
    ends = incarnation_ends(records)
    open_at: dict[tuple[str, int, int], float] = {}
    out: list[Interval] = []
    for entry in sorted(records.timeline, key=lambda e: e.ts):
        for p in entry.partitions:
            key = (entry.member, entry.incarnation, p)
            if entry.what is opens:
                open_at.setdefault(key, entry.ts)
            elif entry.what is Timeline.REVOKED and key in open_at:
                start = open_at.pop(key)
                out.append(Interval(entry.member, entry.incarnation, p, start, entry.ts))
    for (member, inc, p), start in open_at.items():
        end = min(ends.get((member, inc), until), until)
        out.append(Interval(member, inc, p, start, max(start, end)))
    return sorted(out, key=lambda i: (i.partition, i.start))


def change_points(intervals: Iterable[Interval], t0: float, t1: float) -> list[float]:
    """Sorted distinct instants in ``[t0, t1]`` where the ownership picture may change."""
    points = {t0, t1}
    for iv in intervals:
        for t in (iv.start, iv.end):
            if t0 < t < t1:
                points.add(t)
    return sorted(points)


def fetchers_at(intervals: Sequence[Interval], partitions: int, t: float) -> list[set[str]]:
    """For each partition, the members fetching it at instant ``t``."""
    who: list[set[str]] = [set() for _ in range(partitions)]
    for iv in intervals:
        if iv.partition < partitions and iv.covers(t):
            who[iv.partition].add(iv.member)
    return who


def is_stable(who: list[set[str]], required_members: Iterable[str]) -> bool:
    """Every partition fetched by exactly one member, and every required member fetching.

    ``required_members`` is what makes "stable" mean "the group absorbed the event": right after
    a join the old assignment still covers every partition once, but the newcomer owns nothing.
    """
    if any(len(w) != 1 for w in who):
        return False
    fetching = set().union(*who) if who else set()
    return all(m in fetching for m in required_members)


def stable_since(intervals: Sequence[Interval], partitions: int, t0: float, t1: float,
                 required_members: Iterable[str]) -> float | None:
    """The earliest instant in ``[t0, t1]`` after which the group stayed stable until ``t1``.

    None when it is not stable at ``t1``. Passing states that look stable in the middle of a
    rebalance do not count, because the group must stay stable to the end of the observation.
    """
    required = list(required_members)
    points = change_points(intervals, t0, t1)
    since: float | None = None
    for i, t in enumerate(points[:-1]):
        if is_stable(fetchers_at(intervals, partitions, t), required):
            if since is None:
                since = t
        else:
            since = None
        if i == len(points) - 2 and since is None:
            return None
    if len(points) == 1:
        ok = is_stable(fetchers_at(intervals, partitions, t0), required)
        return t0 if ok else None
    return since
