"""What a validation plan's checks read and how far they let the model be: one run's outcome
(:class:`Run`, real or drawn), the plan's tolerances (:class:`DistTolerances`, fixed before its
runs are made), the bands a model median must lie in, and the two ways a plan may split a
cell's runs (by whether anything moved, by whether the formation left stragglers).

The scoring itself (:mod:`zkconsumer.results.distributions`) applies them cell by cell.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Run:
    """One run's outcome, real or drawn: what the three checks read."""

    requests: float
    attempts: float
    conflicts: float
    tts: float | None  # None: it did not settle
    stragglers: bool = False  # its group's formation left stragglers (a broker's late look)

    @property
    def multi(self) -> bool:
        """More than one rebalance attempt (the most one member made) or a conflict."""
        return self.attempts > 1 or self.conflicts > 0


def quartiles(values: Sequence[float]) -> tuple[float, float]:
    """(first, third) quartile, by linear interpolation between order statistics (a single
    value is its own quartiles)."""
    if not values:
        raise ValueError("quartiles of no values")
    xs = sorted(values)
    if len(xs) == 1:
        return xs[0], xs[0]
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], q[2]


# A run that settled this soon after its event moved nothing: the lab reports exactly 0 then,
# and the model a leaver's own departure, a tenth of a millisecond after the event; any real
# move takes at least a request round trip to a broker or ZooKeeper.
MOVED_FROM_S = 0.01


def moved(r: Run) -> bool:
    """Something moved after the event: the run settled, and not at once."""
    return r.tts is not None and r.tts >= MOVED_FROM_S


def still(r: Run) -> bool:
    """Nothing moved: the run was stable at once."""
    return r.tts is not None and r.tts < MOVED_FROM_S


def after_stragglers(r: Run) -> bool:
    return r.stragglers


def without_stragglers(r: Run) -> bool:
    return not r.stragglers


@dataclass(frozen=True)
class DistTolerances:
    """How far the model's distribution may be from the real one (the plan's ``tolerances``)."""

    time_relative: float = 0.20
    time_absolute_s: float = 0.25
    time_iqr: bool = True
    requests_relative: float = 0.10
    requests_absolute: float = 5.0
    # the requests check also passes inside the real runs' interquartile range, as the time
    # check does: a cell whose request count is spread wide (a joiner that gets nothing, its
    # count set by where the observer's window closed on the members' heartbeats) has a median
    # over ten runs that moves by more than the margins from one run set to the next
    requests_iqr: bool = False
    # judge the runs where something moved (time to stable > 0) and those where nothing did
    # apart: a cell whose event moves partitions about half the time has two modes, and one
    # median over both lands on either by chance
    split_by_movement: bool = False
    # judge the runs after a formation that left stragglers (members answered one of the
    # broker's looks after the rest, zkconsumer.sim.formation) and the others apart: slow or
    # counting everybody's heartbeats after them, quick otherwise
    split_by_stragglers: bool = False
    # the model draws stragglers at the share the set's own formations had (they come before
    # the event: the set's state, measured), so that share is the model's input and not
    # judged; time and requests are still judged on each side
    stragglers_given: bool = False

    def __post_init__(self) -> None:
        if self.split_by_movement and self.split_by_stragglers:
            raise ValueError("validation plan: split_by_movement and split_by_stragglers "
                             "cannot both be set (a cell's runs are split one way)")
        if self.stragglers_given and not self.split_by_stragglers:
            raise ValueError("validation plan: stragglers_given needs split_by_stragglers (the "
                             "share it gives the model is the split's)")

    @property
    def split(self) -> tuple[tuple[str, Callable[[Run], bool]], ...]:
        """The split's two sides (name, which runs are on it), the first the one whose share
        is judged; empty where the plan does not split."""
        if self.split_by_movement:
            return (("moved", moved), ("still", still))
        if self.split_by_stragglers:
            return (("stragglers", after_stragglers), ("none", without_stragglers))
        return ()

    @classmethod
    def from_plan(cls, plan: dict[str, Any]) -> DistTolerances:
        t = plan.get("tolerances")
        keys = {"time_to_stable_relative", "time_to_stable_absolute_s", "time_to_stable_iqr",
                "requests_relative", "requests_absolute", "multi_attempt_share"}
        optional = {"split_by_movement", "split_by_stragglers", "requests_iqr",
                    "stragglers_given"}
        if not isinstance(t, dict) or not keys <= set(t) <= keys | optional:
            raise ValueError(f"validation plan: 'tolerances' must give exactly "
                             f"{', '.join(sorted(keys))} (and may give "
                             f"{', '.join(sorted(optional))}); got {t!r}")
        if t["multi_attempt_share"] != "wilson-95":
            raise ValueError(f"validation plan: multi_attempt_share must be 'wilson-95', got "
                             f"{t['multi_attempt_share']!r}")
        return cls(float(t["time_to_stable_relative"]), float(t["time_to_stable_absolute_s"]),
                   bool(t["time_to_stable_iqr"]), float(t["requests_relative"]),
                   float(t["requests_absolute"]), bool(t.get("requests_iqr", False)),
                   bool(t.get("split_by_movement", False)),
                   bool(t.get("split_by_stragglers", False)),
                   bool(t.get("stragglers_given", False)))

    def describe(self) -> str:
        iqr = "the real interquartile range, or " if self.time_iqr else ""
        return (f"time to stable: {iqr}±{self.time_relative:.0%} or "
                f"±{self.time_absolute_s:g} s of the real median; requests: "
                + ("the real interquartile range, or " if self.requests_iqr else "")
                + f"±{self.requests_relative:.0%} or ±{self.requests_absolute:g}; more than one "
                "attempt or a conflict: the model's share inside the real share's 95 % Wilson "
                "interval" + ("; the runs split by whether anything moved (time to stable from "
                              f"{MOVED_FROM_S:g} s): "
                              "the model's share that moved inside the real share's 95 % "
                              "Wilson interval, time and requests judged within each side "
                              "both have" if self.split_by_movement else "")
                + ("; the runs split by whether their formation left stragglers: "
                   + ("the model draws them at the share the set's own formations had (not "
                      "judged)" if self.stragglers_given else
                      "the model's share of draws with stragglers inside the real share's 95 % "
                      "Wilson interval")
                   + ", time and requests judged within each side both have"
                   if self.split_by_stragglers else ""))


def time_band(real: Sequence[float], tol: DistTolerances) -> tuple[float, float]:
    """The interval the model's median time to stable must lie in (settled real runs)."""
    med = statistics.median(real)
    lo = min(med * (1 - tol.time_relative), med - tol.time_absolute_s)
    hi = max(med * (1 + tol.time_relative), med + tol.time_absolute_s)
    if tol.time_iqr:
        q1, q3 = quartiles(real)
        lo, hi = min(lo, q1), max(hi, q3)
    return max(0.0, lo), hi


def requests_band(real: Sequence[float], tol: DistTolerances) -> tuple[float, float]:
    """The interval the model's median request count must lie in (the real runs' counts)."""
    med = statistics.median(real)
    margin = max(abs(med) * tol.requests_relative, tol.requests_absolute)
    lo, hi = med - margin, med + margin
    if tol.requests_iqr:
        q1, q3 = quartiles(real)
        lo, hi = min(lo, q1), max(hi, q3)
    return lo, hi
