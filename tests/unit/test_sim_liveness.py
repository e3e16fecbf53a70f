"""When a killed member is noticed: kazoo's ping phase and ZooKeeper's expiry tick."""

from __future__ import annotations

import random
import statistics

import pytest

from zkconsumer.sim import Calibration, SimConfig, simulate
from zkconsumer.sim.liveness import (
    draw_kill_phase,
    expiry_residual_factor,
    kazoo_ping_interval_s,
    round_to_next_tick,
    zk_expiry_after_kill_s,
    zk_expiry_for_kill,
)

TIMEOUT = 6.0
TICK = 0.5


def test_kazoo_pings_after_a_third_of_the_timeout_minus_its_jitter():
    # read_timeout = 4 s at a 6 s session; a ping after read_timeout / 2 - jitter of idleness
    assert kazoo_ping_interval_s(TIMEOUT, 0.01) == pytest.approx(1.99)
    assert kazoo_ping_interval_s(TIMEOUT, 0.40) == pytest.approx(1.60)


@pytest.mark.parametrize("t,phase,expected", [(6.0, 0.0, 6.5), (6.1, 0.0, 6.5),
                                              (6.49, 0.0, 6.5), (6.1, 0.2, 6.2),
                                              (6.2, 0.2, 6.7)])
def test_deadlines_round_up_strictly_to_the_next_tick(t, phase, expected):
    assert round_to_next_tick(t, TICK, phase) == pytest.approx(expected)
    assert round_to_next_tick(t, 0.0, phase) == t  # no tick: no rounding


def test_a_kill_is_noticed_between_timeout_minus_a_ping_interval_and_timeout_plus_a_tick():
    rng = random.Random(5)
    delays = [zk_expiry_for_kill(rng, TIMEOUT, TICK, 1.0) for _ in range(2000)]
    assert min(delays) >= TIMEOUT - kazoo_ping_interval_s(TIMEOUT, 0.01) - 1e-9
    assert max(delays) <= TIMEOUT + TICK + 1e-9
    # the whole range is used: some kills are noticed well before the timeout
    assert min(delays) < TIMEOUT - 1.5 and max(delays) > TIMEOUT + 0.3
    # mean: timeout - half a ping interval (~0.9 s) + half a tick
    assert statistics.mean(delays) == pytest.approx(TIMEOUT - 0.9 + TICK / 2, abs=0.08)


def test_the_kill_phase_is_deterministic_per_seed():
    a = draw_kill_phase(random.Random(11), TIMEOUT, TICK)
    b = draw_kill_phase(random.Random(11), TIMEOUT, TICK)
    c = draw_kill_phase(random.Random(12), TIMEOUT, TICK)
    assert a == b and a != c
    assert 0.0 <= a.silent_s <= a.ping_interval_s and 0.0 <= a.tick_phase_s <= TICK


def test_the_calibrated_residual_does_not_count_the_tick_twice():
    """calibrate kills right after a request (no ping phase) and subtracts half a tick."""
    measured = 4.2996  # seconds at a 4 s timeout: the calibration file's 1.0749
    factor = expiry_residual_factor(measured, 4.0, TICK)
    assert factor == pytest.approx(1.0124, abs=1e-4)
    phases = [TICK * (i + 0.5) / 1000 for i in range(1000)]  # the tick grid, uniform
    model = statistics.mean(zk_expiry_after_kill_s(4.0, 0.0, TICK, p, factor) for p in phases)
    assert model == pytest.approx(measured, abs=1e-3)


def test_a_legacy_crash_is_stable_before_the_whole_timeout_on_some_seeds():
    cal = Calibration(session_expiry_factor=1.0, zk_tick_ms=500.0)
    runs = [simulate(SimConfig("zk-range", 4, 8, "crash", seed=s, calibration=cal))
            for s in range(12)]
    times = [r.time_to_stable_s for r in runs]
    assert all(t is not None for t in times)
    assert min(times) < TIMEOUT - 0.5  # the ping phase: noticed before the timeout
    # without an owner conflict (and its backoff): the tick, then a short rebalance
    assert max(r.time_to_stable_s for r in runs if not r.conflicts) < TIMEOUT + TICK + 0.5
    again = simulate(SimConfig("zk-range", 4, 8, "crash", seed=3, calibration=cal))
    assert again.time_to_stable_s == times[3]
