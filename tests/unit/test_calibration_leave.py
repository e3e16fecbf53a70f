"""The measured leave and spread: calibrate's estimators and what the simulator makes of them."""

from __future__ import annotations

import random

import pytest

from zkconsumer.calibration.leave import (
    LeaveSample,
    jitter_cv,
    leave_from_records,
    leave_parameters,
    quartiles,
    robust_cv,
)
from zkconsumer.calibration.measure import calibration_from
from zkconsumer.sim import Calibration, SimConfig, simulate
from zkconsumer.sim.legacy import leave_stop_s

MEASURED_MS = {"read_ms": 1.0, "read_cpu_ms": 0.3, "write_ms": 2.0, "write_cpu_ms": 0.5,
               "write_service_ms": 0.4, "watch_delivery_ms": 1.5, "connect_ms": 9.0,
               "expiry_factor": 1.1}


def test_quartiles_interpolate_between_order_statistics():
    assert quartiles([5, 1, 4, 2, 3]) == (2.0, 3.0, 4.0)
    assert quartiles([8, 2, 6, 4]) == (3.5, 5.0, 6.5)


def test_the_robust_cv_is_the_interquartile_range_over_1349_over_the_median():
    assert robust_cv([1, 2, 3, 4, 5]) == pytest.approx(2 / 1.349 / 3, abs=1e-12)
    assert robust_cv([10, 10, 10, 10]) == 0.0
    # one outlier in the tail does not move it, unlike the standard deviation
    assert robust_cv([1, 2, 3, 4, 5, 1000]) == robust_cv([1, 2, 3, 4, 5, 6])


def test_the_robust_cv_refuses_too_few_samples_and_a_zero_median():
    with pytest.raises(ValueError, match="at least 4 samples, got 3"):
        robust_cv([1, 2, 3])
    with pytest.raises(ValueError, match="positive median, got 0.0"):
        robust_cv([0, 0, 0, 5])


def test_jitter_cv_is_the_median_over_the_series_and_skips_short_ones():
    cv, per = jitter_cv({"read": [1, 2, 3, 4, 5], "create": [10, 10, 10, 10],
                         "watch": [2, 4, 6, 8], "expiry": [1.0, 9.0]})
    assert per == {"create": 0.0, "read": 0.494, "watch": 0.445}
    assert cv == 0.445


def test_jitter_cv_without_a_usable_series_names_them():
    with pytest.raises(ValueError, match=r"'connect': 3"):
        jitter_cv({"connect": [1.0, 2.0, 3.0]})


def test_a_leave_is_read_off_the_members_own_records():
    requested = 100.0
    records = [
        {"k": "tl", "ts": 99.0, "w": "revoked", "ps": [0]},  # an earlier rebalance: not it
        {"k": "lc", "ts": 100.25, "w": "stopping"},
        {"k": "tl", "ts": 100.26, "w": "revoked", "ps": [0, 1]},
        {"k": "tl", "ts": 100.27, "w": "revoked", "ps": [2, 3]},
        {"k": "lc", "ts": 100.4, "w": "stopped"},
    ]
    s = leave_from_records(records, requested, 4, gone=100.3)
    assert s == LeaveSample(4, 250.0, 20.0, 300.0)


def test_a_leave_without_its_records_is_an_error_not_a_zero():
    with pytest.raises(RuntimeError, match="recorded no stop"):
        leave_from_records([{"k": "lc", "ts": 1.0, "w": "stopping"}], 0.5, 4, None)


def test_the_leave_parameters_are_the_idle_mean_wake_and_the_median_shutdowns():
    idle = [LeaveSample(4, w, s, None) for w, s in [(100, 10), (500, 30), (200, 20.5)]]
    # the wake is uniform over the loop's wait: its mean estimates the median
    assert leave_parameters(idle) == {"leave_wake_ms": 266.67, "leave_shutdown_ms": 20.5}
    busy = [LeaveSample(1, w, s, None, 1.6) for w, s in [(50, 97.0), (60, 101.0), (70, 2.0)]]
    assert leave_parameters(idle + busy) == {"leave_wake_ms": 266.67, "leave_shutdown_ms": 20.5,
                                             "fetcher_close_traffic_ms": 97.0}


