"""Phrasing of the split-brain pages' generated statements: counts with their n and a 95 %
interval, lists of sizes, ranges over runs.

Pure functions of numbers. They exist so that every statement on the page says how many runs
a number rests on and how far it could be off, and never prints an empty list as an answer
("N = none") or a median of a single run.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

Z95 = 1.959963984540054  # the normal quantile of a two-sided 95 % interval


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``k`` of ``n``: unlike the normal
    approximation, it stays inside [0, 1] and is not empty at 0 of n or n of n, which is
    where most of these counts sit."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"a proportion needs 0 <= k <= n and n > 0, got {k} of {n}")
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # at 0 of n and n of n the bound is exactly 0 or 1; rounding must not move it
    return (0.0 if k == 0 else max(0.0, centre - half)), (1.0 if k == n else
                                                            min(1.0, centre + half))


def share(k: int, n: int) -> str:
    """``k of n`` with its Wilson interval, e.g. "1 of 10 (95 % interval 0.02–0.40)"."""
    lo, hi = wilson(k, n)
    return f"{k} of {n} (95 % interval {lo:.2f}–{hi:.2f})"


def sizes(ns: Iterable[int]) -> str:
    """The sizes as "N = 10, 30", or "no N measured" when there are none."""
    got = sorted(set(ns))
    return f"N = {', '.join(f'{n:,}' for n in got)}" if got else "no N measured"


def at_sizes(ns: Iterable[int]) -> str:
    """The sizes as "at N = 10, 30", or "at no N measured"."""
    return f"at {sizes(ns)}"


def runs(n: int, what: str = "run") -> str:
    """"one run" or "n runs"."""
    return f"one {what}" if n == 1 else f"{n} {what}s"


def span(values: Sequence[float], unit: str = "", digits: int = 1, what: str = "run") -> str:
    """A value over runs: "x (one run)" for one, "x in all n runs" when they agree, "a–b over
    n runs" otherwise (a single run is never a median); "no run" for none."""
    if not values:
        return f"no {what}"
    def f(v: float) -> str:
        return f"{v:,.{digits}f}{unit}"
    if len(values) == 1:
        return f"{f(values[0])} ({runs(1, what)})"
    lo, hi = min(values), max(values)
    if lo == hi:
        return f"{f(lo)} in all {runs(len(values), what)}"
    return f"{lo:,.{digits}f}–{f(hi)} over {runs(len(values), what)}"


def counts_at(cells: dict[int, tuple[int, int]]) -> str:
    """Per N, "k/n": "1/10, 0/10 at N = 2, 3"."""
    got = sorted(cells.items())
    return f"{', '.join(f'{k}/{n}' for _, (k, n) in got)} {at_sizes(n for n, _ in got)}"
