"""Whether run sets share one proportion: the test behind "the sets differ more than sampling".

A plan judges a share (runs with a second attempt, say) on one set of runs against the model's
share. When sets of the same cell made on different days land far apart, the question is
whether that is sampling (every set a binomial draw of one proportion) or the sets themselves
differing. :func:`homogeneity_p` answers it exactly for the small counts the lab has (10 runs a
set, often 0 to 3 on one side), where Pearson's chi-square approximation is poor.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

_DIGITS = 9  # sums of the statistic are grouped at this precision


def pearson(counts: Sequence[tuple[int, int]]) -> float:
    """Pearson's statistic that the sets' ``(k, n)`` counts share the pooled proportion: the
    sum of each set's squared distance from its expected ``k``, over the binomial variance
    (0 when the pooled proportion is 0 or 1: nothing varies)."""
    k_all, n_all = _pooled(counts)
    return _statistic(counts, k_all / n_all)


def _distance(k: int, n: int, p: float) -> float:
    """One set's term of Pearson's statistic at proportion ``p`` (strictly between 0 and 1)."""
    return (k - n * p) ** 2 / (n * p * (1 - p))


def _statistic(counts: Sequence[tuple[int, int]], p: float) -> float:
    return 0.0 if p in (0.0, 1.0) else sum(_distance(k, n, p) for k, n in counts)


def homogeneity_p(counts: Sequence[tuple[int, int]]) -> float:
    """The probability that the sets' outcomes differ at least as much as these (Pearson's
    statistic at least the observed one) when the same total of runs on the counted side is
    dealt among the sets at random: Fisher's exact test for sets of any size, summed over
    every way of dealing. Small is evidence that the sets differ beyond sampling.

    Conditioning on the total makes the answer free of the unknown common proportion: sets
    that agree with each other are never counted as far apart because both are far from a
    guess of it.

    Raises ValueError, naming the count, for a set that is not ``0 <= k <= n``, ``n > 0``, or
    for fewer than two sets (one set cannot differ from itself)."""
    if len(counts) < 2:
        raise ValueError(f"a homogeneity test needs at least two sets, got {len(counts)}")
    k_all, n_all = _pooled(counts)
    p = k_all / n_all
    if p in (0.0, 1.0):
        return 1.0
    observed = round(_statistic(counts, p), _DIGITS)
    # (runs counted so far, the statistic so far) -> the ways of dealing them
    ways: dict[tuple[int, float], int] = {(0, 0.0): 1}
    for _, n in counts:
        terms = [(j, round(_distance(j, n, p), _DIGITS), math.comb(n, j)) for j in range(n + 1)]
        nxt: dict[tuple[int, float], int] = {}
        for (k, s), w in ways.items():
            for j, c, wj in terms:
                if k + j <= k_all:
                    key = (k + j, round(s + c, _DIGITS))
                    nxt[key] = nxt.get(key, 0) + w * wj
        ways = nxt
    far = sum(w for (k, s), w in ways.items() if k == k_all and s >= observed - 10 ** -_DIGITS)
    return far / math.comb(n_all, k_all)


def _pooled(counts: Sequence[tuple[int, int]]) -> tuple[int, int]:
    for k, n in counts:
        if n <= 0 or not 0 <= k <= n:
            raise ValueError(f"a set's count needs 0 <= k <= n and n > 0, got {k} of {n}")
    return sum(k for k, _ in counts), sum(n for _, n in counts)
