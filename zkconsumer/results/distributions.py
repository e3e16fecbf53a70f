"""The simulator judged on distributions: a plan's held-out cells, real runs over seeds against
model draws (``zkconsumer spark validate --plan results/scale/validation-plan-3.json``).

One real run per cell judges a race (a second attempt the model drew and the run did not have
reads as a miss of 600 %). So every cell has several real runs and many model draws, and three
checks, whose tolerances the plan fixes before the runs are made
(:class:`zkconsumer.results.judging.DistTolerances`):

- time to stable: the model's median inside the real runs' interquartile range, or within a
  relative or an absolute margin of the real median (whichever is widest);
- coordination requests: the model's median within a relative or an absolute margin;
- the share of runs with more than one rebalance attempt or a conflict: the model's share (of
  its draws) inside the 95 % Wilson interval of the real share (k of n real runs).

A plan may split a cell's runs in two (``DistTolerances.split``): by whether anything moved, or
by whether the group's formation left stragglers. A cell with two modes has a median over its
mixed runs that lands on either by chance; split, the model's share of the first side is judged
by a Wilson interval of its own, and time and requests within each side both have.

A relative error where the real value is 0 is an absolute difference (:func:`difference`).
Scoring is deterministic: the model's draws are seeds ``0 .. sim_draws - 1``.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from zkconsumer.results.figures.splitbrain_text import wilson
from zkconsumer.results.judging import (
    DistTolerances,
    Run,
    quartiles,
    requests_band,
    time_band,
)
from zkconsumer.tables import relative_error


def difference(real: float | None, sim: float | None, spec: str = ",.0f",
               unit: str = "") -> str:
    """The model's error: per cent of the real value, or the absolute difference at a real 0."""
    return relative_error(real, sim, spec, unit)


@dataclass(frozen=True)
class CellKey:
    set_name: str
    broker: str
    protocol: str
    members: int
    partitions: int
    event: str


