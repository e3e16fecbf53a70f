"""What the split-brain runs came to, the summary's rows and the job's exit status, over rows
the real job recorded (``results/splitbrain/*/sweep.csv``) and rows as the job holds them."""

from __future__ import annotations

import csv
from pathlib import Path

from zkconsumer.spark.splitbrain.outcome import (
    Outcome,
    exit_status,
    not_formed_text,
    outcome_of,
    outcome_rows,
    tally,
)
from zkconsumer.spark.splitbrain.table import summary_markdown

RESULTS = Path(__file__).resolve().parents[2] / "results" / "splitbrain"


def _recorded(folder: str) -> list[dict[str, str]]:
    with open(RESULTS / folder / "sweep.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def _job_row(**over: object) -> dict[str, object]:
    """A row as ``spark split-brain --mode real`` holds it before writing it."""
    row: dict[str, object] = {
        "mode": "real", "protocol": "zk-range", "scenario": "storm", "members": 36,
        "partitions": 30, "seed": 1, "rebalance_max_retries": 1, "applicable": True,
        "reason": None, "lost": 0}
    return {**row, **over}


def test_a_sweep_whose_groups_did_not_form_exits_0_with_a_row_per_cell():
    rows = _recorded("real-v3-small-storm")  # four legacy storms, none formed under budget 1
    assert [outcome_of(r) for r in rows] == [Outcome.NOT_FORMED] * 4
    assert exit_status(rows) == 0
    assert [(o.members, o.runs, o.outcome, o.text) for o in outcome_rows(rows)] == [
        (10, 2, Outcome.NOT_FORMED, "did not form (budget 1): 5, 5 of 10 members gave up"),
        (30, 2, Outcome.NOT_FORMED, "did not form (budget 1): 5, 3 of 30 members gave up")]


def test_a_legacy_storm_that_ended_stuck_and_groups_that_did_not_form_exit_0():
    rows = _recorded("real-v7-r1")  # legacy storms, N = 6 and 10, seeds 51..58, budget 1
    counts = tally(rows)
    assert (counts.runs, counts.measured, counts.ended_stuck, counts.lost, counts.not_formed,
            counts.failed) == (16, 4, 1, 0, 11, 0)
    # N = 10, seed 52: the repairs gave up too; 1,134 records undelivered, none below the
    # committed offsets (they wait for an owner)
    [stuck] = [r for r in rows if outcome_of(r) is Outcome.ENDED_STUCK]
    assert (stuck["members"], stuck["seed"], stuck["lost"], stuck["lost_for_good"]) == (
        "10", "52", "1134", "0")
    assert counts.problems() == [] and exit_status(rows) == 0


def test_lost_records_exit_1_whatever_else_the_sweep_came_to():
    rows = _recorded("real-n100")  # a leader zombie lost 615 records (before the fix)
    assert [outcome_of(r) for r in rows].count(Outcome.LOST) == 1
    assert tally(rows).problems() == ["1 run(s) lost acknowledged records (listed in "
                                      "summary.md)"]
    assert exit_status(rows) == 1
    # in the job: records below the committed offset, or missing from a group that settled
    skipped = _job_row(lost=12, lost_for_good=3, settled=False)
    undelivered = _job_row(lost=12, lost_for_good=0, settled=True)
    stuck = _job_row(lost=12, lost_for_good=0, settled=False)
    assert [outcome_of(r) for r in (skipped, undelivered, stuck)] == [
        Outcome.LOST, Outcome.LOST, Outcome.ENDED_STUCK]
    assert exit_status([stuck]) == 0
    assert exit_status([stuck, skipped]) == 1


def test_a_harness_error_exits_1_and_is_not_an_outcome_of_the_protocol():
    rows = _recorded("real-n100-legacy-storm-1by1")  # the operator interrupted the run
    assert [outcome_of(r) for r in rows] == [Outcome.FAILED]
    assert tally(rows).problems() == [
        "1 run(s) failed (harness errors, listed in summary.md)"]
    assert exit_status(rows) == 1
    assert exit_status([_job_row(reason="failed: RuntimeError('task 1: boom')")]) == 1


def test_job_rows_not_formed_timed_out_not_applicable_and_measured():
    not_formed = _job_row(reason="zk-range-storm-n36-p30-s1-abc123: the group did not form: 3 "
                                 "of 36 initial members exited before it was stable "
                                 "(rebalance.max.retries = 1)")
    timed_out = _job_row(seed=2, reason="zk-range-storm-n36-p30-s2-def456: the group did not "
                                        "form within 132 s")
    na = _job_row(protocol="eager-range", scenario="zombie", applicable=False,
                  reason="broker-coordinated group: ...")
    measured = _job_row(scenario="zombie", protocol="zk-leader-range", lost=0)
    assert [outcome_of(r) for r in (not_formed, timed_out, na, measured)] == [
        Outcome.NOT_FORMED, Outcome.NOT_FORMED, Outcome.NOT_APPLICABLE, Outcome.MEASURED]
    assert exit_status([not_formed, timed_out, na, measured]) == 0
    assert exit_status([not_formed, _job_row(scenario="zombie", lost=3)]) == 1
    assert not_formed_text([not_formed]) == "did not form (budget 1): 3 of 36 members gave up"
    assert not_formed_text([not_formed, timed_out]) == (
        "did not form (budget 1): 3 of 36 members gave up; every member alive but never "
        "stable before the formation deadline (1 runs)")


def _aggregate(**over: object) -> dict[str, object]:
    from zkconsumer.spark.splitbrain.table import SUMMARY

    base = {"mode": "real", "scenario": "zombie", "protocol": "zk-range", "partitions": 30,
            "members": 36, "outcome": "measured", "runs": 1, **{c: 0 for c, _, _ in SUMMARY}}
    return {**base, **over}


def test_the_summary_lists_a_group_that_did_not_form_as_a_row_of_the_table():
    rows = [_job_row(reason="r: the group did not form: 7 of 36 initial members exited before "
                            "it was stable (rebalance.max.retries = 1)"),
            _job_row(protocol="eager-range", scenario="zombie", applicable=False,
                     reason="no ZooKeeper session to lose"),
            _job_row(protocol="zk-leader-range", reason="failed: RuntimeError('boom')")]
    text = summary_markdown(
        [_aggregate(double_owned_partition_s=19.3),
         _aggregate(protocol="zk-leader-range", double_owned_partition_s=0.0),
         _aggregate(scenario="storm", members=10, outcome="ended stuck", lost=1134),
         _aggregate(scenario="storm", members=10, runs=3)],
        outcome_rows(rows), "Split brain at scale (real)", "zkconsumer spark split-brain", [])
    table = [line for line in text.splitlines() if line.startswith("| real |")]
    assert table[0].startswith("| real | storm | zk-leader-range | 30 | 36 | 1 | "
                               "failed (harness error, below) | — |")
    assert table[1].startswith("| real | storm | zk-range | 30 | 10 | 3 | measured | 0 |")
    assert table[2].startswith("| real | storm | zk-range | 30 | 10 | 1 | ended stuck: 1,134 "
                               "records undelivered, all after the committed offsets (none "
                               "skipped) | 0 |")
    assert table[2].endswith("| 1,134 |")
    assert table[3].startswith("| real | storm | zk-range | 30 | 36 | 1 | did not form "
                               "(budget 1): 7 of 36 members gave up | — |")
    assert table[4].startswith("| real | zombie | zk-leader-range | 30 | 36 | 1 | measured | "
                               "0.00 |")
    assert table[5].startswith("| real | zombie | zk-range | 30 | 36 | 1 | measured | 19.30 |")
    assert len(table) == 6
    assert "Failed (harness errors):\n\n- zk-leader-range / storm N=36: failed: " \
           "RuntimeError('boom')" in text
    assert "Not applicable:\n\n- eager-range / zombie: no ZooKeeper session to lose" in text
