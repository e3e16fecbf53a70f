"""Every per-event metric, computed from records only (pure functions, unit-tested without servers).

The window of a membership event is ``[event_ts, end_ts]``: from the moment the runner acted
(started the newcomer, asked a member to leave, sent SIGKILL, began the bounce) to the moment it
saw the group settled. Definitions, as ``docs/comparison.md`` states them:

- ``time_to_stable_s``: event -> the instant after which every partition was fetched by exactly
  one member, every expected member was fetching, and this held to the end (None: never).
- ``members_paused``: members that stopped fetching at least one partition in the window, other
  than by their own departure (a leaving, killed or bounced member's own stop is the event).
  Under incremental protocols (cooperative, KIP-848) a member that keeps all its partitions is
  not paused; ``partitions_revoked`` (an extra) counts the partitions stopped that way.
- ``partition_seconds_unavailable``: integral over the window of the number of partitions that
  nobody was fetching.
- ``coordination_requests``: requests counted by the clients in the window (ZooKeeper requests
  by operation; broker JoinGroup/SyncGroup/Heartbeat/LeaveGroup/OffsetCommit/OffsetFetch).
- ``rebalance_attempts``: per-member attempts (ZooKeeper: attempt_started events; broker:
  JoinGroup requests sent). ``conflicts``: owner-znode conflicts. ``failed_rebalances``:
  rebalances abandoned after every retry, or assignments lost.
- ``duplicates``: deliveries in the window of a (partition, offset) delivered before.
- ``lost``: acknowledged productions never delivered by the end of the run (all of it).
- ``double_owned_intervals``: maximal stretches in the window during which two or more members
  fetched the same partition.
- ``watch_notifications``: ZooKeeper watch notifications delivered to members in the window
  (their ``watch_fired`` records); None for broker-coordinated protocols, which set no watches.
- ``conflicting_decisions``: members whose final decision in some rebalance round of the window
  differs from the round's consensus (see :func:`decision_rounds` for "round"); None for
  broker-coordinated protocols, where one leader decides for everybody.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from zkconsumer.lab.intervals import (
    Interval,
    build_intervals,
    change_points,
    departures,
    fetchers_at,
    stable_since,
)
from zkconsumer.lab.records import Coord, Decision, RunRecords, Timeline

ZOOKEEPER_FAMILY = "zookeeper"
# Decisions closer than this belong to the same rebalance round (see decision_rounds).
ROUND_GAP_S = 1.0
# KIP-848 members talk to the coordinator through ConsumerGroupHeartbeat only, which librdkafka's
# statistics do not count (the member counts it from the protocol debug log), and send no
# JoinGroup: what their two request metrics mean instead.
KIP848_NOTES = {
    "coordination_requests": "KIP-848 group: ConsumerGroupHeartbeat requests are counted by "
                             "each member from librdkafka's protocol debug log (its statistics "
                             "have none), beside OffsetCommit, OffsetFetch, FindCoordinator and "
                             "the like from the statistics",
    "rebalance_attempts": "KIP-848 group: no JoinGroup; counted are the members' "
                          "reconciliations (one on_assign each)",
    "conflicting_decisions": "KIP-848 group: the coordinator computes the assignment for "
                             "everybody, so members cannot decide differently",
}
NOT_APPLICABLE = {
    "watch_notifications": "broker-coordinated group: members set no ZooKeeper watches",
    "conflicting_decisions": "broker-coordinated group: one leader computes the assignment "
                             "for everybody, so members cannot decide differently",
}


@dataclass(frozen=True)
class Produced:
    """One record the broker acknowledged; ``seq`` is the number in its value."""

    partition: int
    offset: int
    seq: int


@dataclass(frozen=True)
class EventWindow:
    start: float
    end: float
    required_members: tuple[str, ...]   # must be fetching for the group to count as stable


def time_to_stable(intervals: Sequence[Interval], partitions: int, w: EventWindow
                   ) -> float | None:
    since = stable_since(intervals, partitions, w.start, w.end, w.required_members)
    return None if since is None else round(since - w.start, 3)


def members_paused(intervals: Sequence[Interval], w: EventWindow,
                   leaving: dict[tuple[str, int], float]) -> list[str]:
    """Members whose fetching of some partition ended in the window, not by their own leaving."""
    paused = set()
    for iv in intervals:
        if not (w.start <= iv.end < w.end):
            continue
        left_at = leaving.get((iv.member, iv.incarnation))
        if left_at is not None and iv.end >= left_at:
            continue
        paused.add(iv.member)
    return sorted(paused)


def partitions_revoked(intervals: Sequence[Interval], w: EventWindow,
                       leaving: dict[tuple[str, int], float]) -> int:
    """Partition stops in the window other than by the fetcher's own leaving: what the protocol
    took away from members that stayed (one eager round: every partition; an incremental one:
    only those that move). A partition stopped in two rounds counts twice."""
    count = 0
    for iv in intervals:
        if not (w.start <= iv.end < w.end):
            continue
        left_at = leaving.get((iv.member, iv.incarnation))
        if left_at is None or iv.end < left_at:
            count += 1
    return count


def partitions_moved(intervals: Sequence[Interval], partitions: int, w: EventWindow) -> int:
    """Partitions whose fetcher at the end of the window is not the one at its start: what the
    event really moved (an eager round revokes every partition, yet hands most of them back to
    the same member; an incremental one moves only what must). A partition nobody fetched at
    either end counts as moved when somebody fetches it at the other."""
    before = fetchers_at(intervals, partitions, w.start)
    after = fetchers_at(intervals, partitions, max(w.start, w.end - 1e-6))
    return sum(1 for a, b in zip(before, after, strict=True) if a != b)


def members_idle(intervals: Sequence[Interval], partitions: int, w: EventWindow,
                 leaving: dict[tuple[str, int], float]) -> list[str]:
    """Members with an incarnation that had been fetching and then, at some instant in the
    window and before leaving, fetched nothing at all: the stop-the-world pause of eager
    protocols (a member restarted by a bounce counts if its new incarnation idles later)."""
    by_inc: dict[tuple[str, int], list[Interval]] = {}
    for iv in intervals:
        by_inc.setdefault((iv.member, iv.incarnation), []).append(iv)
    idle = set()
    points = change_points(intervals, w.start, w.end)[:-1]
    for key, ivs in by_inc.items():
        left_at = leaving.get(key)
        for t in points:
            if left_at is not None and t >= left_at:
                break
            fetched_before = any(iv.start < t for iv in ivs)
            if fetched_before and not any(iv.covers(t) for iv in ivs):
                idle.add(key[0])
                break
    return sorted(idle)


def partition_seconds_unavailable(intervals: Sequence[Interval], partitions: int,
                                  w: EventWindow) -> float:
    points = change_points(intervals, w.start, w.end)
    total = 0.0
    for a, b in zip(points, points[1:], strict=False):
        who = fetchers_at(intervals, partitions, a)
        total += sum(1 for x in who if not x) * (b - a)
    return round(total, 3)


def double_owned_intervals(intervals: Sequence[Interval], partitions: int,
                           w: EventWindow) -> int:
    points = change_points(intervals, w.start, w.end)
    count = 0
    doubled = [False] * partitions
    for a in points[:-1]:
        who = fetchers_at(intervals, partitions, a)
        for p in range(partitions):
            now = len(who[p]) >= 2
            if now and not doubled[p]:
                count += 1
            doubled[p] = now
    return count


def request_deltas(records: RunRecords, w: EventWindow) -> dict[str, int]:
    """Counter increases in the window, summed over incarnations (samples are cumulative)."""
    by_inc: dict[tuple[str, int], list[tuple[float, dict[str, int]]]] = {}
    for s in records.requests:
        by_inc.setdefault((s.member, s.incarnation), []).append((s.ts, s.counts))
    total: Counter[str] = Counter()
    for samples in by_inc.values():
        samples.sort(key=lambda x: x[0])
        at_start = _last_before(samples, w.start)
        at_end = _last_before(samples, w.end)
        for name, value in at_end.items():
            delta = value - at_start.get(name, 0)
            if delta > 0:
                total[name] += delta
    return dict(sorted(total.items()))


def _last_before(samples: list[tuple[float, dict[str, int]]], t: float) -> dict[str, int]:
    last: dict[str, int] = {}
    for ts, counts in samples:
        if ts > t:
            break
        last = counts
    return last


def coord_count(records: RunRecords, w: EventWindow, *whats: str) -> int:
    return sum(1 for c in records.coord if c.what in whats and w.start <= c.ts <= w.end)


def group_rebalances(records: RunRecords, w: EventWindow) -> int:
    """Rebalances the group went through: every member completes each one (ZooKeeper:
    rebalance_succeeded; broker: on_assign), so the busiest member name's count."""
    per_member = Counter(c.member for c in records.coord
                         if c.what == Coord.REBALANCE_SUCCEEDED.value
                         and w.start <= c.ts <= w.end)
    return max(per_member.values(), default=0)


