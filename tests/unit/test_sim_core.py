"""Simulator plumbing: event order, CPU sharing, configuration, calibration file, rows."""

from __future__ import annotations

import json

import pytest

from zkconsumer.assignors.legacy import assign_legacy_range, assign_legacy_roundrobin
from zkconsumer.sim import COLUMNS, PROTOCOLS, Calibration, SimConfig, simulate
from zkconsumer.sim.assignment import full_assignment, sticky_target
from zkconsumer.sim.engine import Engine, SharedCpu


def test_events_run_in_time_order_and_ties_in_schedule_order():
    engine, seen = Engine(), []
    engine.at(2.0, seen.append, "c")
    engine.at(1.0, seen.append, "a")
    engine.at(1.0, seen.append, "b")
    assert engine.run(10.0) is True
    assert seen == ["a", "b", "c"] and engine.now == 2.0


def test_a_shared_cpu_splits_its_time_between_active_jobs():
    engine = Engine()
    cpu, done = SharedCpu(engine), {}
    cpu.run(1.0, lambda: done.setdefault("short", engine.now))
    cpu.run(3.0, lambda: done.setdefault("long", engine.now))
    engine.run(100.0)
    assert done["short"] == pytest.approx(2.0)  # both at half speed until it finishes
    assert done["long"] == pytest.approx(4.0)


@pytest.mark.parametrize("strategy", ["range", "roundrobin"])
@pytest.mark.parametrize("members,partitions", [(3, 8), (5, 17), (9, 4), (1, 3)])
def test_rank_based_shares_equal_the_real_legacy_assignors(strategy, members, partitions):
    ids = [f"g_host-{i * 7919:08x}" for i in range(members)]
    threads = {"t": [f"{m}-0" for m in ids]}
    assign = assign_legacy_range if strategy == "range" else assign_legacy_roundrobin
    real = assign({"t": range(partitions)}, threads)
    expected: dict[str, list[int]] = {m: [] for m in ids}
    for tp, thread in real.items():
        expected[thread[:-2]].append(tp.partition)
    got = full_assignment(ids, partitions, strategy)
    assert {m: sorted(ps) for m, ps in expected.items()} == got


def test_sticky_target_is_balanced_and_keeps_what_it_can():
    before = {"a": {0, 1, 2, 3}, "b": {4, 5, 6, 7}}
    after = sticky_target(before, ["a", "b", "c"], 8)
    assert sorted(len(ps) for ps in after.values()) == [2, 3, 3]
    assert after["a"] <= before["a"] and after["b"] <= before["b"]
    assert set().union(*after.values()) == set(range(8))


def test_same_seed_same_result_and_seeds_can_differ():
    cfg = SimConfig("zk-range", 6, 8, "join", seed=11)
    assert simulate(cfg) == simulate(cfg)
    # the model itself: a joiner fires the ids watch of each of the six members once, and
    # every one of them pauses its fetchers for the rebalance
    row = simulate(cfg).row()
    assert (row["watch_notifications"], row["members_paused"]) == (6, 6)
    rows = {json.dumps(simulate(SimConfig("zk-range", 6, 8, "join", seed=s)).row(),
                       sort_keys=True) for s in range(6)}
    assert len(rows) > 1


def test_row_has_the_grid_columns_first_then_the_extras():
    row = simulate(SimConfig("eager-range", 3, 6, "leave", seed=1)).row()
    assert tuple(row)[:len(COLUMNS)] == COLUMNS
    assert row["mode"] == "sim" and row["simulated_only"] is False
    for extra in ("watch_notifications", "rollbacks", "zk_reads", "zk_writes", "members_woken"):
        assert extra in row


@pytest.mark.parametrize("kwargs,message", [
    ({"protocol": "zk-leader-unknown"}, "not simulated yet"),
    ({"protocol": "nope"}, "protocol must be one of"),
    ({"event": "restart"}, "event must be one of"),
    ({"event": "crash", "members": 1}, "members must be >= 2"),
    ({"partitions": 0}, "partitions must be >= 1"),
    ({"offsets_changed": 2.0}, "offsets_changed"),
])
def test_bad_configurations_are_refused_with_the_value(kwargs, message):
    base = {"protocol": "zk-range", "members": 4, "partitions": 8, "event": "join"}
    with pytest.raises(ValueError, match=message):
        SimConfig(**{**base, **kwargs})


def test_every_protocol_and_event_settles():
    for protocol in PROTOCOLS:
        for event in ("join", "leave", "crash"):
            r = simulate(SimConfig(protocol, 5, 10, event, seed=7))
            assert r.time_to_stable_s is not None, (protocol, event)
            assert r.lost == 0, (protocol, event)


def test_calibration_round_trips_through_its_file(tmp_path):
    cal = Calibration(zk_write_service_ms=0.4, source="test")
    path = tmp_path / "cal.json"
    cal.save(path)
    assert Calibration.load(path) == cal
    assert json.loads(path.read_text())["version"] == 1


def test_calibration_file_with_an_unknown_parameter_is_refused(tmp_path):
    path = tmp_path / "cal.json"
    path.write_text(json.dumps({"version": 1, "zk_raed_latency_ms": 1.0}))
    with pytest.raises(ValueError, match="zk_raed_latency_ms"):
        Calibration.load(path)
    with pytest.raises(ValueError, match="client_read_cpu_ms"):
        Calibration(client_read_cpu_ms=-1)
