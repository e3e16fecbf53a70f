"""The plan 26 page's own blocks: the join race set by set, and the stragglers by rank."""

from __future__ import annotations

from pathlib import Path

from zkconsumer.results.figures.rank_validation import race_row, straggler_ranks_table
from zkconsumer.results.registry import Context

SWEEP = ("protocol,members,partitions,event,seed,coordination_requests,rebalance_attempts,"
         "conflicts,time_to_stable_s,mode,tasks,settled\n")
SPREAD = "run_id,members,event,heartbeat_ms,kind,member,seconds\n"


PHASES = ("source,run_id,protocol,members,event,seed,member,task,attempt_ms,stop_ms,read_ms,"
          "claim_ms,conflict,since_delivery_ms,poll_phase_ms,plan_ms\n")


def _race_set(results: Path, plan: int, runs: list[tuple[int, int, float, float]]) -> None:
    """(seed, attempts, joiner plan ms, giver's stop end ms) per join run; the giver's
    attempt starts 20 ms after the event."""
    folder = results / f"scale/validation-{plan}/tansu/zk-range-n12"
    folder.mkdir(parents=True)
    (folder / "sweep.csv").write_text(SWEEP + "".join(
        f"zk-range,12,24,join,{seed},460,{attempts},{attempts - 1},1.0,real,2,true\n"
        for seed, attempts, _, _ in runs))
    rows = results / f"scale/validation-{plan}/phases"
    rows.mkdir(parents=True)
    run = "real,zk-range-n12-p24-join-s{0}-a,zk-range,12,join,{0}"
    (rows / "phases.csv").write_text(PHASES + "".join(
        f"{run.format(seed)},m00012,0,30.0,,,,{attempts > 1},,,{plan_ms}\n"
        f"{run.format(seed)},m00011,1,20.0,{stop_ms - 20},60.0,80.0,False,300.0,4.0,150.0\n"
        f"{run.format(seed)},m00010,0,20.0,5.0,60.0,80.0,False,300.0,4.0,150.0\n"
        for seed, attempts, plan_ms, stop_ms in runs)
        + "model,,zk-range,12,join,0,m00012,,10.0,,,,,,,1.0\n")


def test_a_sets_race_row_counts_early_joiners_and_their_agreement_with_second_attempts(
        tmp_path: Path) -> None:
    # seeds 0, 1: the joiner planned first and tried twice; seed 2 planned first but got
    # through once (the one disagreement); seed 3 planned after the release, once
    # (m00010 stopped early in every run: only m00011 held the joiner's partition; the
    # model's row is not read)
    _race_set(tmp_path, 20, [(0, 2, 60, 90), (1, 2, 70, 100), (2, 1, 80, 85), (3, 1, 120, 80)])
    row = race_row(Context(tmp_path, tmp_path / "figures"), 20)
    assert row == ("| 20 | 4 | 2 | 3 of 4 | 3 of 4 | 75 [68–90] | 88 [84–92] | "
                   "-18 [-30–6] |")
    assert race_row(Context(tmp_path, tmp_path / "figures"), 21) is None  # no such set


def test_the_rank_table_weighs_task_1s_stragglers_by_rank(tmp_path: Path) -> None:
    for plan in range(21, 26):  # m00003 straggled in each, m00001 once, m00000 (task 0) once
        folder = tmp_path / f"scale/validation-{plan}/formation-spread"
        folder.mkdir(parents=True)
        extra = ("eager-range-n12-p24-join-s1-b,12,join,2000,straggler,m00001,1.0\n"
                 "eager-range-n12-p24-join-s1-b,12,join,2000,straggler,m00000,1.0\n"
                 if plan == 21 else "")
        (folder / "formation-spread.csv").write_text(
            SPREAD + "eager-range-n12-p24-join-s0-a,12,join,2000,straggler,m00003,1.0\n" + extra)
    text = straggler_ranks_table(Context(tmp_path, tmp_path / "figures"))
    lines = text.splitlines()
    assert lines[2] == "| 0 | m00001 | m00001 | 1 | 17% | – |"
    assert lines[3] == "| 1 | m00003 | m00003 | 5 | 83% | – |"
    assert lines[4] == ""  # ranks past the last straggler: none