def duplicates(records: RunRecords, since: float, until: float | None = None) -> int:
    """Redeliveries in ``[since, until]``: ``until`` keeps the final shutdown of every member
    (after the measurement) out of the count."""
    seen: set[tuple[int, int]] = set()
    dups = 0
    for d in sorted(records.deliveries, key=lambda d: d.ts):
        key = (d.partition, d.offset)
        if key in seen and d.ts >= since and (until is None or d.ts <= until):
            dups += 1
        seen.add(key)
    return dups


def lost(records: RunRecords, produced: Iterable[Produced]) -> list[Produced]:
    delivered = {(d.partition, d.offset) for d in records.deliveries}
    delivered_seqs = {d.seq for d in records.deliveries if d.seq is not None}
    return [p for p in produced
            if (p.partition, p.offset) not in delivered and p.seq not in delivered_seqs]


def watch_notifications(records: RunRecords, w: EventWindow) -> int:
    """Watch notifications members received in the window (one ``watch_fired`` record each)."""
    return coord_count(records, w, Coord.WATCH_FIRED.value)


@dataclass(frozen=True)
class DecisionRound:
    """The decisions of one rebalance round (see :func:`decision_rounds`)."""

    start: float
    end: float
    by_member: dict[tuple[str, int], tuple[str, ...]]   # (member, incarnation) -> digests, in order
    consensus: str                                     # the final decision most members reached
    dissenters: tuple[tuple[str, int], ...]            # whose final decision differs from it

    @property
    def distinct_views(self) -> int:
        return len({d for ds in self.by_member.values() for d in ds})