@dataclass(frozen=True)
class CellScore:
    """One cell: its real runs and the model's draws, and the three verdicts."""

    key: CellKey
    model: str  # the simulator's protocol (profile) that drew it
    real: tuple[Run, ...]
    sim: tuple[Run, ...]
    tolerances: DistTolerances = field(default_factory=DistTolerances)
    required_runs: int = 5
    # the set's own measurements the model drew the cell with, where the plan takes them
    # (name, value): its speed, its share of formations with stragglers
    inputs: tuple[tuple[str, float], ...] = ()

    @property
    def judged(self) -> bool:
        return len(self.real) >= self.required_runs and bool(self.sim)

    @property
    def real_settled(self) -> list[float]:
        return [r.tts for r in self.real if r.tts is not None]

    @property
    def sim_settled(self) -> list[float]:
        return [r.tts for r in self.sim if r.tts is not None]

    @property
    def real_tts(self) -> float | None:
        s = self.real_settled
        return statistics.median(s) if s else None

    @property
    def real_tts_iqr(self) -> tuple[float, float] | None:
        s = self.real_settled
        return quartiles(s) if s else None

    @property
    def sim_tts(self) -> float | None:
        s = self.sim_settled
        return statistics.median(s) if s else None

    @property
    def tts_ok(self) -> bool:
        if 2 * len(self.real_settled) <= len(self.real):
            return False  # not a majority of the real runs settled
        if self.sim_tts is None or 2 * len(self.sim_settled) <= len(self.sim):
            return False
        pairs = ([(self.real_settled, self.sim_settled)] if not self.tolerances.split
                 else [(settled(real), settled(sim)) for _, real, sim in self.sides()])
        for real, sim in pairs:
            if not real or not sim:
                continue  # a side where one of them never settled: the split's share judges it
            lo, hi = time_band(real, self.tolerances)
            if not lo - 1e-9 <= statistics.median(sim) <= hi + 1e-9:
                return False
        return True

    # --- the runs split in two (DistTolerances.split) -----------------------------------------

    @property
    def real_split(self) -> int:
        """The real runs on the split's first side (that moved, or after stragglers)."""
        first = self.tolerances.split[0][1]
        return sum(first(r) for r in self.real)

    @property
    def sim_split_share(self) -> float:
        first = self.tolerances.split[0][1]
        return sum(first(r) for r in self.sim) / len(self.sim) if self.sim else 0.0

    @property
    def split_interval(self) -> tuple[float, float]:
        return wilson(self.real_split, len(self.real))

    @property
    def split_ok(self) -> bool:
        if not self.tolerances.split or self.tolerances.stragglers_given:
            return True  # no split, or its share is the model's input
        if not self.real:
            return False  # nothing to judge the share on (the cell is not judged either)
        lo, hi = self.split_interval
        return lo - 1e-9 <= self.sim_split_share <= hi + 1e-9

    def sides(self) -> list[tuple[str, tuple[Run, ...], tuple[Run, ...]]]:
        """(side, its real runs, its draws) for each side of the split both have (by
        movement, unsettled runs are on neither)."""
        out = []
        for side, test in self.tolerances.split:
            real = tuple(r for r in self.real if test(r))
            sim = tuple(r for r in self.sim if test(r))
            if real and sim:
                out.append((side, real, sim))
        return out

    @property
    def real_requests(self) -> float:
        return statistics.median(r.requests for r in self.real) if self.real else 0.0

    @property
    def sim_requests(self) -> float:
        return statistics.median(r.requests for r in self.sim) if self.sim else 0.0

    @property
    def requests_ok(self) -> bool:
        pairs = ([(self.real, self.sim)] if not self.tolerances.split
                 else [(real, sim) for _, real, sim in self.sides()])
        for real, sim in pairs:
            lo, hi = requests_band([r.requests for r in real] or [0.0], self.tolerances)
            sim_median = statistics.median(r.requests for r in sim) if sim else 0.0
            if not lo - 1e-9 <= sim_median <= hi + 1e-9:
                return False
        return True

    @property
    def real_multi(self) -> int:
        return sum(r.multi for r in self.real)

    @property
    def sim_multi_share(self) -> float:
        return sum(r.multi for r in self.sim) / len(self.sim) if self.sim else 0.0

    @property
    def multi_interval(self) -> tuple[float, float]:
        return wilson(self.real_multi, len(self.real))

    @property
    def multi_ok(self) -> bool:
        lo, hi = self.multi_interval
        return lo - 1e-9 <= self.sim_multi_share <= hi + 1e-9

    @property
    def ok(self) -> bool:
        return (self.judged and self.tts_ok and self.requests_ok and self.multi_ok
                and self.split_ok)

    @property
    def flags(self) -> str:
        """The checks that failed: T(ime), R(equests), M(ore than one attempt), S(hare on the
        split's first side, where the plan splits the runs)."""
        return "".join(("" if self.tts_ok else "T", "" if self.requests_ok else "R",
                        "" if self.multi_ok else "M", "" if self.split_ok else "S"))

    def to_json(self) -> dict[str, Any]:
        k = self.key
        iqr = self.real_tts_iqr
        return {
            "set": k.set_name, "broker": k.broker, "protocol": k.protocol, "members": k.members,
            "partitions": k.partitions, "event": k.event, "model": self.model,
            "judged": self.judged, "ok": self.ok, "flags": self.flags if self.judged else "",
            "real_runs": len(self.real), "sim_draws": len(self.sim),
            "real_tts": self.real_tts, "real_tts_iqr": list(iqr) if iqr else None,
            "sim_tts": self.sim_tts, "tts_ok": self.tts_ok,
            "real_requests": self.real_requests, "sim_requests": self.sim_requests,
            "requests_ok": self.requests_ok,
            "real_multi": self.real_multi, "multi_interval": list(self.multi_interval)
            if self.real else None, "sim_multi_share": self.sim_multi_share,
            "multi_ok": self.multi_ok if self.real else False,
            "real": [run_to_json(r, self.tolerances.split_by_stragglers) for r in self.real],
            "sim": [run_to_json(r, self.tolerances.split_by_stragglers) for r in self.sim],
            **self.split_json(),
            **({"model_inputs": dict(self.inputs)} if self.inputs else {}),
        }

    def split_json(self) -> dict[str, Any]:
        """The split check's figures, named by its first side (``real_moved``,
        ``sim_moved_share``, ``moved_ok``; ``real_stragglers`` ...); none without a split."""
        if not self.tolerances.split:
            return {}
        first = self.tolerances.split[0][0]
        return {f"real_{first}": self.real_split, f"sim_{first}_share": self.sim_split_share,
                f"{first}_ok": self.split_ok,
                **({f"{first}_given": True} if self.tolerances.stragglers_given else {})}


def settled(runs: Sequence[Run]) -> list[float]:
    """The times to stable of the runs that settled."""
    return [r.tts for r in runs if r.tts is not None]


def run_to_json(r: Run, stragglers: bool = False) -> dict[str, Any]:
    """A run as a scoring records it; with ``stragglers`` (a plan that splits by them), also
    whether its formation left some, where it did."""
    return {"requests": r.requests, "attempts": r.attempts, "conflicts": r.conflicts,
            "tts": r.tts, **({"stragglers": True} if stragglers and r.stragglers else {})}


def run_from_json(d: dict[str, Any]) -> Run:
    return Run(float(d["requests"]), float(d["attempts"]), float(d["conflicts"]),
               None if d.get("tts") is None else float(d["tts"]), bool(d.get("stragglers")))


