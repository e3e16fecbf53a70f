"""A member's own CPU per operation: the plan's CPU per member and the parameters it gives."""

from __future__ import annotations

import pytest

from zkconsumer.calibration.client_cpu import (
    PlanSample,
    RequestCpu,
    plan_cpu,
    plan_us_per_member,
    thread_cpu_parameters,
)
from zkconsumer.calibration.measure import calibration_from
from zkconsumer.sim.origins import MEASURED

MEASURED_MS = {"read_ms": 1.0, "read_cpu_ms": 0.3, "write_ms": 2.0, "write_cpu_ms": 0.5,
               "write_service_ms": 0.4, "watch_delivery_ms": 1.5, "connect_ms": 9.0,
               "expiry_factor": None}


def test_the_plan_is_timed_once_per_group_size():
    samples = plan_cpu(sizes=(10, 40), partitions=8, repeats=2)
    assert [(s.members, s.partitions) for s in samples] == [(10, 8), (40, 8)]
    assert all(s.cpu_ms > 0 for s in samples)


def test_the_cpu_per_member_is_read_at_the_largest_group():
    samples = [PlanSample(1000, 128, 3.0), PlanSample(100, 128, 0.5)]
    assert plan_us_per_member(samples) == pytest.approx(3.0)
    assert plan_us_per_member([]) is None


def test_a_plan_size_below_one_is_refused():
    with pytest.raises(ValueError, match="got 0"):
        plan_cpu(sizes=(0,))


def test_thread_clocks_replace_the_process_cpu_and_the_latency_keeps_the_wall():
    requests = [RequestCpu("read", 100, 0.10, 0.05), RequestCpu("write", 100, 0.2, 0.1)]
    params = thread_cpu_parameters(requests, [PlanSample(1000, 128, 3.0)])
    assert params == {"client_read_cpu_ms": 0.15, "client_write_cpu_ms": 0.3,
                      "plan_us_per_member": 3.0}
    cal = calibration_from(MEASURED_MS, None, "test servers", thread_cpu=params)
    assert cal.client_read_cpu_ms == pytest.approx(0.15)
    assert cal.zk_read_ms == pytest.approx(1.0)  # CPU + latency = what the member waited
    assert cal.zk_write_ms == pytest.approx(2.0)
    assert cal.plan_us_per_member == pytest.approx(3.0)
    assert cal.origin("plan_us_per_member").startswith("measured by calibrate")
    assert "plan_us_per_member" in MEASURED


def test_without_the_plan_measured_its_origin_says_so():
    cal = calibration_from(MEASURED_MS, None, "test servers")
    assert cal.plan_us_per_member == 15.0
    assert cal.origin("plan_us_per_member").startswith("not measured")