def decision_rounds(decisions: Iterable[Decision], w: EventWindow,
                    gap_s: float = ROUND_GAP_S) -> list[DecisionRound]:
    """Group the window's decisions into rebalance rounds and find each round's dissenters.

    A *round* is a maximal run of decisions (of any members), in time order, in which each one
    was made at most ``gap_s`` after the previous one; a pause longer than ``gap_s`` with no
    decision by anybody starts a new round. This needs nothing but the records, so it serves
    every self-coordinating protocol alike: one membership change makes every member decide
    within a short burst (one round), and decisions made at the same time from different
    views fall in the same round, which is what we want to catch. A member's retries after an
    owner conflict come ``rebalance.backoff.ms`` later; they stay in the round while others are
    still deciding and start a new one otherwise (they re-read the view, so a retry from the
    same view agrees with itself either way).

    Each member incarnation's *final* decision in the round is the one it acted on last. The
    round's *consensus* is the final decision most member incarnations reached (a tie goes to
    the one decided last); its *dissenters* are the member incarnations whose final decision
    differs from it. A member that moved through several views in one round (two changes in
    quick succession) disagrees with nobody as long as it ended where the others did, and a
    round with a single decider (a leader-based protocol) has no dissenters.
    """
    chosen = sorted((d for d in decisions if w.start <= d.ts <= w.end), key=lambda d: d.ts)
    groups: list[list[Decision]] = []
    for d in chosen:
        if groups and d.ts - groups[-1][-1].ts <= gap_s:
            groups[-1].append(d)
        else:
            groups.append([d])
    rounds = []
    for group in groups:
        by_member: dict[tuple[str, int], list[str]] = {}
        last_seen: dict[str, float] = {}
        for d in group:
            by_member.setdefault((d.member, d.incarnation), []).append(d.digest)
            last_seen[d.digest] = d.ts
        votes = Counter(ds[-1] for ds in by_member.values())
        consensus = max(votes, key=lambda dig: (votes[dig], last_seen[dig]))
        dissenters = tuple(sorted(k for k, ds in by_member.items() if ds[-1] != consensus))
        rounds.append(DecisionRound(group[0].ts, group[-1].ts,
                                    {k: tuple(v) for k, v in by_member.items()},
                                    consensus, dissenters))
    return rounds