# --- tables -------------------------------------------------------------------------------------


def _t(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def score_table(scores: Sequence[CellScore]) -> list[str]:
    """One row per cell: real distribution vs the model's, and the verdict; where two run sets
    of the plan share a broker, each row names its set beside the broker."""
    shared = len({k.set_name for k in (s.key for s in scores)}) > len(
        {s.key.broker for s in scores})
    requests = ("real median [IQR] / model median" if any(s.tolerances.requests_iqr
                                                          for s in scores)
                else "real / model")
    lines = ["| broker | protocol (model) | N | event | real runs / draws | time to stable s: real "
             f"median [IQR] / model median (error) | requests: {requests} (error) | more than "
             "one attempt: real k of n [95 %] / model share | verdict |",
             "|---|---|---|---|---|---|---|---|---|"]
    for s in scores:
        k = s.key
        iqr = s.real_tts_iqr
        band = f" [{iqr[0]:.2f}–{iqr[1]:.2f}]" if iqr else ""
        if s.real:
            lo, hi = s.multi_interval
            multi = f"{s.real_multi} of {len(s.real)} [{lo:.2f}–{hi:.2f}]"
        else:
            multi = "—"
        verdict = ("not judged (runs missing)" if not s.judged
                   else "pass" if s.ok else f"fail: {s.flags}")
        if s.tolerances.split and s.real and (s.real_split or s.sim_split_share):
            # a cell with no run and no draw on the split's first side is judged as unsplit
            verdict += f" ({sides_note(s)})"
        lines.append(
            f"| {k.broker}{f' ({k.set_name})' if shared else ''} | {k.protocol} (`{s.model}`) "
            f"| {k.members} | {k.event} | "
            f"{len(s.real)} / "
            f"{len(s.sim)} | {_t(s.real_tts)}{band} / {_t(s.sim_tts)} "
            f"({difference(s.real_tts, s.sim_tts, '.2f', ' s')}) | "
            f"{requests_cell(s)} | "
            f"{multi} / {s.sim_multi_share:.2f} | {verdict} |")
    return lines


def sides_note(s: CellScore) -> str:
    """The split check's figures: the share on its first side, then each side's medians (a
    side that moved nothing has no time to show)."""
    lo, hi = s.split_interval
    out = [f"{s.tolerances.split[0][0]}: {s.real_split} of {len(s.real)} [{lo:.2f}–{hi:.2f}] / "
           f"{s.sim_split_share:.2f}" + (" (given)" if s.tolerances.stragglers_given else "")]
    for side, real, sim in s.sides():
        time = ("" if side == "still" or not settled(real) or not settled(sim) else
                f"{_t(statistics.median(settled(real)))} s / "
                f"{_t(statistics.median(settled(sim)))} s, ")
        out.append(f"{side}: {time}{statistics.median(r.requests for r in real):,.0f}"
                   f"{requests_spread(s, real)} / "
                   f"{statistics.median(r.requests for r in sim):,.0f} requests")
    return "; ".join(out)


def requests_spread(s: CellScore, real: Sequence[Run]) -> str:
    """`` [q1–q3]`` of the real request counts where the plan judges requests inside them."""
    if not s.tolerances.requests_iqr or not real:
        return ""
    q1, q3 = quartiles([r.requests for r in real])
    return f" [{q1:,.0f}–{q3:,.0f}]"


def requests_cell(s: CellScore) -> str:
    if not s.real:
        return f"— / {s.sim_requests:,.0f}"
    return (f"{s.real_requests:,.0f}{requests_spread(s, s.real)} / {s.sim_requests:,.0f} "
            f"({difference(s.real_requests, s.sim_requests)})")


def pass_line(scores: Sequence[CellScore]) -> str:
    judged = [s for s in scores if s.judged]
    unjudged = len(scores) - len(judged)
    ok = sum(s.ok for s in judged)
    share = f" ({ok / len(judged):.0%})" if judged else ""
    return (f"{ok} of {len(judged)} judged cells within tolerance{share}"
            + (f"; {unjudged} of {len(scores)} cells not judged (real runs missing)"
               if unjudged else ""))


def score_from_json(d: dict[str, Any], tolerances: DistTolerances,
                    required_runs: int) -> CellScore:
    """A committed scoring's cell back as a :class:`CellScore` (the docs' renderer reads it)."""
    key = CellKey(d["set"], d["broker"], d["protocol"], int(d["members"]),
                  int(d["partitions"]), d["event"])
    return CellScore(key, d["model"], tuple(run_from_json(r) for r in d["real"]),
                     tuple(run_from_json(r) for r in d["sim"]), tolerances, required_runs,
                     tuple(sorted(d.get("model_inputs", {}).items())))
