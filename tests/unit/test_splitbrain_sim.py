"""The split-brain simulator and its validation rules, without servers."""

from __future__ import annotations

from zkconsumer.scenarios.splitbrain import ScenarioParams
from zkconsumer.scenarios.timing import Timing
from zkconsumer.sim.splitbrain.simulate import SplitSimSettings, double_owned, simulate_cell
from zkconsumer.spark.splitbrain.real import SplitCellKey
from zkconsumer.spark.splitbrain.validate import judge, rules

TIMING = Timing(session_timeout_ms=6000, rebalance_backoff_ms=1000, rebalance_max_retries=10,
                quiet_s=2.5)


def sim(protocol, scenario, n, seed=0, draw=0, **params):
    s = SplitSimSettings(timing=TIMING, params=ScenarioParams(**params), tasks=2)
    return simulate_cell(SplitCellKey(protocol, scenario, n, 16, seed), s, draw)


def test_the_same_seed_and_draw_give_the_same_row():
    row = sim("zk-range", "storm", 20, seed=3)
    assert row == sim("zk-range", "storm", 20, seed=3)
    # the model itself: legacy members claim only released owner znodes, so a storm without a
    # cut never has two members fetch one partition, and each conflict is rolled back
    assert row["double_owned_partition_s"] == 0.0 and row["rollbacks"] == row["conflicts"] >= 1
    assert sim("zk-range", "zombie", 20, draw=1) != sim("zk-range", "zombie", 20, draw=2)


def test_a_legacy_zombie_cut_for_two_sessions_double_owns_a_leader_zombie_does_not():
    legacy = sim("zk-range", "zombie", 8)
    leader = sim("zk-leader-range", "zombie", 8)
    # expired after ~6 s, taken over within a second or so, fetching until the cut heals at 12
    assert 2.0 < legacy["double_owned_partition_s"] < 12.0 * 2
    assert legacy["zombie_deliveries"] > 0 and legacy["zombie_stop_s"] >= 12.0
    assert leader["double_owned_partition_s"] == 0 and leader["zombie_stop_s"] < 4.0


def test_one_retry_in_a_storm_gives_up_more_often_than_ten():
    one = [sim("zk-range", "storm", 30, seed=s, max_retries=1)["p_give_up"] for s in range(6)]
    ten = [sim("zk-range", "storm", 30, seed=s, max_retries=10)["p_give_up"] for s in range(6)]
    assert sum(one) > sum(ten)
    assert sim("zk-leader-range", "storm", 30, max_retries=1)["rebalances_given_up"] == 0


def test_broker_zombie_is_not_applicable_in_the_simulator_either():
    row = sim("eager-range", "zombie", 8)
    assert row["applicable"] is False and "no ZooKeeper session to lose" in row["reason"]


def test_double_owned_counts_only_overlaps_of_the_same_partition():
    ivs = [(0, "a", 0.0, 10.0), (0, "b", 4.0, 12.0), (1, "c", 0.0, 12.0)]
    total, per = double_owned(ivs, 0.0, 12.0)
    assert total == 6.0 and per == {"a": 6.0, "b": 6.0}


def test_validation_rules_are_the_plans():
    assert judge("rel50-floor1", 10.0, 14.9) and not judge("rel50-floor1", 10.0, 15.1)
    assert judge("rel50-floor1", 0.5, 0.9)
    assert judge("zero", 0, 0) and not judge("zero", 0, 0.1)
    assert judge("abs2-or-rel50", 1, 3) and not judge("abs2-or-rel50", 1, 4)
    assert judge("same-verdict", 41, 3) and not judge("same-verdict", 0, 3)
    assert judge("factor3", 41, 100) and not judge("factor3", 41, 130)
    assert ("double_owned_partition_s", "zero") in rules("zk-leader-range", "zombie")
    assert [m for m, _ in rules("zk-range", "storm")] == ["time_to_stable_s", "gave_up",
                                                          "rebalances_given_up"]


def _legacy_model(actions, members=3, retries=1):
    """A small legacy group whose requests are slow (100 ms of client CPU each), so an attempt
    that reads the group lasts about a second."""
    import random

    from zkconsumer.scenarios.splitbrain import Plan, member_name
    from zkconsumer.sim.calibration import Calibration
    from zkconsumer.sim.splitbrain.legacy import LegacySplitModel

    cal = Calibration(client_read_cpu_ms=100.0, fetcher_stop_min_ms=0.0,
                      fetcher_stop_max_ms=0.0, watch_delivery_ms=0.0, zk_connect_ms=0.0)
    initial = tuple(member_name(i) for i in range(members))
    pl = Plan("storm", "zk-range", members, initial, tuple(actions))
    model = LegacySplitModel(pl, 8, cal, 6.0, 1.0, retries, 1, random.Random(0))
    model.form()
    return model, model.run(600.0)