def conflicting_decisions(records: RunRecords, w: EventWindow,
                          gap_s: float = ROUND_GAP_S) -> int:
    """Sum over the window's rounds of the members whose final decision left the consensus."""
    return sum(len(r.dissenters) for r in decision_rounds(records.decisions, w, gap_s))


def decision_metrics(records: RunRecords, w: EventWindow, family: str,
                     gap_s: float = ROUND_GAP_S) -> dict[str, Any]:
    """``watch_notifications``, ``conflicting_decisions`` and their extras for one window.

    Broker-coordinated protocols get None for both (:data:`NOT_APPLICABLE` says why). A
    ZooKeeper-family run whose members recorded no decision at all in the window also gets
    None for ``conflicting_decisions``: nothing was observed, which is not the same as zero.
    """
    if family != ZOOKEEPER_FAMILY:
        return {"watch_notifications": None, "conflicting_decisions": None,
                "decision_rounds": None, "decisions": None}
    rounds = decision_rounds(records.decisions, w, gap_s)
    made = sum(len(ds) for r in rounds for ds in r.by_member.values())
    return {
        "watch_notifications": watch_notifications(records, w),
        "conflicting_decisions": sum(len(r.dissenters) for r in rounds) if rounds else None,
        "decision_rounds": len(rounds),
        "decisions": made,
    }


def metric_notes(family: str, metrics: dict[str, Any], group_protocol: str = "classic"
                 ) -> dict[str, str]:
    """Why a metric is None or means something else, for ``details["metric_notes"]`` (readers
    never guess a zero)."""
    if family != ZOOKEEPER_FAMILY:
        return {**NOT_APPLICABLE, **(KIP848_NOTES if group_protocol != "classic" else {})}
    if metrics.get("conflicting_decisions") is None:
        return {"conflicting_decisions": "no member recorded a rebalance decision in the window"}
    return {}


def event_metrics(records: RunRecords, produced: Sequence[Produced], partitions: int,
                  w: EventWindow, attempt_counter: str | None = None,
                  duplicates_until: float | None = None,
                  family: str = ZOOKEEPER_FAMILY) -> dict[str, Any]:
    """The metrics of one membership event. ``attempt_counter`` names the request whose count
    is the number of rebalance attempts (``JoinGroup`` for broker groups); None counts the
    members' ``attempt`` coordination records (the ZooKeeper connector's attempt_started).
    ``family`` is the driver's (``zookeeper`` or ``broker``): it decides whether watch and
    decision metrics apply."""
    records.sort()
    intervals = build_intervals(records, w.end, Timeline.FETCHING)
    leaving = departures(records)
    reqs = request_deltas(records, w)
    if attempt_counter is None:
        attempts = coord_count(records, w, Coord.ATTEMPT.value)
    else:
        attempts = reqs.get(attempt_counter, 0)
    missing = lost(records, produced)
    return {
        "time_to_stable_s": time_to_stable(intervals, partitions, w),
        "members_paused": len(members_paused(intervals, w, leaving)),
        "partition_seconds_unavailable": partition_seconds_unavailable(intervals, partitions, w),
        "coordination_requests": sum(reqs.values()),
        "rebalance_attempts": attempts,
        "conflicts": coord_count(records, w, Coord.CONFLICT.value),
        "duplicates": duplicates(records, w.start, duplicates_until),
        "lost": len(missing),
        "double_owned_intervals": double_owned_intervals(intervals, partitions, w),
        "failed_rebalances": coord_count(records, w, Coord.REBALANCE_FAILED.value,
                                         Coord.LOST.value),
        **decision_metrics(records, w, family),
        # extras, not in the summary table
        "members_idle": len(members_idle(intervals, partitions, w, leaving)),
        "partitions_revoked": partitions_revoked(intervals, w, leaving),
        "partitions_moved": partitions_moved(intervals, partitions, w),
        "rollbacks": coord_count(records, w, Coord.ROLLBACK.value),
        "group_rebalances": group_rebalances(records, w),
        "requests_by_type": reqs,
        "window_s": round(w.end - w.start, 3),
        "produced": len(produced),
        "delivered": len(records.deliveries),
        "lost_sample": [[p.partition, p.offset, p.seq] for p in missing[:10]],
    }
