"""The split-brain scenarios in the simulator: one row per (protocol, scenario, N, P, seed).

The plan is the real job's (:func:`zkconsumer.scenarios.splitbrain.plan`: same zombies,
delays, joins and leaves for a seed). Per protocol:

- ``zk-range``: :class:`.legacy.LegacySplitModel` (per-member views, the cut-off
  member's expiry and late stop, conflicts, rollbacks, retry budgets, giving up);
- ``zk-leader-range``: a cut-off member stops its fetchers when its client reports the
  connection suspended (two thirds of the session timeout without an answer, less kazoo's
  jitter), before the server can expire its session, and only then can the leader give its
  partitions away; claims wait for the previous owner's deletion instead of conflicting, and a
  member never leaves the group for running out of attempts: no double ownership, no conflict,
  no rebalance given up, whatever N;
- ``eager-range``, ``cooperative-sticky``: one group leader computes the assignment from the
  coordinator's one view, and a partition is revoked before it is handed out: no conflict, no
  double ownership, no retry budget to run out of. Their round times (Tansu's) are not modelled
  here: those cells carry the split-brain metrics only.

The measurement's own shape is modelled where a metric depends on it: unowned partition-seconds
run from the last coordination until the real job's repair event (``idle_s`` of quiet, then
``REPAIR_LAG_S``), and zombie deliveries are the double-owned seconds at the topic's rate.
"""

from __future__ import annotations

import logging
import random
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from zkconsumer.scenarios.splitbrain import (
    Kind,
    ScenarioParams,
    max_retries_for,
    not_applicable,
    plan,
)
from zkconsumer.scenarios.timing import Timing
from zkconsumer.sim.calibration import Calibration
from zkconsumer.sim.placement import Placement, parse_placement
from zkconsumer.sim.splitbrain.legacy import LegacySplitModel, Outcome

log = logging.getLogger(__name__)

REPAIR_LAG_S = 1.5          # real job: end of observation -> repair join (poll, verify, heal)
HORIZON_S = 3600.0
SUSPEND_FRACTION = 2.0 / 3.0  # kazoo: no answer for 2/3 of the session -> SUSPENDED
KAZOO_JITTER_S = 0.4


@dataclass(frozen=True)
class SplitSimSettings:
    calibration: Calibration = field(default_factory=Calibration)
    timing: Timing = field(default_factory=Timing)
    params: ScenarioParams = field(default_factory=ScenarioParams)
    tasks: int = 2               # client processes hosting the members; 0: one host each
    # A placement option (zkconsumer.sim.placement.parse_placement: here, per-member, PxC),
    # resolved per cell for its members; "" keeps ``tasks`` processes with a core each.
    placement: str = ""

    def placement_for(self, members: int) -> Placement | None:
        """The cell's placement for ``members`` (initial members and joiners), if set."""
        if not self.placement:
            return None
        return parse_placement(self.placement, members, tasks=max(1, self.tasks))
    idle_s: float | None = None

    @property
    def observation_idle_s(self) -> float:
        if self.idle_s is not None:
            return self.idle_s
        return 2 * self.timing.rebalance_backoff_ms / 1000.0 + self.timing.quiet_s


def double_owned(intervals: list[tuple[int, str, float, float]], t0: float, t1: float
                 ) -> tuple[float, dict[str, float]]:
    """(partition-seconds with >= 2 fetchers in [t0, t1], per member: its seconds overlapping
    another member's fetching of the same partition)."""
    by_part: dict[int, list[tuple[str, float, float]]] = defaultdict(list)
    for p, m, a, b in intervals:
        a, b = max(a, t0), min(b, t1)
        if b > a:
            by_part[p].append((m, a, b))
    total = 0.0
    overlap: dict[str, float] = defaultdict(float)
    for ivs in by_part.values():
        points = sorted({x for _, a, b in ivs for x in (a, b)})
        for a, b in zip(points, points[1:], strict=False):
            who = {m for m, s, e in ivs if s <= a < e}
            if len(who) >= 2:
                total += b - a
                for m in who:
                    overlap[m] += b - a
    return total, dict(overlap)


def stable_at(intervals: list[tuple[int, str, float, float]], partitions: int,
              t_end: float) -> float | None:
    """The last change before ``t_end`` if every partition then has exactly one fetcher."""
    live = [(p, m, a) for p, m, a, b in intervals if b > t_end]
    counts = defaultdict(int)
    for p, _, _ in live:
        counts[p] += 1
    if any(counts[p] != 1 for p in range(partitions)):
        return None
    changes = [t for _, _, a, b in intervals for t in (a, b) if 0.0 <= t <= t_end]
    return max(changes, default=0.0)


