"""The uniform a rebalance's fetcher stop is drawn from, estimated from timed stops."""

from __future__ import annotations

import random

import pytest

from zkconsumer.calibration.fetcher_stop import UniformEnds, uniform_ends


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
