"""The real runs a plan judges, and which of them followed a formation with stragglers."""

from pathlib import Path

import pytest

from zkconsumer.results.distributions import CellKey
from zkconsumer.results.real_runs import RunKey, run_key
from zkconsumer.spark.herd.scoring import RunSet, real_runs, set_stragglers

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
