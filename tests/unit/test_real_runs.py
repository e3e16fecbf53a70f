"""The real runs a plan judges, and which of them followed a formation with stragglers."""

from pathlib import Path

import pytest

from zkconsumer.results.distributions import CellKey
from zkconsumer.results.real_runs import RunKey, run_key, straggler_ranks
from zkconsumer.spark.herd.scoring import DistPlan, RunSet, real_runs, set_stragglers

SWEEP = ("protocol,members,partitions,event,seed,coordination_requests,rebalance_attempts,"
         "conflicts,time_to_stable_s,mode,tasks,settled\n")
SPREAD = "run_id,members,event,heartbeat_ms,kind,member,seconds\n"


def test_a_run_id_names_its_cell_and_seed_and_a_bad_one_is_refused_by_name() -> None:
    assert run_key("cooperative-sticky-n48-p24-leave-s7-2b7e7c") == \
        RunKey("cooperative-sticky", 48, "leave", 7)
    with pytest.raises(ValueError, match="'eager-range-s1' does not name its cell"):
        run_key("eager-range-s1")


def test_a_set_with_formation_rows_marks_the_runs_after_stragglers(tmp_path: Path) -> None:
    folder = tmp_path / "runs/eager-range-n12"
    folder.mkdir(parents=True)
    (folder / "sweep.csv").write_text(SWEEP + "".join(
        f"eager-range,12,24,leave,{seed},{40 + seed},1,0,{3.9 + seed / 10},real,2,true\n"
        for seed in range(4)) + "eager-range,12,24,join,1,67,2,0,4.1,real,2,true\n")
    # seed 1's leave left a straggler (two rows: one per straggler); seed 2's formation none;
    # the join of seed 1, another run with the same seed, left none; seeds 0 and 3 have no
    # formation rows at all (none left)
    (tmp_path / "spread.csv").write_text(SPREAD + "".join((
        "eager-range-n12-p24-leave-s1-ee0766,12,leave,2000,event_lag,,3.1\n",
        "eager-range-n12-p24-leave-s1-ee0766,12,leave,2000,straggler,m00005,1.001\n",
        "eager-range-n12-p24-leave-s1-ee0766,12,leave,2000,straggler,m00009,1.0003\n",
        "eager-range-n12-p24-leave-s2-a04285,12,leave,2000,event_lag,,3.2\n",
        "eager-range-n12-p24-join-s1-17bcae,12,join,2000,event_lag,,3.0\n")))
    key = CellKey("tansu", "tansu-0.6.0", "eager-range", 12, 24, "leave")
    split = RunSet("tansu", "tansu-0.6.0", "runs", ("eager-range",), "spark herd --mode real",
                   formation_spread=("spread.csv",))
    runs, tasks = real_runs(tmp_path, split, key, set_stragglers(tmp_path, split))
    assert [(r.requests, r.stragglers) for r in runs] == \
        [(40.0, False), (41.0, True), (42.0, False), (43.0, False)]
    assert tasks == 2
    join = real_runs(tmp_path, split,
                     CellKey("tansu", "tansu-0.6.0", "eager-range", 12, 24, "join"),
                     set_stragglers(tmp_path, split))[0]
    assert [r.stragglers for r in join] == [False]
    plain = RunSet("tansu", "tansu-0.6.0", "runs", ("eager-range",), "spark herd --mode real")
    assert set_stragglers(tmp_path, plain) == set()
    assert not any(r.stragglers for r in real_runs(tmp_path, plain, key, set())[0])
    missing = RunSet("tansu", "tansu-0.6.0", "runs", ("eager-range",),
                     "spark herd --mode real", formation_spread=("nowhere.csv",))
    with pytest.raises(FileNotFoundError, match="no formation-spread rows at .*nowhere.csv"):
        set_stragglers(tmp_path, missing)