def simulate_cell(key: Any, s: SplitSimSettings, draw: int = 0) -> dict[str, Any]:
    """One sim row (the sweep table's columns); ``key`` is a SplitCellKey. The plan is the
    seed's (the real run's); ``draw`` varies only the model's own randomness."""
    t = s.timing
    retries = max_retries_for(key.scenario, s.params, t.rebalance_max_retries)
    row: dict[str, Any] = {
        "mode": "sim", "protocol": key.protocol, "scenario": key.scenario,
        "members": key.members, "partitions": key.partitions, "seed": key.seed,
        "session_timeout_ms": t.session_timeout_ms, "rebalance_backoff_ms":
        t.rebalance_backoff_ms, "rebalance_max_retries": retries, "tasks": s.tasks or None,
        "broker": ""}
    reason = not_applicable(key.protocol, key.scenario)
    if reason:
        return {**row, "applicable": False, "reason": reason}
    pl = plan(key.scenario, key.protocol, key.members, s.params, key.seed,
              t.session_timeout_ms)
    rng = random.Random(f"sim/{key.protocol}/{key.scenario}/{key.members}/{key.seed}/{draw}")
    hosts = s.tasks if s.tasks > 0 else key.members + len(pl.joiners)
    row.update(applicable=True, zombies=len(pl.zombies))
    if key.scenario == "zombie":
        row.update(zombie_fraction=s.params.zombie_fraction,
                   cut_s=s.params.cut_factor * t.session_timeout_ms / 1000.0)
    elif key.scenario == "stale-view":
        row["delay_ms_max"] = s.params.delay_ms_max
    else:
        row["storm_changes"] = s.params.storm_joins + s.params.storm_leaves
    rate = t.produce_rate / key.partitions
    if key.protocol == "zk-range":
        model = LegacySplitModel(pl, key.partitions, s.calibration, t.session_timeout_ms / 1000,
                                 t.rebalance_backoff_ms / 1000, retries, hosts, rng,
                                 messages_per_s=t.produce_rate,
                                 placement=s.placement_for(key.members + len(pl.joiners)))
        model.form()
        out = model.run(HORIZON_S)
        row.update(_legacy_metrics(out, pl, key.partitions, s, rate))
    elif key.protocol == "zk-leader-range":
        row.update(_leader_metrics(pl, key.partitions, t, rng, rate))
    else:
        row.update(double_owned_partition_s=0.0, zombie_deliveries=0, conflicts=0, rollbacks=0,
                   rebalances_given_up=0, gave_up_members=0, p_give_up=0.0,
                   unowned_partition_s=0.0)
    return row


def _legacy_metrics(out: Outcome, pl: Any, partitions: int, s: SplitSimSettings,
                    rate: float) -> dict[str, Any]:
    if not out.converged:
        return {"conflicts": out.conflicts, "rollbacks": out.rollbacks,
                "rebalances_given_up": out.given_up, "gave_up_members": len(out.gave_up),
                "p_give_up": 1.0 if out.given_up else 0.0, "time_to_stable_s": None,
                "settled": False}
    done = out.last_coordination
    end = max(done, pl.last_action_s) + s.observation_idle_s
    dbl, per_member = double_owned(out.fetch_intervals, 0.0, end)
    zombies = set(pl.zombies)
    fetched_at_end = {p for p, _, a, b in out.fetch_intervals if a <= end < b}
    unowned = partitions - len(fetched_at_end)
    tts = stable_at(out.fetch_intervals, partitions, end)
    heal = next((a.at_s for a in pl.actions if a.kind is Kind.HEAL), None)
    zombie_stop = None
    if zombies:
        stops = [b for p, m, a, b in out.fetch_intervals if m in zombies and a < 0.0]
        zombie_stop = round(max(stops), 3) if stops and max(stops) < float("inf") else None
    return {
        "double_owned_partition_s": round(dbl, 3),
        "zombie_deliveries": round(sum(v for m, v in per_member.items() if m in zombies)
                                   * rate),
        "zombie_stop_s": zombie_stop if heal is not None else None,
        "conflicts": out.conflicts, "rollbacks": out.rollbacks,
        "attempts_max": max(out.attempts.values(), default=0),
        "attempts_mean": (round(sum(out.attempts.values()) / len(out.attempts), 3)
                          if out.attempts else 0.0),
        "rebalances_given_up": out.given_up, "gave_up_members": len(out.gave_up),
        "p_give_up": 1.0 if out.given_up else 0.0,
        "unowned_partition_s": round(unowned * (end - done + REPAIR_LAG_S), 3) if unowned
        else 0.0,
        "time_to_stable_s": None if tts is None else round(tts, 3),
        "settled": tts is not None,
    }


def _leader_metrics(pl: Any, partitions: int, t: Timing, rng: random.Random,
                    rate: float) -> dict[str, Any]:
    session = t.session_timeout_ms / 1000.0
    dbl = 0.0
    stops = []
    for _ in pl.zombies:
        stop = SUSPEND_FRACTION * session - rng.uniform(0.0, KAZOO_JITTER_S)
        # the server expires the session no earlier than a session after the last packet
        # (a commit at most half a second before the cut); only then does the leader act
        takeover = session - rng.uniform(0.0, 0.5)
        share = partitions / max(1, pl.members)
        dbl += share * max(0.0, stop - takeover)
        stops.append(stop)
    return {"double_owned_partition_s": round(dbl, 3), "zombie_deliveries": round(dbl * rate),
            "zombie_stop_s": round(max(stops), 3) if stops else None,
            "conflicts": 0, "rollbacks": 0, "rebalances_given_up": 0, "gave_up_members": 0,
            "p_give_up": 0.0, "unowned_partition_s": 0.0}
