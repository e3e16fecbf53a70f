"""A run set's machine speed, read off its formations, and the legacy model run at that speed.

The lab's two cores do not run equally fast from one day to the next. Run sets of the same
ZooKeeper cell, made the same way, differ in time to stable by half: every phase of every
member's rebalance stretched in the same proportion, the group read (release, ~54 serial
reads, plan) most, the request counts identical and no conflicts (docs/validation-plan-24.md,
its set-speed table). The group forms before its event as a herd of the same size on the same
registry, so a set's formations show its speed before anything judged happens: ``spark
formation-spread``'s ``formation_read`` rows, each run's median over members of its first
attempt's start to its plan.

A plan that names a :class:`SpeedReference` draws such a set's cells on a calibration slowed
by the set's median formation read over the reference (:func:`speed_factor`,
:meth:`zkconsumer.sim.Calibration.slowed`). The reference is the formation read the
calibration stands for; it cannot be measured (the model does not form the group), so
``spark fit-speed`` fits it, once, on earlier plans' sets (:func:`fit_reference`), never on the
sets that judge it. The fit is pure given the model's medians (:class:`FitCell`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Whose formations give a cell's factor (SpeedReference.per)
PER = ("folder", "cell")


@dataclass(frozen=True)
class SpeedReference:
    """Where a plan draws cells at their set's speed: the protocols, and per group size the
    formation read (seconds) the calibration stands for. Cells of other protocols or sizes are
    drawn at the calibration's speed."""

    protocols: tuple[str, ...]
    formation_read_s: tuple[tuple[int, float], ...]
    # whose formations give a cell's factor: its folder's runs (join and leave together), or
    # the cell's own (a machine can change speed while a set runs)
    per: str = "folder"

    @classmethod
    def from_json(cls, data: Any) -> SpeedReference:
        if not isinstance(data, dict) or set(data) - {"protocols", "reference_formation_read_s",
                                                      "fit", "per"}:
            raise ValueError("validation plan: set_speed must be an object with 'protocols' and "
                             "'reference_formation_read_s' (and may name its 'fit' and say "
                             f"'per' folder or cell); got {data!r}")
        per = data.get("per", "folder")
        if per not in PER:
            raise ValueError(f"validation plan: set_speed 'per' must be one of {', '.join(PER)}, "
                             f"got {per!r}")
        try:
            protocols = tuple(str(p) for p in data["protocols"])
            refs = tuple(sorted((int(n), float(s))
                                for n, s in data["reference_formation_read_s"].items()))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ValueError("validation plan: set_speed needs 'protocols' (a list) and "
                             "'reference_formation_read_s' (group size -> seconds); got "
                             f"{data!r}") from None
        for n, s in refs:
            if n < 1 or not (math.isfinite(s) and s > 0):
                raise ValueError(f"validation plan: set_speed reference for N = {n} must be a "
                                 f"finite number of seconds > 0, got {s!r}")
        return cls(protocols, refs, per)

    def reference(self, protocol: str, members: int) -> float | None:
        if protocol not in self.protocols:
            return None
        return dict(self.formation_read_s).get(members)


def speed_factor(formation_read_s: float | None, reference_s: float | None) -> float:
    """How much slower than the calibration the set ran: its median formation read over the
    reference; 1 where either is missing (a cell the plan does not draw at its set's speed)."""
    if formation_read_s is None or reference_s is None:
        return 1.0
    if not (math.isfinite(formation_read_s) and formation_read_s > 0):
        raise ValueError(f"a set's formation read must be a number of seconds > 0, got "
                         f"{formation_read_s!r}")
    return formation_read_s / reference_s


@dataclass(frozen=True)
class FitCell:
    """One earlier set's cell the reference is fitted on: its median formation read, its real
    median time to stable, and the model's median at a speed factor (``model(factor)``)."""

    label: str
    event: str
    formation_read_s: float
    real_tts: float
    model: Callable[[float], float]


@dataclass(frozen=True)
class Fit:
    reference_s: float
    loss: float
    # per fit cell: (label, event, formation read, factor, real median, model median)
    cells: tuple[tuple[str, str, float, float, float, float], ...]


def interpolate(points: Sequence[tuple[float, float]]) -> Callable[[float], float]:
    """A piecewise-linear function through ``points`` (x increasing), held flat past its ends:
    the model's median at factors between those it was drawn at."""
    xs = [x for x, _ in points]
    if sorted(xs) != xs or len(set(xs)) != len(xs) or not xs:
        raise ValueError(f"interpolation points must have distinct increasing x, got {xs}")

    def f(x: float) -> float:
        if x <= xs[0]:
            return points[0][1]
        for (x0, y0), (x1, y1) in itertools.pairwise(points):
            if x <= x1:
                return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
        return points[-1][1]
    return f


def loss(cells: Sequence[FitCell], reference_s: float) -> float:
    """Squared log error of the model's median against the real one, summed over the cells,
    each drawn at its set's factor under ``reference_s``."""
    return sum(math.log(c.model(speed_factor(c.formation_read_s, reference_s)) / c.real_tts)
               ** 2 for c in cells)


def fit_reference(cells: Sequence[FitCell], candidates: Sequence[float]) -> Fit:
    """The candidate reference with the least :func:`loss` (the first of equals)."""
    if not cells or not candidates:
        raise ValueError("fitting a speed reference needs at least one cell and one candidate")
    best = min(candidates, key=lambda ref: (loss(cells, ref), ref))
    factors = [speed_factor(c.formation_read_s, best) for c in cells]
    rows = tuple((c.label, c.event, c.formation_read_s, f, c.real_tts, c.model(f))
                 for c, f in zip(cells, factors, strict=True))
    return Fit(best, loss(cells, best), rows)


def fit_json(fit: Fit, inputs: Mapping[str, Any]) -> dict[str, Any]:
    return {"reference_formation_read_s": fit.reference_s, "loss": round(fit.loss, 6),
            **inputs,
            "cells": [{"set": label, "event": event, "formation_read_s": fr,
                       "factor": round(factor, 4), "real_tts": real, "model_tts": round(m, 4)}
                      for label, event, fr, factor, real, m in fit.cells]}
