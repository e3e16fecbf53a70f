"""Client CPU per request in a crowded process: the calibration table and its use."""

from __future__ import annotations

import math

import pytest

from zkconsumer.calibration.measure import (
    CrowdSample,
    calibration_from,
    crowd_cpu_ms,
    crowd_scale_table,
)
from zkconsumer.sim import Calibration, SimConfig, simulate
from zkconsumer.sim.calibration import client_cpu_scale

TABLE = ((4.0, 2.0), (16.0, 3.0))
MEASURED = {"read_ms": 1.0, "read_cpu_ms": 0.3, "write_ms": 2.0, "write_cpu_ms": 0.5,
            "write_service_ms": 0.4, "watch_delivery_ms": 1.5, "connect_ms": 9.0,
            "expiry_factor": None}


def test_without_a_table_the_factor_is_one_whatever_the_crowd():
    cal = Calibration()
    assert cal.client_cpu_scale_by_clients == ()
    assert cal.client_cpu_scale(1) == cal.client_cpu_scale(64) == 1.0
    cfg = SimConfig("zk-range", 64, 128, "join", client_processes=2)
    assert cfg.members_per_process == 32 and cfg.client_cpu_scale == 1.0


def test_the_table_is_interpolated_linearly_in_log_k_from_one_at_one_client():
    assert client_cpu_scale(TABLE, 1) == 1.0
    assert client_cpu_scale(TABLE, 2) == pytest.approx(1.5)  # halfway from 1 to 4 in log K
    assert client_cpu_scale(TABLE, 4) == pytest.approx(2.0)
    assert client_cpu_scale(TABLE, 8) == pytest.approx(2.5)
    assert client_cpu_scale(TABLE, 16) == pytest.approx(3.0)
    assert client_cpu_scale(TABLE, 1000) == pytest.approx(3.0)  # not extrapolated
    assert client_cpu_scale(((1, 1.0), *TABLE), 8) == pytest.approx(2.5)  # (1, 1) may be given
    k = 10.0
    expected = 2.0 + math.log(k / 4) / math.log(4)
    assert Calibration(client_cpu_scale_by_clients=TABLE).client_cpu_scale(10) == \
        pytest.approx(expected)


def test_members_per_process_pick_the_factor_only_when_processes_are_shared():
    cal = Calibration(client_cpu_scale_by_clients=TABLE)
    assert SimConfig("zk-range", 64, 128, "join", calibration=cal).client_cpu_scale == 1.0
    two = SimConfig("zk-range", 64, 128, "join", calibration=cal, client_processes=2)
    assert two.members_per_process == 32 and two.client_cpu_scale == pytest.approx(3.0)
    odd = SimConfig("zk-range", 9, 16, "crash", calibration=cal, client_processes=4)
    assert odd.members_per_process == 3  # the fullest process: ceil(9 / 4)
    assert odd.client_cpu_scale == pytest.approx(client_cpu_scale(TABLE, 3))


def test_the_table_round_trips_through_the_file_and_is_checked(tmp_path):
    cal = Calibration(client_cpu_scale_by_clients=[[4, 2.0], [16, 3]])  # as JSON gives it
    assert cal.client_cpu_scale_by_clients == TABLE
    hash(cal)  # still usable in a row key
    cal.save(tmp_path / "c.json")
    assert Calibration.load(tmp_path / "c.json") == cal
    for bad in ([[16, 2.0], [4, 3.0]], [[0.5, 2.0]], [[4, 0.0]], [[1, 2.0]], [[4]],
                [["4", 2.0]]):
        with pytest.raises(ValueError, match="client_cpu_scale_by_clients"):
            Calibration(client_cpu_scale_by_clients=bad)


def test_no_table_changes_nothing_and_a_table_slows_a_shared_process():
    base = dict(members=64, partitions=128, event="join", seed=3, client_processes=2)
    plain = simulate(SimConfig("zk-range", **base))
    one = simulate(SimConfig("zk-range", **base, calibration=Calibration(
        client_cpu_scale_by_clients=((32, 1.0),))))
    assert one.row() == plain.row()  # factor 1 at 32 per process: the same run
    crowded = simulate(SimConfig("zk-range", **base, calibration=Calibration(
        client_cpu_scale_by_clients=((32, 4.0),))))
    assert crowded.coordination_requests == plain.coordination_requests
    assert crowded.time_to_stable_s > 2 * plain.time_to_stable_s


@pytest.mark.parametrize("event", ["crash", "leave"])
def test_more_members_per_process_take_longer_to_stabilise(event):
    """64 members over 16, 4 and 2 processes: 4, 16 and 32 per process (a seed without an
    owner conflict, whose backoff would swamp the crowd's effect)."""
    def times(cal: Calibration) -> list[float]:
        runs = [simulate(SimConfig("zk-range", 64, 128, event, seed=2, calibration=cal,
                                   client_processes=k, member_order="start", victim_rank=0))
                for k in (16, 4, 2)]
        assert [r.conflicts for r in runs] == [0, 0, 0]
        return [r.time_to_stable_s for r in runs]
    plain = times(Calibration())
    crowded = times(Calibration(client_cpu_scale_by_clients=((4, 1.5), (32, 4.0))))
    assert crowded[0] < crowded[1] < crowded[2]
    # the factor grows with the crowd: the slow-down over the lone-client CPU grows too
    slowdown = [c - p for c, p in zip(crowded, plain, strict=True)]
    assert 0 < slowdown[0] < slowdown[1] < slowdown[2]


def test_calibrate_turns_crowd_bursts_into_the_read_table():
    crowd = [CrowdSample("read", 1, 1, 1000, 0.3, 1.5),
             CrowdSample("read", 4, 4, 1000, 0.6, 3.0),
             CrowdSample("read", 32, 32, 1000, 1.0, 30.0),
             CrowdSample("read", 1, 1, 3000, 0.5, 1.5),  # a second pass: pooled by requests
             CrowdSample("read", 32, 1, 1000, 0.4, 1.5),  # one busy among 32: not in the table
             CrowdSample("write", 4, 4, 1000, 2.0, 5.0)]
    assert crowd_cpu_ms(crowd) == {1: pytest.approx(0.45), 4: 0.6, 32: 1.0}
    assert crowd_scale_table(crowd) == ((4.0, 1.333), (32.0, 2.222))
    assert crowd_scale_table(crowd[1:3]) == ()  # nothing to divide by without K = 1
    cal = calibration_from(MEASURED, None, "test servers", crowd)
    assert cal.client_cpu_scale_by_clients == ((4.0, 1.333), (32.0, 2.222))
    assert "client_cpu_scale_by_clients" in cal.source
    assert calibration_from(MEASURED, None, "x").client_cpu_scale_by_clients == ()
