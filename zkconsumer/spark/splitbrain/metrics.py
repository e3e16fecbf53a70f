"""The split-brain metrics of one run, from what its members recorded (pure; no server).

Inputs: the members' records (:class:`~zkconsumer.lab.records.RunRecords`), the run's
:class:`~zkconsumer.scenarios.splitbrain.Plan` and its :class:`Window` (when the event began,
when the observation ended, when a repair event was applied). Definitions:

- ``double_owned_partition_s``: over the observation, the sum over partitions of the time two
  or more members fetched the partition at once;
- ``zombie_deliveries``: deliveries by a cut-off member of a partition another member was
  fetching at that instant;
- ``delivered_twice``: messages (partition, offset) delivered by two or more different members,
  one of the deliveries at or after the event (until the end of the drain);
- ``zombie_commits_accepted``: commits a cut-off member had acknowledged after its cut healed
  and before it fetched again (its late commits, from the state it had before the cut);
- ``zombie_stop_s``: from the cut to the instant the last zombie stopped fetching (None when a
  zombie never stopped within the observation);
- ``conflicts``, ``rollbacks``, ``rebalances_given_up``: owner conflicts, their rollbacks and
  rebalances abandoned after ``rebalance.max.retries`` attempts, in the observation;
  ``gave_up_members``: members with at least one abandoned rebalance;
- ``attempts_max`` / ``attempts_mean``: rebalance attempts per member that attempted;
- ``stale_decisions``: members whose final decision of a rebalance round differs from the
  round's consensus (:func:`zkconsumer.lab.metrics.decision_rounds`): decided from a view the
  others had already left;
- ``unowned_partition_s``: partitions nobody fetched, integrated from the instant every
  remaining member was done (the observation's last coordination record) until the next event
  (the repair, or the end of the observation): the uncontrollable outcome, counted;
- ``time_to_stable_s``: event -> every partition fetched by exactly one member for good;
- ``lost``: acknowledged records never delivered by the end of the run;
- ``lost_for_good``: those of them below their partition's committed offset at the end (the
  group's next read starts after them: skipped); the others are still ahead of the committed
  offset, and a member that owns the partition later delivers them (None when the committed
  offsets were not read);
- ``process_start_skew_ms``: how far apart the client processes (Spark tasks) began the first
  rebalance of their initial members: per process, its first initial member's first
  ``rebalance_started`` (just after that member registered); the spread of those (None with
  one process or without a rebalance in two). Members started together read the group that far
  apart at least; under a small retry budget that decides whether the group forms.

The original 0.10.2 members (JVMs) report neither their offset commits nor the deletion of a
failed attempt's owner znodes: :data:`ORIGINAL_UNOBSERVED` is null for them (not observed), not
zero (:func:`not_observed`); the committed offsets' watcher (``offsets_went_back``) and their
conflicts and retries are what is seen of those.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from zkconsumer.lab.intervals import Interval, build_intervals, change_points, fetchers_at
from zkconsumer.lab.metrics import EventWindow, Produced, decision_rounds, lost, time_to_stable
from zkconsumer.lab.records import Coord, RunRecords, Timeline
from zkconsumer.lab.splitbrain.zombie import delivered_by_two
from zkconsumer.scenarios.protocols import PROTOCOL_TABLE
from zkconsumer.scenarios.splitbrain import Kind, Plan, task_of

log = logging.getLogger(__name__)

ORIGINAL_UNOBSERVED = ("zombie_commits_accepted", "rollbacks")

COORDINATION = (Coord.ATTEMPT.value, Coord.CONFLICT.value, Coord.ROLLBACK.value,
                Coord.REBALANCE_FAILED.value, Coord.REBALANCE_SUCCEEDED.value,
                Coord.REBALANCE_STARTED.value, Coord.LOST.value)


@dataclass(frozen=True)
class Window:
    """``event_ts``: the event instant (plan time 0); ``end_ts``: end of the observation;
    ``repair_ts``: when the repair event (one join) was applied, if one was;
    ``drained_ts``: when the drain ended (deliveries after it are the final shutdown's)."""

    event_ts: float
    end_ts: float
    repair_ts: float | None = None
    drained_ts: float | None = None


def double_owned_partition_s(intervals: list[Interval], partitions: int, t0: float,
                             t1: float) -> float:
    total = 0.0
    points = change_points(intervals, t0, t1)
    for a, b in zip(points, points[1:], strict=False):
        who = fetchers_at(intervals, partitions, a)
        total += sum(1 for w in who if len(w) >= 2) * (b - a)
    return round(total, 3)


def unowned_partition_s(intervals: list[Interval], partitions: int, t0: float,
                        t1: float) -> float:
    if t1 <= t0:
        return 0.0
    total = 0.0
    points = change_points(intervals, t0, t1)
    for a, b in zip(points, points[1:], strict=False):
        total += sum(1 for w in fetchers_at(intervals, partitions, a) if not w) * (b - a)
    return round(total, 3)


def zombie_deliveries(records: RunRecords, intervals: list[Interval], zombies: set[str],
                      t0: float, t1: float) -> int:
    others: dict[int, list[Interval]] = defaultdict(list)
    for iv in intervals:
        if iv.member not in zombies:
            others[iv.partition].append(iv)
    return sum(1 for d in records.deliveries
               if d.member in zombies and t0 <= d.ts <= t1
               and any(iv.covers(d.ts) for iv in others[d.partition]))


def delivered_twice(records: RunRecords, since: float, until: float | None) -> int:
    return len(delivered_by_two(records, since, until))


def zombie_stop_s(records: RunRecords, zombies: set[str], cut_ts: float, t1: float,
                  owned_at_cut: dict[str, set[int]]) -> float | None:
    """Cut -> the instant the last zombie stopped fetching the last partition it fetched at the
    cut (None when one of them still fetched it at the end of the observation)."""
    latest = cut_ts
    for z in zombies:
        for p in owned_at_cut.get(z, ()):
            stops = [e.ts for e in records.timeline if e.member == z
                     and e.what is Timeline.REVOKED and cut_ts <= e.ts <= t1
                     and p in e.partitions]
            if not stops:
                return None
            latest = max(latest, min(stops))
    return round(latest - cut_ts, 3)


def zombie_commits_accepted(records: RunRecords, zombies: set[str], heal_ts: float,
                            t1: float) -> int:
    count = 0
    for z in zombies:
        refetch = min((e.ts for e in records.timeline if e.member == z
                       and e.what is Timeline.FETCHING and e.ts > heal_ts), default=t1)
        count += sum(1 for c in records.coord if c.member == z and c.what == "commit_ok"
                     and heal_ts <= c.ts <= refetch)
    return count


def settled_since(records: RunRecords, t0: float, t1: float) -> float:
    """The instant every member was done: the window's last coordination record (else t0)."""
    return max((c.ts for c in records.coord if c.what in COORDINATION and t0 <= c.ts <= t1),
               default=t0)


def process_start_skew_ms(records: RunRecords, initial: tuple[str, ...], tasks: int
                          ) -> float | None:
    """The spread, in ms, of the processes' first ``rebalance_started`` of an initial member
    (incarnation 0; each member's process as the job places it, :func:`.task_of`)."""
    firsts: dict[int, float] = {}
    wanted = set(initial)
    for c in records.coord:
        if c.what == Coord.REBALANCE_STARTED.value and c.incarnation == 0 and \
                c.member in wanted:
            proc = task_of(c.member, tasks)
            firsts[proc] = min(firsts.get(proc, c.ts), c.ts)
    if len(firsts) < 2:
        return None
    return round((max(firsts.values()) - min(firsts.values())) * 1000.0, 1)


def run_metrics(records: RunRecords, plan: Plan, window: Window, partitions: int,
                produced: list[Produced], required: tuple[str, ...] = (),
                offsets_went_back: int | None = None, verify_ok: bool | None = None,
                committed: Mapping[int, int] | None = None) -> dict[str, Any]:
    """Every metric of one run (see the module docstring)."""
    records.sort()
    t0, t1 = window.event_ts, window.end_ts
    # open intervals are closed at the end of everything observed, not of the observation
    until = max(t1, window.repair_ts or t1, window.drained_ts or t1,
                max((e.ts for e in records.timeline), default=t1))
    intervals = build_intervals(records, until, Timeline.FETCHING)
    obs = [iv for iv in intervals if iv.start <= t1]
    zombies = set(plan.zombies)
    w = EventWindow(t0, t1, required)
    coord = [c for c in records.coord if t0 <= c.ts <= t1]
    attempts = Counter(c.member for c in coord if c.what == Coord.ATTEMPT.value)
    failed = [c for c in coord if c.what == Coord.REBALANCE_FAILED.value]
    rounds = decision_rounds(records.decisions, w)
    heal = next((a.at_s for a in plan.actions if a.kind is Kind.HEAL), None)
    owned_at_cut = {z: {iv.partition for iv in intervals if iv.member == z and iv.covers(t0)}
                    for z in zombies}
    done = settled_since(records, t0, t1)
    missing = lost(records, produced)
    unowned_until = window.repair_ts if window.repair_ts is not None else t1
    out: dict[str, Any] = {
        "double_owned_partition_s": double_owned_partition_s(obs, partitions, t0, t1),
        "zombie_deliveries": zombie_deliveries(records, obs, zombies, t0, t1) if zombies else 0,
        "delivered_twice": delivered_twice(records, t0, window.drained_ts),
        "offsets_went_back": offsets_went_back,
        "zombie_commits_accepted": (zombie_commits_accepted(records, zombies, t0 + heal, t1)
                                    if zombies and heal is not None else None),
        "zombie_stop_s": (zombie_stop_s(records, zombies, t0, t1, owned_at_cut)
                          if zombies else None),
        "zombies": len(zombies),
        "conflicts": sum(1 for c in coord if c.what == Coord.CONFLICT.value),
        "rollbacks": sum(1 for c in coord if c.what == Coord.ROLLBACK.value),
        "attempts_max": max(attempts.values(), default=0),
        "attempts_mean": round(sum(attempts.values()) / len(attempts), 3) if attempts else 0.0,
        "stale_decisions": sum(len(r.dissenters) for r in rounds),
        "rebalances_given_up": len(failed),
        "gave_up_members": len({c.member for c in failed}),
        "unowned_partition_s": unowned_partition_s(intervals, partitions, done,
                                                   unowned_until),
        "time_to_stable_s": time_to_stable(obs, partitions, w),
        "verify_ok": verify_ok,
        "lost": len(missing),
        "lost_for_good": (None if committed is None else
                          sum(1 for m in missing if m.offset < committed.get(m.partition, 0))),
        "produced": len(produced),
        "delivered": len(records.deliveries),
    }
    return out


def not_observed(protocol: str, metrics: Mapping[str, Any]) -> dict[str, Any]:
    """``metrics`` with :data:`ORIGINAL_UNOBSERVED` set to None for an original protocol."""
    if not PROTOCOL_TABLE[protocol].original:
        return dict(metrics)
    return {**metrics, **dict.fromkeys(ORIGINAL_UNOBSERVED)}
