"""How sure a figure is, worded for docs/findings.md: shares of runs with their Wilson
interval, medians with their min–max range.

The findings page states every number with how many runs (or seeds) it rests on and how far it
could be off: a probability estimated from k of n runs gets the Wilson score interval (it stays
inside [0, 1] and is not degenerate at k = 0 or k = n, where the textbook normal interval
collapses to a point, which matters with the 2 to 13 runs a cell has here); a median over
repeats gets the smallest and largest value it was taken from. A single run is called one run,
never a median. The interval itself has one home, :func:`.splitbrain_text.wilson` (the
split-brain page's statements use it too); this module only words it. Pure, so the page's
statements can be tested without the data.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from zkconsumer.results.figures.splitbrain_text import wilson


@dataclass(frozen=True)
class Share:
    """``k`` of ``n`` runs (or seeds) showed something; ``unit`` names what was counted."""

    k: int
    n: int
    unit: str = "runs"

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.k, self.n)

    @property
    def p(self) -> float:
        return self.k / self.n

    def text(self) -> str:
        """``3 of 13 runs (95 % Wilson interval 0.08–0.50)``."""
        lo, hi = self.interval
        return (f"{self.k} of {self.n} {_unit(self.unit, self.n)} (95 % Wilson interval "
                f"{lo:.2f}–{hi:.2f})")

    def cell(self) -> str:
        """The table form, under a header that says "95 % Wilson": ``3/13 (0.08–0.50)``."""
        lo, hi = self.interval
        return f"{self.k}/{self.n} ({lo:.2f}–{hi:.2f})"


def share_of(flags: Iterable[bool], unit: str = "runs") -> Share | None:
    """The share of true flags; None when there is none at all (nothing to estimate)."""
    values = list(flags)
    return Share(sum(values), len(values), unit) if values else None


@dataclass(frozen=True)
class Spread:
    """Values of one quantity over repeats: their median and their range."""

    values: tuple[float, ...]
    unit: str = "runs"

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def low(self) -> float:
        return min(self.values)

    @property
    def high(self) -> float:
        return max(self.values)

    def text(self, digits: int = 2, suffix: str = "") -> str:
        """``4.65 s (median of 3 runs, range 4.49–4.66 s)``; one value is ``4.65 s (one
        run)``; ``suffix`` is the unit of the value (`` s``)."""
        mid = f"{number(self.median, digits)}{suffix}"
        if self.n == 1:
            return f"{mid} (one {_unit(self.unit, 1)})"
        if self.low == self.high:
            return f"{mid} (all {self.n} {self.unit})"
        if number(self.low, digits) == number(self.high, digits):
            return f"{mid} (all {self.n} {self.unit} equal at this precision)"
        return (f"{mid} (median of {self.n} {self.unit}, range {number(self.low, digits)}–"
                f"{number(self.high, digits)}{suffix})")

    def cell(self, digits: int = 2) -> str:
        """The table form: ``4.65 (4.49–4.66; 3 runs)``, ``107 (one run)``."""
        mid = number(self.median, digits)
        if self.n == 1:
            return f"{mid} (one {_unit(self.unit, 1)})"
        if self.low == self.high:
            return f"{mid} ({self.n} {self.unit}, all equal)"
        if number(self.low, digits) == number(self.high, digits):
            return f"{mid} ({self.n} {self.unit}, equal at this precision)"
        return (f"{mid} ({number(self.low, digits)}–{number(self.high, digits)}; "
                f"{self.n} {self.unit})")


def spread(values: Iterable[float | int | None], unit: str = "runs") -> Spread | None:
    """The spread of the values present; None when none is."""
    present = tuple(float(v) for v in values if v is not None)
    return Spread(present, unit) if present else None


def _unit(unit: str, n: int) -> str:
    """``runs`` for many, ``run`` for one."""
    return unit.removesuffix("s") if n == 1 else unit


def number(value: float, digits: int = 2) -> str:
    """A number for prose: thousands grouped, whole numbers and numbers from 100 up without
    decimals (8,550 s, not 8,550.46 s: the runs differ in the units already)."""
    if float(value).is_integer() or abs(value) >= 100:
        return f"{round(value):,}"
    return f"{value:,.{digits}f}"


def exponent(small: tuple[int, float], large: tuple[int, float]) -> float | None:
    """The power of N a measure grew with between two sizes (N, value): log(y2 / y1) /
    log(N2 / N1); None where either value is not positive."""
    (n1, y1), (n2, y2) = small, large
    if y1 <= 0 or y2 <= 0:
        return None
    return math.log(y2 / y1) / math.log(n2 / n1)
