"""Power-law fits: how a cost grows with the group size.

The herd effect is a claim about growth: on one membership change every one of N members reads
all N registrations, so requests per event grow like N². A least-squares line through
``(log N, log requests)`` turns that into one number, the slope: 1 is linear, 2 quadratic.
Pure functions, no numpy needed for five points.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class PowerFit:
    """``y ≈ exp(intercept) * x ** slope``, fitted on ``points``; ``r2`` in log space."""

    slope: float
    intercept: float
    r2: float | None
    points: tuple[tuple[float, float], ...]

    def predict(self, x: float) -> float:
        return math.exp(self.intercept) * x ** self.slope

    def to_json(self) -> dict[str, object]:
        return {"slope": round(self.slope, 4), "intercept": round(self.intercept, 4),
                "r2": None if self.r2 is None else round(self.r2, 4),
                "points": [[_num(x), _num(y)] for x, y in self.points]}


def _num(v: float) -> float | int:
    return int(v) if float(v).is_integer() else v


def loglog_fit(points: Sequence[tuple[float, float]]) -> PowerFit | None:
    """Least squares of ``log y`` on ``log x``; None with fewer than two distinct usable x.

    Points with a non-positive coordinate (or None) cannot be on a log scale and are dropped;
    they are not in ``points`` of the result either, so a reader sees what was fitted.
    """
    usable = sorted((float(x), float(y)) for x, y in points
                    if x is not None and y is not None and x > 0 and y > 0)
    if len({x for x, _ in usable}) < 2:
        return None
    lx = [math.log(x) for x, _ in usable]
    ly = [math.log(y) for _, y in usable]
    n = len(usable)
    mx, my = sum(lx) / n, sum(ly) / n
    sxx = sum((a - mx) ** 2 for a in lx)
    sxy = sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True))
    slope = sxy / sxx
    intercept = my - slope * mx
    syy = sum((b - my) ** 2 for b in ly)
    resid = sum((b - (intercept + slope * a)) ** 2 for a, b in zip(lx, ly, strict=True))
    r2 = None if syy == 0 else 1.0 - resid / syy
    return PowerFit(slope, intercept, r2, tuple(usable))
