"""A legacy member's CPU per rebalance beyond its requests: calibrate's arithmetic on the members'
records, and what the legacy model does with the value."""

from __future__ import annotations

import pytest

from zkconsumer.calibration.rebalance_cpu import (
    RebalanceCpuSample,
    costed,
    extra_cpu_ms,
    rebalance_cpu_parameters,
    requests_between,
    sample_from_records,
)
from zkconsumer.sim import Calibration, SimConfig, simulate


def test_the_extra_is_the_cpu_the_requests_do_not_explain_per_member_that_rebalanced():
    s = RebalanceCpuSample(members=25, rebalanced=25, reads=1000, writes=200, cpu_ms=1500.0,
                           wall_ms=800.0)
    # requests: (1000 * 0.2 + 200 * 0.3) * 4 = 1040 ms; the rest over 25 members
    assert extra_cpu_ms(s, 0.2, 0.3, 4.0) == pytest.approx(460.0 / 25)
    assert extra_cpu_ms(s, 0.2, 0.3, 8.0) == pytest.approx((1500.0 - 2080.0) / 25)


def test_a_sample_is_written_with_its_requests_cost_and_the_rest_per_member():
    s = RebalanceCpuSample(25, 25, 1000, 200, 1500.0, 800.0, (90.0, 120.0))
    assert costed(s, 0.2, 0.3, 4.0) == {
        "members": 25, "rebalanced": 25, "reads": 1000, "writes": 200, "cpu_ms": 1500.0,
        "wall_ms": 800.0, "closes_ms": [90.0, 120.0], "requests_cpu_ms": 1040.0,
        "rest_ms": 18.4}


def test_a_sample_where_nobody_rebalanced_is_refused():
    s = RebalanceCpuSample(4, 0, 0, 0, 10.0, 0.0)
    with pytest.raises(ValueError, match="no member that rebalanced"):
        extra_cpu_ms(s, 0.2, 0.3, 1.0)


def test_the_parameter_is_the_median_extra_at_each_samples_crowd_factor_never_below_zero():
    samples = [RebalanceCpuSample(25, 25, 100, 0, cpu, 500.0) for cpu in (100.0, 350.0, 600.0)]
    factors: list[int] = []

    def scale_at(k: int) -> float:
        factors.append(k)
        return 1.0
    # extras (cpu - 100 * 0.5) / 25: 2, 12, 22 ms; the median is 12
    assert rebalance_cpu_parameters(samples, 0.5, 0.0, scale_at) == {"rebalance_cpu_ms": 12.0}
    assert factors == [25, 25, 25]
    low = [RebalanceCpuSample(25, 25, 100, 0, 10.0, 500.0)]
    assert rebalance_cpu_parameters(low, 0.5, 0.0, lambda k: 1.0) == {"rebalance_cpu_ms": 0.0}
    with pytest.raises(ValueError, match="no measured rebalance"):
        rebalance_cpu_parameters([], 0.5, 0.0, lambda k: 1.0)


def test_requests_grow_from_the_last_sample_before_the_join_to_the_last_in_the_window():
    samples = [(1.0, {"getData": 5, "create": 1}), (9.0, {"getData": 7, "create": 1}),
               (11.0, {"getData": 20, "getChildren": 3, "create": 4, "setData": 9}),
               (13.0, {"getData": 99, "create": 50})]
    # from the sample at 9 to the one at 11 (the one at 13 is after the window: the stop's);
    # setData (a commit) is not a coordination request
    assert requests_between(samples, 10.0, 12.0) == (16, 3)
    # a joiner has no sample before the join: its requests count from 0
    assert requests_between(samples[2:], 10.0, 12.0) == (23, 4)


def test_a_sample_reads_the_members_records_inside_the_window_only():
    joined, until = 100.0, 103.0

    def member(end: float | None, before: dict[str, int], after: dict[str, int]) -> list[dict]:
        recs: list[dict] = [{"k": "rq", "ts": 99.5, "c": before},
                            {"k": "co", "ts": 90.0, "w": "rebalance_succeeded"},
                            {"k": "rq", "ts": 101.5, "c": after},
                            # the stop after the window: a rebalance and requests not counted
                            {"k": "co", "ts": 103.4, "w": "rebalance_succeeded"},
                            {"k": "rq", "ts": 103.5, "c": {"getData": 500, "delete": 90}}]
        if end is not None:
            recs.append({"k": "co", "ts": end, "w": "rebalance_succeeded"})
        return recs
    records = {"m0": [*member(100.4, {"getData": 1}, {"getData": 11, "create": 2}),
                      {"k": "co", "ts": 100.02, "w": "attempt"},
                      {"k": "tl", "ts": 100.09, "w": "revoked", "ps": [0]},
                      {"k": "co", "ts": 100.3, "w": "attempt"},
                      {"k": "tl", "ts": 100.35, "w": "revoked", "ps": [1]}],
               "m1": [*member(100.9, {}, {"getData": 10, "delete": 2, "create": 2}),
                      {"k": "co", "ts": 100.05, "w": "attempt"},
                      {"k": "tl", "ts": 103.2, "w": "revoked", "ps": [2]}],
               "m2": member(None, {"getData": 3}, {"getData": 3})}
    s = sample_from_records(records, joined, until, 321.0)
    # m0's first attempt to its first revoke after it: 70 ms; m1 (a joiner) had no fetchers
    # to stop: its revoke came after the window, at the members' stop
    assert s == RebalanceCpuSample(members=3, rebalanced=2, reads=20, writes=6, cpu_ms=321.0,
                                   wall_ms=900.0, closes_ms=(70.0,))
    with pytest.raises(RuntimeError, match="no member recorded a rebalance in the window"):
        sample_from_records({"m2": records["m2"]}, joined, until, 1.0)


def _tts(cal: Calibration, processes: int) -> float:
    r = simulate(SimConfig("zk-range", 12, 24, "leave", seed=3, calibration=cal,
                           client_processes=processes))
    assert r.time_to_stable_s is not None
    return r.time_to_stable_s


def test_the_model_charges_the_rebalance_cpu_on_the_members_process():
    base = Calibration(jitter_cv=0.0)
    with_cpu = Calibration(jitter_cv=0.0, rebalance_cpu_ms=50.0)
    # one process for all: the 11 members that rebalance queue their 50 ms on one CPU
    assert _tts(with_cpu, 1) - _tts(base, 1) >= 11 * 0.05 * 0.9
    # a core per member: each waits its own 50 ms only
    assert _tts(with_cpu, 0) - _tts(base, 0) == pytest.approx(0.05, abs=0.02)
    # 0 (the default) draws nothing: the same seed gives the same run as a calibration without it
    assert _tts(Calibration(jitter_cv=0.0, rebalance_cpu_ms=0.0), 1) == _tts(base, 1)
