"""Where the lab's events fell on the producer's cycle (docs/validation-plan-24.md)."""

import pytest

from zkconsumer.results.figures.producer_validation import cycle_points


def test_events_locked_to_the_cycle_have_tight_quartiles_and_spread_ones_do_not():
    # the leader N = 48 leaves: 3.6-3.9 s after the first record, 0.0-0.3 s into the cycle
    locked = cycle_points([3.61, 3.66, 3.70, 3.72, 3.88], 0.6)
    assert locked == pytest.approx((0.06, 0.10, 0.12))
    spread = cycle_points([6.0 + k * 0.13 for k in range(12)], 0.6)
    assert spread[2] - spread[0] > 0.25
    assert cycle_points([3.63], 0.6) == pytest.approx((0.03, 0.03, 0.03))
