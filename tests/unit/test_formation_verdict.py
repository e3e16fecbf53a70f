"""The formation sweep's verdicts and tally (``lab/formation/verdict.py``): the split-brain job's
rules applied to runs of either kind of member."""

from __future__ import annotations

import pytest

from zkconsumer.lab.formation.sweep import SweepSpec
from zkconsumer.lab.formation.verdict import Outcome, cells, reason_of, row_of
from zkconsumer.results.exclusions import NOT_FORMED


def outcome(kind="original", budget=1, members=2, seed=1, exited=0, stable=True, gave_up=0,
            verify=True, error=""):
    return Outcome(kind, budget, members, seed, exited, stable, gave_up, int(gave_up > 0),
                   verify, error)


def test_a_member_exiting_before_the_group_was_stable_means_it_did_not_form():
    o = outcome(exited=1, stable=False, verify=None)
    assert reason_of(o) == (f"{NOT_FORMED} 1 of 2 initial members exited before it was stable "
                            "(rebalance.max.retries = 1)")
    assert row_of(o)["formed"] is False


def test_a_stable_group_formed_and_other_failures_say_nothing_about_formation():
    assert row_of(outcome())["formed"] is True
    assert row_of(outcome(stable=False, verify=None))["formed"] is None
    assert row_of(outcome(stable=False, verify=None, error="boom"))["reason"] == "failed: boom"
    assert row_of(outcome(stable=False, verify=None, error="boom"))["formed"] is None


def test_rows_carry_the_sweep_columns_as_strings():
    row = row_of(outcome(gave_up=2, verify=False), formation_s=3.5)
    assert (row["rebalances_given_up"], row["verify_ok"], row["repaired"]) == ("2", "false",
                                                                              "false")
    assert row["formation_s"] == 3.5
    assert row_of(outcome(stable=False, verify=None))["verify_ok"] == ""


def test_cells_count_formed_over_runs_with_a_verdict_and_stuck_over_those_formed():
    rows = [row_of(o) for o in (
        outcome(seed=1),                                        # formed, fine
        outcome(seed=2, gave_up=1, verify=False),               # formed, gave up, stuck
        outcome(seed=3, exited=1, stable=False, verify=None),   # did not form
        outcome(seed=4, stable=False, verify=None, error="x"),  # no verdict
        outcome(kind="zkconsumer", seed=1),
        outcome(budget=4, members=5, seed=1))]
    got = {(kind, c.budget, c.members): c for kind, c in cells(rows)}
    assert list(got) == [("original", 1, 2), ("original", 4, 5), ("zkconsumer", 1, 2)]
    c = got[("original", 1, 2)]
    assert (c.formed.k, c.formed.n) == (2, 3)
    assert c.stuck is not None and (c.stuck.k, c.stuck.n) == (1, 2)
    assert c.gave_up is not None and (c.gave_up.k, c.gave_up.n) == (1, 2)
    assert (got[("zkconsumer", 1, 2)].formed.k, got[("zkconsumer", 1, 2)].formed.n) == (1, 1)


def test_the_sweep_runs_seed_by_seed_and_refuses_bad_values_by_name():
    spec = SweepSpec(kinds=("original", "zkconsumer"), budgets=(1, 2), members=(2,), seeds=2,
                     kafka_home="k")
    assert spec.cells()[:4] == [(1, 2, 1, "original"), (1, 2, 1, "zkconsumer"),
                                (1, 2, 2, "original"), (1, 2, 2, "zkconsumer")]
    with pytest.raises(ValueError, match="unknown member kind 'jvm'"):
        SweepSpec(kinds=("jvm",), kafka_home="k").validate()
    with pytest.raises(ValueError, match="budget must be >= 1, got 0"):
        SweepSpec(budgets=(0,), kafka_home="k").validate()
    with pytest.raises(ValueError, match="--broker kafka:DIR"):
        SweepSpec().validate()