def test_a_member_leaving_during_its_attempt_deregisters_when_the_attempt_ends():
    from zkconsumer.scenarios.splitbrain import Action, Kind

    # m00003 joins at 0: everybody rebalances; m00001 asks to leave at 0.2, mid-attempt.
    # shutdown takes the rebalance lock: its registration stays until its read is over, so
    # the others, who listed it, still find it when they read it (no NoNode, nobody gives up)
    model, out = _legacy_model([Action(0.0, "m00003", Kind.JOIN),
                                Action(0.2, "m00001", Kind.LEAVE)])
    assert model.deregistered["m00001"] > 1.0
    assert out.given_up == 0 and out.conflicts == 0
    assert sorted(n for n, m in model.members.items() if m.owned) == ["m00000", "m00002",
                                                                        "m00003"]


def test_an_idle_member_leaves_at_once():
    from zkconsumer.scenarios.splitbrain import Action, Kind

    model, out = _legacy_model([Action(0.5, "m00001", Kind.LEAVE)])
    assert model.deregistered["m00001"] == 0.5
    assert out.given_up == 0
    assert sorted(n for n, m in model.members.items() if m.owned) == ["m00000", "m00002"]


def test_a_validation_plan_fixes_the_cells_and_names_the_unscored_ones(tmp_path):
    import json

    from zkconsumer.spark.splitbrain.validate import ValidationPlan, unscored

    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"calibration": "cal.json", "draws": 3, "cells": [
        ["zk-range", "storm", 200, 1], ["zk-range", "zombie", 100, 2]]}))
    vplan = ValidationPlan.load(path)
    assert vplan.draws == 3 and str(vplan.calibration) == "cal.json"
    row = {"protocol": "zk-range", "scenario": "zombie", "members": "100", "seed": "2"}
    assert vplan.covers(row) and not vplan.covers({**row, "seed": "1"})
    run = tmp_path / "real-n200"
    run.mkdir()
    (run / "sweep.csv").write_text(
        "mode,protocol,scenario,members,partitions,seed,applicable,reason\n"
        "real,zk-range,storm,200,64,1,true,the group did not form within 600 s\n")
    assert unscored(vplan, [row], [run]) == [
        {"protocol": "zk-range", "scenario": "storm", "members": 200, "seed": 1,
         "reason": "the group did not form within 600 s (real-n200)"}]
    path.write_text('{"cells": [["zk-range", "storm"]]}')
    try:
        ValidationPlan.load(path)
    except ValueError as exc:
        assert str(path) in str(exc)
    else:
        raise AssertionError("a malformed plan was accepted")


def test_a_pooled_give_up_check_is_a_binomial_range_over_the_runs():
    from zkconsumer.spark.splitbrain.validate import binomial_range, pooled_checks

    assert binomial_range(5, 0.0) == (0, 0)
    assert binomial_range(5, 1.0) == (5, 5)
    assert binomial_range(5, 0.2) == (0, 3)
    # 5 runs at N = 10, the model giving up in 1 draw of 5 for each seed: p = 0.2
    runs = [(f"r{i}", i < 2, [True, False, False, False, False]) for i in range(5)]
    (ok,) = pooled_checks({("zk-range", "storm", 10): runs})
    assert (ok.seed, ok.real, ok.sim, ok.ok, ok.rule) == (None, 2, 1.0, True,
                                                         "binomial95-of-5")
    never = [(f"r{i}", i == 0, [False] * 5) for i in range(5)]   # p = 0, yet a run gave up
    (bad,) = pooled_checks({("zk-range", "storm", 100): never})
    assert bad.real == 1 and bad.sim == 0.0 and not bad.ok


def test_a_plan_may_replace_a_pairs_rules_but_not_with_an_unknown_rule(tmp_path):
    import json

    import pytest

    from zkconsumer.spark.splitbrain.validate import ValidationPlan

    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"cells": [["zk-range", "storm", 10, 1]],
                                "rules": {"zk-range/storm": [["time_to_stable_s", "rel50"]]},
                                "pooled": ["zk-range/storm"]}))
    vplan = ValidationPlan.load(path)
    assert vplan.rules == {"zk-range/storm": (("time_to_stable_s", "rel50"),)}
    assert vplan.pooled == ("zk-range/storm",)
    path.write_text(json.dumps({"cells": [], "rules": {"zk-range/storm": [["x", "rel5"]]}}))
    with pytest.raises(ValueError, match="rel5"):
        ValidationPlan.load(path)
