"""``calibrate``'s arithmetic: measured medians become the simulator's parameters."""

from __future__ import annotations

import pytest

from zkconsumer.calibration.measure import calibration_from
from zkconsumer.sim import Calibration, SimConfig, simulate

MEASURED = {"read_ms": 1.0, "read_cpu_ms": 0.3, "write_ms": 2.0, "write_cpu_ms": 0.5,
            "write_service_ms": 0.4, "watch_delivery_ms": 1.5, "connect_ms": 9.0,
            "expiry_factor": 1.1}


def test_wall_times_are_split_into_client_cpu_network_and_server_service():
    cal = calibration_from(MEASURED, broker_ms=0.8, where="test servers")
    assert cal.client_read_cpu_ms == pytest.approx(0.3)
    assert cal.zk_read_ms == pytest.approx(1.0)  # the parts add up to what a client saw
    assert cal.zk_write_ms == pytest.approx(2.0)
    assert cal.zk_write_service_ms == pytest.approx(0.4)
    assert cal.session_expiry_factor == pytest.approx(1.1)
    assert cal.broker_request_ms == pytest.approx(0.8)
    assert "test servers" in cal.source and "session_expiry_factor" in cal.source
    # what was not measured keeps its built-in value
    assert cal.broker_join_start_ms == Calibration().broker_join_start_ms


def test_skipped_measurements_keep_their_defaults_and_cpu_never_exceeds_the_wall():
    cal = calibration_from({**MEASURED, "expiry_factor": None, "read_cpu_ms": 5.0}, None, "x")
    assert cal.session_expiry_factor == Calibration().session_expiry_factor
    assert cal.client_read_cpu_ms == pytest.approx(1.0) and cal.zk_read_latency_ms == 0.0


def test_the_simulator_follows_its_calibration():
    still = {"jitter_cv": 0.0, "fetcher_stop_min_ms": 0.0, "fetcher_stop_max_ms": 0.0}
    slow = Calibration(zk_read_latency_ms=5.0, **still)
    fast = Calibration(zk_read_latency_ms=0.1, **still)
    t_slow = simulate(SimConfig("zk-range", 16, 8, "leave", seed=1, calibration=slow))
    t_fast = simulate(SimConfig("zk-range", 16, 8, "leave", seed=1, calibration=fast))
    assert t_slow.time_to_stable_s > 3 * t_fast.time_to_stable_s
    assert t_slow.coordination_requests == t_fast.coordination_requests


def test_a_herd_queues_at_the_server_read_capacity():
    """10x the members: ~100x the registration reads, which all pass through one server."""
    small = simulate(SimConfig("zk-range", 100, 16, "join", seed=1))
    big = simulate(SimConfig("zk-range", 1000, 16, "join", seed=1))
    assert big.registration_reads > 90 * small.registration_reads
    assert big.coordination_requests > 80 * small.coordination_requests
    cal = Calibration()
    server_s = big.zk_reads * cal.zk_read_service_us / 1e6
    assert big.time_to_stable_s >= 0.9 * server_s
