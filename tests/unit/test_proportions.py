"""The exact test that run sets share one proportion (zkconsumer.results.proportions)."""

from __future__ import annotations

import itertools
import math

import pytest

from zkconsumer.results.proportions import homogeneity_p, pearson


def brute_force_p(counts: list[tuple[int, int]]) -> float:
    """Every outcome of every set with the same total enumerated, each weighted by its ways."""
    total_k, total_n = sum(k for k, _ in counts), sum(n for _, n in counts)
    p = total_k / total_n

    def stat(ks: tuple[int, ...]) -> float:
        return sum((k - n * p) ** 2 / (n * p * (1 - p))
                   for k, (_, n) in zip(ks, counts, strict=True))

    observed = stat(tuple(k for k, _ in counts))
    total = 0.0
    for ks in itertools.product(*(range(n + 1) for _, n in counts)):
        if sum(ks) == total_k and stat(ks) >= observed - 1e-9:
            total += math.prod(math.comb(n, k) for k, (_, n) in zip(ks, counts, strict=True))
    return total / math.comb(total_n, total_k)


def test_two_sets_of_ten_at_three_and_seven_differ_with_fishers_probability() -> None:
    # 10 runs dealt over two sets of 10: splits at least as uneven as 3 / 7, out of C(20, 10)
    uneven = sum(math.comb(10, k) * math.comb(10, 10 - k) for k in (0, 1, 2, 3, 7, 8, 9, 10))
    assert homogeneity_p([(3, 10), (7, 10)]) == pytest.approx(uneven / math.comb(20, 10),
                                                              abs=1e-12)


@pytest.mark.parametrize("counts", [[(2, 4), (5, 6), (1, 5)], [(0, 3), (3, 3), (1, 2), (2, 4)]])
def test_unequal_sets_match_every_outcome_enumerated(counts: list[tuple[int, int]]) -> None:
    assert homogeneity_p(counts) == pytest.approx(brute_force_p(counts), abs=1e-12)


def test_sets_that_agree_exactly_are_certain_to_look_this_alike() -> None:
    assert pearson([(5, 10), (5, 10)]) == 0.0
    assert homogeneity_p([(5, 10), (5, 10)]) == pytest.approx(1.0)


def test_sets_all_on_one_side_share_their_proportion() -> None:
    assert homogeneity_p([(10, 10), (10, 10), (4, 4)]) == 1.0
    assert homogeneity_p([(0, 10), (0, 5)]) == 1.0


def test_opposite_sets_are_near_impossible_under_one_proportion() -> None:
    # only the two all-on-one-side deals are as uneven
    assert homogeneity_p([(0, 10), (10, 10)]) == pytest.approx(2 / math.comb(20, 10), rel=1e-9)


@pytest.mark.parametrize("counts, said", [([(11, 10), (1, 10)], "11 of 10"),
                                          ([(0, 0), (1, 10)], "0 of 0"),
                                          ([(-1, 10), (1, 10)], "-1 of 10")])
def test_a_count_that_is_not_a_proportion_is_refused_by_name(counts: list[tuple[int, int]],
                                                             said: str) -> None:
    with pytest.raises(ValueError, match=said):
        homogeneity_p(counts)


def test_one_set_cannot_be_tested_against_itself() -> None:
    with pytest.raises(ValueError, match="at least two sets, got 1"):
        homogeneity_p([(3, 10)])


def test_the_join_share_block_pools_its_sets_and_tests_them_as_printed() -> None:
    import re
    from pathlib import Path

    from zkconsumer.results.figures.draws_validation import join_share_sets
    from zkconsumer.results.figures.splitbrain_text import wilson
    from zkconsumer.results.registry import Context

    repo = Path(__file__).resolve().parents[2]
    text = join_share_sets(Context(repo / "results", repo / "docs" / "figures"))
    rows = re.findall(r"^\| (\d+|all) \| (\d+) \| (\d+) of (\d+) \[[^]]*\] \| (yes|no) \|$",
                      text, re.M)
    model = float(re.search(r"Model: (\d\.\d{3})", text).group(1))
    sets = [(int(k), int(n)) for plan, _, k, n, _ in rows if plan != "all"]
    assert len(sets) >= 8 and rows[-1][0] == "all"
    assert (int(rows[-1][2]), int(rows[-1][3])) == (sum(k for k, _ in sets),
                                                   sum(n for _, n in sets))
    for _, _, k, n, inside in rows:
        low, high = wilson(int(k), int(n))
        assert (inside == "yes") == (low <= model <= high)
    assert f"probability {homogeneity_p(sets):.4f}" in text