def test_an_earlier_plans_runs_as_the_model_carry_their_own_formations_stragglers(
        tmp_path: Path) -> None:
    from zkconsumer.results.figures.straggler_split import split_replication
    from zkconsumer.results.registry import Context

    results = Path(__file__).resolve().parents[2] / "results"
    runs, model = split_replication(Context(results, tmp_path), 23,
                                    ((21, "scale/validation-21/formation-spread"),))
    by_cell = {(r.key.set_name, r.key.protocol, r.key.members, r.key.event): r for r in runs}
    # plan 21's Tansu eager N = 48 leaves: 6 of 10 formations left stragglers (its formation rows),
    # and its zk-range runs had no broker formation to leave any
    leave = by_cell[("tansu", "eager-range", 48, "leave")]
    assert (len(leave.sim), sum(r.stragglers for r in leave.sim)) == (10, 6)
    assert not any(r.stragglers for r in by_cell[("tansu", "zk-range", 48, "leave")].sim)
    # a run id names no broker: Tansu's rows mark none of the Apache Kafka runs of the same
    # protocol, size, event and seed
    kafka = by_cell[("kafka-2.4.1", "eager-range", 48, "leave")]
    assert len(kafka.sim) == 10 and not any(r.stragglers for r in kafka.sim)
    assert [m.key for m in model] == [r.key for r in runs]


def test_a_plan_places_each_cells_event_from_the_producer_rows_it_names(
        tmp_path: Path) -> None:
    import json

    from zkconsumer.spark.herd.scoring import DistPlan, plan_producer_events

    (tmp_path / "earlier.csv").write_text(SPREAD + "".join((
        "zk-leader-range-n48-p24-leave-s1-bb,48,leave,2000,producer_event,,3.72\n",
        "zk-leader-range-n48-p24-leave-s0-aa,48,leave,2000,producer_event,,3.63\n",
        "zk-leader-range-n48-p24-leave-s0-aa,48,leave,2000,event_lag,,3.1\n",
        "zk-range-n12-p24-join-s0-cc,12,join,2000,producer_event,,5.9\n")))
    plan = json.loads((Path(__file__).resolve().parents[2]
                       / "results/scale/validation-plan-23.json").read_text())
    assert plan_producer_events(DistPlan.from_json(plan), tmp_path) == {}
    plan["event_on_producer"] = "earlier.csv"
    assert plan_producer_events(DistPlan.from_json(plan), tmp_path) == {
        ("zk-leader-range", 48, "leave"): (3.63, 3.72), ("zk-range", 12, "join"): (5.9,)}


def _straggler(run: str, member: str) -> dict[str, str]:
    return {"run_id": run, "kind": "straggler", "member": member, "seconds": "1.0"}


def test_stragglers_are_counted_by_creation_rank_in_the_tasks_not_started_last() -> None:
    run = "eager-range-n12-p24-join-s0-abc"
    rows = [_straggler(run, m) for m in ("m00003", "m00003", "m00001", "m00007", "m00000")]
    rows.append({"run_id": run, "kind": "event_lag", "member": "", "seconds": "3.1"})
    # task 1's ranks: m1 0, m3 1, m5 2, m7 3; m0 is task 0's, the task started last
    assert straggler_ranks(rows, 2, 0) == (1, 2, 0, 1)
    assert straggler_ranks(rows, 2, 1) == (1,)  # m0 alone, rank 0 of task 0
    assert straggler_ranks([], 2, 0) == ()
    with pytest.raises(ValueError, match="member 'leader' is not a lab member id"):
        straggler_ranks([_straggler(run, "leader")], 2, 0)
    with pytest.raises(ValueError, match="tasks must be >= 1, got 0"):
        straggler_ranks(rows, 0, 0)


@pytest.mark.parametrize("value", [3, ["a.csv", 4]])
def test_a_plans_straggler_ranks_must_name_row_files(value: object) -> None:
    plan = {"sets": [], "members": [12], "partitions": 24, "events": ["join"],
            "session_timeout_ms": 6000, "real_seeds": 10, "sim_draws": 40,
            "tolerances": {"time_to_stable_relative": 0.2, "time_to_stable_absolute_s": 0.25,
                           "time_to_stable_iqr": True, "requests_relative": 0.1,
                           "requests_absolute": 5, "multi_attempt_share": "wilson-95"},
            "straggler_ranks": value}
    with pytest.raises(ValueError, match="straggler_ranks must be a path or a list of paths"):
        DistPlan.from_json(plan)