def test_leave_parameters_need_an_idle_leave():
    with pytest.raises(ValueError, match="idle topic"):
        leave_parameters([LeaveSample(1, 50.0, 97.0, None, 1.6)])


def test_calibrate_records_the_leave_and_the_spread_as_measured():
    cal = calibration_from(MEASURED_MS, 0.8, "test servers",
                           leave={"leave_wake_ms": 180.0, "leave_shutdown_ms": 15.0},
                           jitter=0.41)
    assert (cal.leave_wake_ms, cal.leave_shutdown_ms, cal.jitter_cv) == (180.0, 15.0, 0.41)
    for name in ("leave_wake_ms", "leave_shutdown_ms", "jitter_cv"):
        assert cal.origin(name).startswith("measured by calibrate ")
    skipped = calibration_from(MEASURED_MS, 0.8, "test servers")
    assert skipped.jitter_cv == Calibration().jitter_cv
    assert skipped.origin("jitter_cv").startswith("not measured (skipped")


def test_the_leave_stop_is_a_uniform_wake_cut_by_traffic_then_the_shutdown():
    cal = Calibration(leave_wake_ms=100.0, leave_shutdown_ms=50.0)
    idle = leave_stop_s(random.Random(3), cal, 2, 8, 0.0, fetcher_s=9.9, jitter=1.2)
    ref = random.Random(3)
    assert idle == ref.uniform(0.0, 0.2) + 0.05 * 1.2
    busy = leave_stop_s(random.Random(3), cal, 2, 8, 40.0, fetcher_s=9.9, jitter=1.0)
    ref = random.Random(3)
    wake = ref.uniform(0.0, 0.2)
    assert busy == min(wake, ref.expovariate(10.0)) + 0.05
    # not measured: the fetcher stop alone, and no random draw
    rng = random.Random(3)
    assert leave_stop_s(rng, Calibration(), 2, 8, 40.0, fetcher_s=0.07, jitter=1.0) == 0.07
    assert rng.random() == random.Random(3).random()


def test_a_leaver_with_traffic_shuts_down_in_the_measured_close_under_traffic():
    cal = Calibration(leave_wake_ms=100.0, leave_shutdown_ms=10.0, fetcher_close_traffic_ms=100.0)
    busy = leave_stop_s(random.Random(3), cal, 1, 24, 40.0, fetcher_s=9.9, jitter=1.1)
    ref = random.Random(3)
    assert busy == min(ref.uniform(0.0, 0.2), ref.expovariate(40.0 / 24)) + 0.1 * 1.1
    # owning nothing (or an idle topic), its client has no fetch in flight: the idle shutdown
    idle = leave_stop_s(random.Random(3), cal, 0, 24, 40.0, fetcher_s=9.9, jitter=1.0)
    assert idle == random.Random(3).uniform(0.0, 0.2) + 0.01


@pytest.mark.parametrize("protocol", ["zk-range", "zk-leader-range"])
def test_a_measured_leave_shutdown_delays_a_leave_by_its_length(protocol):
    # the leader mode's leaver runs the same lab member and connector shutdown
    still = {"jitter_cv": 0.0, "fetcher_stop_min_ms": 0.0, "fetcher_stop_max_ms": 0.0}
    base = simulate(SimConfig(protocol, 6, 12, "leave", seed=2,
                              calibration=Calibration(**still)))
    slow = simulate(SimConfig(protocol, 6, 12, "leave", seed=2,
                              calibration=Calibration(leave_shutdown_ms=300.0, **still)))
    assert slow.time_to_stable_s - base.time_to_stable_s == pytest.approx(0.3, abs=1e-9)
    assert slow.coordination_requests == base.coordination_requests


def test_calibrate_refuses_too_few_leaves_and_an_unreadable_base(tmp_path, capsys):
    from zkconsumer.cli.main import main

    out = tmp_path / "cal.json"
    assert main(["calibrate", "--leave-onto", str(tmp_path / "none.json"), "--leave-repeats",
                 "1", "--out", str(out)]) == 2
    assert "--leave-repeats must be >= 2, got 1" in capsys.readouterr().err
    assert main(["calibrate", "--leave-onto", str(tmp_path / "none.json"), "--out",
                 str(out)]) == 2
    err = capsys.readouterr().err
    assert "--leave-onto" in err and "none.json" in err
    assert not out.exists()
