"""The rules the scale and validation pages print by: the N-law's exponent, how many runs a
figure rests on, and the simulator's error against a real value of 0."""

from __future__ import annotations

import pytest

from zkconsumer.results.figures.scale_findings import (
    count_phrase,
    local_slope,
    loglog_slope,
    spread,
)
from zkconsumer.tables import relative_error


def test_a_real_zero_gets_the_absolute_difference_not_a_percentage() -> None:
    assert relative_error(0.0, 7.83, ".2f", " s") == "real 0: off by 7.83 s"
    assert relative_error(0, 103) == "real 0: off by 103"


def test_a_nonzero_real_value_gets_the_relative_error_in_per_cent() -> None:
    assert relative_error(16.742, 14.85) == "11%"
    assert relative_error(283, 283) == "0%"


def test_a_missing_side_has_no_error() -> None:
    assert relative_error(None, 7.83) == "—"
    assert relative_error(1.0, None) == "—"


def test_the_exponent_of_a_pure_power_law_is_its_power() -> None:
    points = [(n, 3.0 * n * n) for n in (4, 8, 16, 64)]
    assert loglog_slope(points) == pytest.approx(2.0)
    assert local_slope(points) == pytest.approx(2.0)


def test_the_local_exponent_uses_the_two_largest_sizes_only() -> None:
    points = [(4, 100.0), (8, 100.0), (16, 400.0), (32, 1600.0)]
    assert local_slope(points) == pytest.approx(2.0)
    assert loglog_slope(points) < 2.0


def test_an_exponent_needs_two_sizes_and_says_what_it_got() -> None:
    with pytest.raises(ValueError, match=r"two points or more, got \[\(4, 10\.0\)\]"):
        loglog_slope([(4, 10.0)])
    with pytest.raises(ValueError, match="two different N"):
        loglog_slope([(4, 10.0), (4, 12.0)])


def test_a_single_run_is_one_run_never_a_median() -> None:
    assert count_phrase(1) == "one run"
    assert count_phrase(3) == "median of 3 runs"
    assert count_phrase(2, "draw") == "median of 2 draws"


def test_a_spread_shows_the_range_only_when_the_observations_differ() -> None:
    assert spread([56.0, 74.0]) == "65 (56–74)"
    assert spread([662.0, 662.0]) == "662"
    assert spread([8550.2, 8550.4]) == "8,550"
    assert spread([1.234], ".2f") == "1.23"


def test_the_validation_table_prints_a_real_zero_as_an_absolute_miss() -> None:
    from zkconsumer.spark.herd.validate import PLAN_TOLERANCES, Check, validation_table

    check = Check(protocol="eager-range", members=24, partitions=6, event="join", real_runs=1,
                  real_requests=5.0, sim_requests=101.0, real_attempts=0.0, sim_attempts=1.0,
                  real_tts=0.0, sim_tts=7.83, tolerances=PLAN_TOLERANCES,
                  session_timeout_ms=6000, real_settled=1)
    row = validation_table([check])[-1]
    assert "real 0: off by 7.83 s" in row
    assert "%" not in row.split("|")[9]
