"""Medians and cell formatting shared by every summary table (lab, split brain, Spark, CLI).

One rule for all of them, so that the same number reads the same in every table: a missing
value is a dash (or what the caller names), a whole number has no decimals, and a fraction has
``digits`` decimals (by default 1 from 10 up, else 2).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Any


def median(values: Iterable[float | int | None]) -> float | None:
    """The median of the values that are present; None when none is."""
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def nearest_rank(values: Iterable[float], share: float) -> float | None:
    """The value at ``share`` (0 to 1) of the sorted values, by nearest rank (no
    interpolation: always one of the values); None when there is none."""
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def fmt(value: Any, digits: int | None = None, *, thousands: bool = False,
        missing: str = "—") -> str:
    """One table cell.

    ``thousands`` groups digits with commas and then shows every float with ``digits``
    decimals, whole or not (the Spark tables, whose columns mix both).
    """
    if value is None:
        return missing
    if isinstance(value, str):
        return value
    sep = "," if thousands else ""
    if isinstance(value, float) and (thousands or not value.is_integer()):
        places = digits if digits is not None else (1 if abs(value) >= 10 else 2)
        return f"{value:{sep}.{places}f}"
    return f"{int(value):{sep}}"


def relative_error(real: float | None, sim: float | None, spec: str = ",.0f",
                   unit: str = "") -> str:
    """The simulator's error against a real median, in per cent of the real value; a real 0
    has no relative error (a percentage of 0 would read as a huge miss), so the absolute
    difference is printed instead."""
    if real is None or sim is None:
        return "—"
    if real == 0:
        return f"real 0: off by {format(abs(sim), spec)}{unit}"
    return f"{100 * abs(sim - real) / abs(real):.0f}%"
