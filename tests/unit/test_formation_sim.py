"""The simulated formation of a legacy group and its scoring against real runs, without servers."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest

from zkconsumer.scenarios.splitbrain import Kind
from zkconsumer.sim.calibration import Calibration
from zkconsumer.sim.splitbrain.formation import formation_plan, simulate_formation, start_offsets
from zkconsumer.spark.splitbrain.validate import (
    ValidationPlan,
    formation_checks,
    formation_rows,
)

CAL = replace(Calibration(), zk_connect_ms=10.0, jitter_cv=0.0)


def test_members_of_one_process_start_one_set_up_apart_and_processes_start_together():
    offsets = start_offsets(5, 2, CAL, random.Random(0))
    # members alternate between the two processes, as the real job spreads them
    assert offsets == pytest.approx({"m00000": 0.0, "m00001": 0.0, "m00002": 0.01,
                                     "m00003": 0.01, "m00004": 0.02})
    plan = formation_plan(5, 2, CAL, random.Random(0))
    assert plan.initial == () and all(a.kind is Kind.JOIN for a in plan.actions)
    with pytest.raises(ValueError, match="tasks must be >= 1, got 0"):
        start_offsets(5, 0, CAL, random.Random(0))


def test_members_registered_at_one_instant_form_even_with_one_attempt():
    together = replace(CAL, zk_connect_ms=0.0)
    out = simulate_formation(10, 64, together, 6.0, 1.0, 1, 2, random.Random(0))
    assert (out.formed, out.exited) == (True, 0)


def test_one_attempt_is_not_enough_when_members_register_one_after_another():
    # ten members, five per process 10 ms apart: a later member's share is still held by an
    # earlier member when it claims it; with one attempt it gives up and exits
    one = simulate_formation(10, 64, CAL, 6.0, 1.0, 1, 2, random.Random(0))
    assert not one.formed and one.exited >= 1 and one.time_s is None
    two = simulate_formation(10, 64, CAL, 6.0, 1.0, 2, 2, random.Random(0))
    assert (two.formed, two.exited) == (True, 0) and two.time_s > 0
    with pytest.raises(ValueError, match="max_retries must be >= 1, got 0"):
        simulate_formation(10, 64, CAL, 6.0, 1.0, 0, 2, random.Random(0))


def _run(folder, rows, date):
    folder.mkdir()
    (folder / "meta.json").write_text(json.dumps({"date": date}))
    head = ("mode,protocol,scenario,members,partitions,seed,applicable,reason,"
            "session_timeout_ms,rebalance_backoff_ms,rebalance_max_retries,tasks\n")
    (folder / "sweep.csv").write_text(head + "".join(
        f"real,zk-range,storm,{n},64,{seed},true,{reason},6000,1000,{budget},2\n"
        for n, seed, reason, budget in rows))


def test_formation_is_scored_from_completed_and_not_formed_runs_only(tmp_path):
    not_formed = ('"failed: RuntimeError(\'x: the group did not form: 3 of 10 initial members '
                  'exited before it was stable (rebalance.max.retries = 1)\')"')
    _run(tmp_path / "a", [(10, 1, not_formed, 1), (10, 2, "", 1), (10, 3, not_formed, 1),
                          (10, 4, "failed: interrupted after 204 s", 1), (2, 1, "", 1)],
         "2026-01-01T00:00:00Z")
    _run(tmp_path / "b", [(10, 2, not_formed, 1)], "2026-01-02T00:00:00Z")  # re-run: newest wins
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"cells": [["zk-range", "storm", 10, s] for s in (1, 2, 3, 4)]
                                + [["zk-range", "storm", 2, 1]],
                                "formation": ["zk-range/storm"]}))
    vplan = ValidationPlan.load(path)
    assert vplan.formation == ("zk-range/storm",)
    rows = formation_rows([tmp_path / "a", tmp_path / "b"], vplan)
    assert [(r["members"], r["seed"], r["formed"], r["run"]) for r in rows] == [
        ("2", "1", True, "a"), ("10", "1", False, "a"), ("10", "2", False, "b"),
        ("10", "3", False, "a")]
    two, ten = formation_checks(rows, CAL, draws=3)
    # the model: two members, one per process, register together and form; ten do not
    assert (two.members, two.real, two.sim, two.ok, two.rule) == (2, 1, 1.0, True,
                                                                   "binomial95-of-1")
    assert (ten.members, ten.real, ten.sim, ten.ok, ten.metric) == (10, 0, 0.0, True,
                                                                     "runs_formed")
    (wrong,) = formation_checks([{**rows[1], "formed": True}], CAL, draws=3)
    assert (wrong.real, wrong.sim, wrong.ok) == (1, 0.0, False)



def test_a_plan_cell_whose_group_did_not_form_is_listed_as_counted_in_runs_formed(tmp_path):
    from zkconsumer.spark.splitbrain.validate import unscored

    reason = "failed: x: the group did not form: 3 of 10 initial members exited"
    _run(tmp_path / "a", [(10, 1, f'"{reason}"', 1), (10, 2, "failed: interrupted", 1)],
         "2026-01-01T00:00:00Z")
    path = tmp_path / "plan.json"
    cells = [["zk-range", "storm", 10, 1], ["zk-range", "storm", 10, 2]]
    path.write_text(json.dumps({"cells": cells, "formation": ["zk-range/storm"]}))
    assert [r["reason"] for r in unscored(ValidationPlan.load(path), [], [tmp_path / "a"])] == [
        f"counted in runs_formed only: {reason} (a)", "failed: interrupted (a)"]
    path.write_text(json.dumps({"cells": cells}))
    assert unscored(ValidationPlan.load(path), [], [tmp_path / "a"])[0]["reason"] == \
        f"{reason} (a)"
