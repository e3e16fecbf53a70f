"""The uniform a rebalance's fetcher stop is drawn from, estimated from timed stops."""

from __future__ import annotations

import random

import pytest

from zkconsumer.calibration.fetcher_stop import (
    UniformEnds,
    in_step_fraction,
    in_step_share,
    uniform_ends,
)


def test_the_ends_widen_the_extremes_by_one_mean_gap():
    assert uniform_ends([10.0, 40.0, 70.0]) == UniformEnds(0.0, 100.0)
    assert uniform_ends([20.0, 30.0]) == UniformEnds(10.0, 40.0)


def test_a_low_end_below_zero_is_zero():
    assert uniform_ends([1.0, 50.0, 99.0]).low_ms == 0.0


def test_the_ends_of_many_draws_come_close_to_the_true_ends():
    rng = random.Random(3)
    ends = uniform_ends([rng.uniform(5.0, 105.0) for _ in range(200)])
    assert ends.low_ms == pytest.approx(5.0, abs=2.0)
    assert ends.high_ms == pytest.approx(105.0, abs=2.0)


def test_one_stop_is_not_enough():
    with pytest.raises(ValueError, match="at least 2 samples, got 1"):
        uniform_ends([3.0])


def test_independent_crowds_are_less_in_step_than_crowds_on_one_grid():
    rng = random.Random(5)
    independent = [[rng.uniform(0.0, 90.0) for _ in range(6)] for _ in range(2000)]
    on_grid = [[g] * 5 + [rng.uniform(0.0, 90.0)] for g in
               (rng.uniform(0.0, 90.0) for _ in range(2000))]
    assert in_step_share(independent) == pytest.approx(0.36, abs=0.04)
    assert in_step_share(on_grid) > 0.83
    assert in_step_share([]) == 0.0


def test_the_share_in_step_is_the_models_share_with_as_many_stops_together():
    # the model's own crowds at a share of 0.6, scored: the inversion finds 0.6 again
    rng = random.Random(11)
    crowds = []
    for _ in range(3000):
        grid = rng.uniform(0.0, 90.0)
        crowds.append([min(grid if rng.random() < 0.6 else rng.uniform(0.0, 90.0),
                           rng.expovariate(3.3) * 1000.0) for _ in range(6)])
    assert in_step_fraction(in_step_share(crowds), 90.0, 3.3) == pytest.approx(0.6, abs=0.05)
    assert in_step_fraction(0.0, 90.0, 3.3) == 0.0
