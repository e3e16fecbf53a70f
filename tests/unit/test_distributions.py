"""The distribution scoring of a validation plan: bands, Wilson shares, a real 0, the plan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zkconsumer.results.distributions import CellKey, CellScore, difference, score_table
from zkconsumer.results.judging import DistTolerances, Run, quartiles, requests_band, time_band
from zkconsumer.spark.herd.scoring import DistPlan, model_protocol

REPO = Path(__file__).resolve().parents[2]
KEY = CellKey("tansu", "tansu-0.6.0", "zk-range", 12, 24, "join")


def runs(tts: list[float | None], attempts: list[int] | None = None,
         requests: float = 100.0) -> tuple[Run, ...]:
    attempts = attempts or [1] * len(tts)
    return tuple(Run(requests, a, 0, t) for t, a in zip(tts, attempts, strict=True))


def test_a_real_zero_prints_as_an_absolute_difference_never_a_percentage() -> None:
    assert difference(0.0, 7.83, ".2f", " s") == "real 0: off by 7.83 s"
    assert difference(0.0, 105.0) == "real 0: off by 105"
    assert difference(1.0, 1.3, ".2f", " s") == "30%"


def test_the_time_band_is_the_widest_of_iqr_relative_and_absolute() -> None:
    tol = DistTolerances()
    assert quartiles([1.0, 1.1, 1.2, 1.3, 5.0]) == (1.1, 1.3)
    assert time_band([1.0, 1.1, 1.2, 1.3, 5.0], tol) == pytest.approx((0.95, 1.45))
    # a wide real spread: the interquartile range is the band
    assert time_band([0.1, 0.2, 1.0, 3.0, 4.0], tol) == pytest.approx((0.2, 3.0))
    # a real 0: the absolute margin, never below 0
    assert time_band([0.0, 0.0, 0.0, 0.0, 0.0], tol) == pytest.approx((0.0, 0.25))


def test_the_requests_band_has_an_absolute_floor() -> None:
    tol = DistTolerances()
    assert requests_band([20.0], tol) == (15.0, 25.0)
    assert requests_band([990.0, 1000.0, 1010.0], tol) == (900.0, 1100.0)


def test_a_plan_may_let_the_requests_pass_inside_the_real_interquartile_range() -> None:
    # a joiner that gets nothing: the count is the observer's window on the heartbeats
    spread = [3.0] * 5 + [33.0, 65.0, 70.0, 74.0, 91.0]
    assert requests_band(spread, DistTolerances()) == (13.0, 23.0)  # median 18, floor ±5
    with_iqr = DistTolerances(requests_iqr=True)
    assert requests_band(spread, with_iqr) == pytest.approx((3.0, 68.75))
    real = tuple(Run(c, 1, 0, 0.0) for c in spread)
    model = tuple(Run(3.0, 1, 0, 0.0) for _ in range(20))
    assert CellScore(KEY, "cooperative-sticky", real, model).flags == "R"
    assert CellScore(KEY, "cooperative-sticky", real, model, with_iqr).ok
    # a tight count keeps its margins: the range adds nothing
    tight = [3086.0, 3087.0, 3088.0, 3088.0, 3089.0]
    assert requests_band(tight, with_iqr) == requests_band(tight, DistTolerances())
    assert DistTolerances.from_plan({"tolerances": {
        "time_to_stable_relative": 0.2, "time_to_stable_absolute_s": 0.25,
        "time_to_stable_iqr": True, "requests_relative": 0.1, "requests_absolute": 5,
        "requests_iqr": True, "multi_attempt_share": "wilson-95"}}).requests_iqr
    assert "requests: the real interquartile range, or ±10%" in with_iqr.describe()
    # the table shows the range the count was judged inside, and says so in its header
    header, _, row = score_table([CellScore(KEY, "cooperative-sticky", real, model, with_iqr)])
    assert "requests: real median [IQR] / model median (error)" in header
    assert "| 18 [3–69] / 3 (83%) |" in row and row.endswith("| pass |")
    assert "requests: real / model (error)" in score_table(
        [CellScore(KEY, "cooperative-sticky", real, model)])[0]


def test_the_multi_attempt_share_is_judged_by_the_real_wilson_interval() -> None:
    real = runs([1.0] * 5, [2, 1, 1, 1, 1])  # 1 of 5: interval 0.036-0.624
    inside = runs([1.0] * 20, [2] * 12 + [1] * 8)  # 0.60
    outside = runs([1.0] * 20, [2] * 13 + [1] * 7)  # 0.65
    assert CellScore(KEY, "zk-range", real, inside).multi_interval == pytest.approx(
        (0.0362, 0.6245), abs=1e-4)
    assert CellScore(KEY, "zk-range", real, inside).ok
    failing = CellScore(KEY, "zk-range", real, outside)
    assert not failing.ok and failing.flags == "M"
    # 0 of 5 real: the model may draw a second attempt up to 0.434 of the time
    none = runs([1.0] * 5)
    assert CellScore(KEY, "zk-range", none, runs([1.0] * 20, [2] * 8 + [1] * 12)).multi_ok
    assert not CellScore(KEY, "zk-range", none, runs([1.0] * 20, [2] * 9 + [1] * 11)).multi_ok


def test_a_conflict_counts_as_more_than_one_attempt() -> None:
    assert Run(10, 1, 1, 0.5).multi and not Run(10, 1, 0, 0.5).multi


def test_time_and_requests_fail_with_their_flags() -> None:
    real = runs([1.0, 1.0, 1.1, 1.2, 1.2])
    slow = runs([2.0] * 20)
    assert CellScore(KEY, "zk-range", real, slow).flags == "T"
    many = runs([1.1] * 20, requests=120.0)
    assert CellScore(KEY, "zk-range", real, many).flags == "R"
    # a majority of real runs that never settled fails on time whatever the model draws
    unsettled = runs([None, None, None, 1.0, 1.0])
    assert not CellScore(KEY, "zk-range", unsettled, runs([1.0] * 20)).tts_ok


def _mixed(moved: int, of: int, moved_requests: float, still_requests: float) -> tuple[Run, ...]:
    """``moved`` runs where something moved (1.9 s) among ``of``, the rest stable at once."""
    return (tuple(Run(moved_requests, 2, 0, 1.9) for _ in range(moved))
            + tuple(Run(still_requests, 1, 0, 0.0) for _ in range(of - moved)))


def test_a_split_cell_judges_the_share_that_moved_and_each_side_apart() -> None:
    split = DistTolerances(split_by_movement=True)
    real = _mixed(6, 10, 180.0, 50.0)  # medians over both sides: 1.9 s and 180 requests
    model = _mixed(9, 20, 182.0, 49.0)  # ... and 0 s and 49: the other mode
    assert CellScore(KEY, "kip848-range", real, model).flags == "R"  # one median each
    score = CellScore(KEY, "kip848-range", real, model, split)
    assert score.ok and score.flags == ""
    assert (score.real_split, score.sim_split_share) == (6, 0.45)
    assert [side for side, _, _ in score.sides()] == ["moved", "still"]
    assert "moved: 6 of 10 [0.31–0.83] / 0.45; moved: 1.90 s / 1.90 s, 180 / 182 requests; " \
        "still: 50 / 49 requests" in score_table([score])[2]
    # the model rarely moving fails the share (and with it the second attempts); a side's
    # requests off fail R
    assert CellScore(KEY, "kip848-range", real, _mixed(2, 20, 182.0, 49.0), split).flags == "MS"
    assert CellScore(KEY, "kip848-range", real, _mixed(9, 20, 182.0, 80.0), split).flags == "R"
    # a model run that settled a tenth of a millisecond after a leave (the leaver's own
    # departure) moved nothing, as the lab's exact 0 says
    departed = tuple(Run(49.0, 1, 0, 0.0001) for _ in range(11))
    assert CellScore(KEY, "kip848-range", real, _mixed(9, 9, 182.0, 49.0) + departed,
                     split).sim_split_share == 0.45
    assert DistTolerances.from_plan({"tolerances": {
        "time_to_stable_relative": 0.2, "time_to_stable_absolute_s": 0.25,
        "time_to_stable_iqr": True, "requests_relative": 0.1, "requests_absolute": 5,
        "multi_attempt_share": "wilson-95", "split_by_movement": True}}) == split


def _after(stragglers: int, of: int, slow: tuple[float, float],
           quick: tuple[float, float]) -> tuple[Run, ...]:
    """``stragglers`` runs after a formation with stragglers (time, requests ``slow``) among
    ``of``, the rest ``quick``."""
    return (tuple(Run(slow[1], 1, 0, slow[0], True) for _ in range(stragglers))
            + tuple(Run(quick[1], 1, 0, quick[0]) for _ in range(of - stragglers)))


def test_a_cell_split_by_stragglers_judges_their_share_and_each_side_apart() -> None:
    split = DistTolerances(split_by_stragglers=True)
    # real: 6 of 10 slow after stragglers (median 4.9 s, 60 requests); the model a third
    real = _after(6, 10, (4.9, 60.0), (3.9, 40.0))
    model = _after(13, 40, (4.8, 62.0), (3.85, 41.0))
    assert CellScore(KEY, "eager-range", real, model).flags == "TR"  # one median each
    score = CellScore(KEY, "eager-range", real, model, split)
    assert score.ok and score.flags == ""
    assert (score.real_split, score.sim_split_share) == (6, 13 / 40)
    assert [side for side, _, _ in score.sides()] == ["stragglers", "none"]
    assert ("stragglers: 6 of 10 [0.31–0.83] / 0.33; stragglers: 4.90 s / 4.80 s, 60 / 62 "
            "requests; none: 3.90 s / 3.85 s, 40 / 41 requests") in score_table([score])[2]
    assert score.to_json()["real_stragglers"] == 6 and score.to_json()["stragglers_ok"]
    # each side's time is judged: the model's quick side a second slow fails T
    assert CellScore(KEY, "eager-range", real, _after(13, 40, (4.8, 62.0), (4.9, 41.0)),
                     split).flags == "T"
    # a model that never leaves stragglers fails the share (S), its one side judged
    never = CellScore(KEY, "eager-range", real, _after(0, 40, (0.0, 0.0), (3.85, 41.0)), split)
    assert never.flags == "S" and [side for side, _, _ in never.sides()] == ["none"]
    # a cell with stragglers on neither side (a ZooKeeper or Kafka cell of a split plan) reads
    # as an unsplit one
    none = _after(0, 10, (0.0, 0.0), (3.9, 40.0))
    assert score_table([CellScore(KEY, "zk-range", none, none * 4, split)])[2].endswith(
        "| pass |")
    # a run reads back with its stragglers; one without has no such key
    from zkconsumer.results.distributions import run_from_json, run_to_json, score_from_json

    assert run_from_json(run_to_json(real[0], True)) == real[0] and real[0].stragglers
    assert "stragglers" not in run_to_json(real[-1], True)
    # a plan that does not split by them records none (its scorings stay as they were)
    assert "stragglers" not in run_to_json(real[0])
    assert score_from_json(score.to_json(), split, 5) == score
    assert DistTolerances.from_plan({"tolerances": {
        "time_to_stable_relative": 0.2, "time_to_stable_absolute_s": 0.25,
        "time_to_stable_iqr": True, "requests_relative": 0.1, "requests_absolute": 5,
        "multi_attempt_share": "wilson-95", "split_by_stragglers": True}}) == split
    # a cell without real runs is not judged, and says so without a share to judge
    empty = CellScore(KEY, "eager-range", (), model, split)
    assert not empty.judged and not empty.split_ok and empty.to_json()["real_stragglers"] == 0
    with pytest.raises(ValueError, match="split_by_movement and split_by_stragglers"):
        DistTolerances(split_by_movement=True, split_by_stragglers=True)


def test_a_cell_with_fewer_real_runs_than_the_plan_is_not_judged() -> None:
    score = CellScore(KEY, "zk-range", runs([1.0] * 4), runs([1.0] * 20))
    assert not score.judged and not score.ok
    row = score_table([score])[2]
    assert row.endswith("| not judged (runs missing) |")


def test_the_table_prints_a_real_zero_time_as_absolute() -> None:
    score = CellScore(KEY, "eager-range", runs([0.0] * 5), runs([7.0] * 20))
    row = score_table([score])[2]
    assert "0.00 [0.00–0.00] / 7.00 (real 0: off by 7.00 s)" in row
    assert row.endswith("| fail: T |")


def test_the_committed_plan_has_its_cells_and_profiles() -> None:
    plan = DistPlan.from_json(json.loads(
        (REPO / "results/scale/validation-plan-3.json").read_text()))
    cells = plan.cells()
    assert len(cells) == 28
    assert (plan.real_seeds, plan.sim_draws) == (5, 20)
    assert plan.calibration == "results/scale/calibration/calibration.json"
    by_name = {s.name: s for s in plan.sets}
    assert model_protocol(by_name["tansu"], "eager-range") == "eager-range"
    assert model_protocol(by_name["tansu"], "zk-leader-range") == "zk-leader-range"
    assert model_protocol(by_name["kafka-2.4.1"], "cooperative-sticky") == \
        "kafka-cooperative-sticky"
    assert model_protocol(by_name["kafka-4.0.2"], "consumer-uniform") == "kip848"
    assert model_protocol(by_name["kafka-4.0.2"], "static-consumer-uniform") == "kip848-static"
    assert model_protocol(by_name["kafka-4.0.2"], "consumer-range") == "kip848-range"
    assert by_name["kafka-4.0.2"].by_compare and not by_name["tansu"].by_compare


def _two_set_plan(**tansu: object) -> dict:
    plan = json.loads((REPO / "results/scale/validation-plan-27.json").read_text())
    plan["sets"] = [dict(plan["sets"][0], **tansu),
                    dict(plan["sets"][0], name="kafka-2.4.1", broker="apache-kafka-2.4.1")]
    return plan


def test_a_set_that_names_its_own_group_sizes_has_cells_at_those_only() -> None:
    plan = DistPlan.from_json(_two_set_plan(members=[96]))
    sizes = {(s.name, key.members) for s, key in plan.cells()}
    assert sizes == {("tansu", 96), ("kafka-2.4.1", 12), ("kafka-2.4.1", 48)}
    assert len(plan.cells()) == 2 * 2 + 2 * 2 * 2  # protocols x N x events, set by set


@pytest.mark.parametrize("bad", [[], [1], "96", [96.0], [True]])
def test_a_set_whose_group_sizes_are_not_sizes_is_refused_naming_the_set(bad: object) -> None:
    with pytest.raises(ValueError, match=r"set 'tansu': members must be .*got"):
        DistPlan.from_json(_two_set_plan(members=bad))


def test_a_plan_without_its_tolerances_is_refused_naming_them() -> None:
    with pytest.raises(ValueError, match="tolerances"):
        DistTolerances.from_plan({"tolerances": {"requests": 0.1}})


def test_a_committed_cell_reads_back_with_the_same_verdicts() -> None:
    from zkconsumer.results.distributions import score_from_json

    real = runs([1.0, 1.1, 1.2, 1.3, 5.0], [2, 1, 1, 1, 1])
    score = CellScore(KEY, "zk-range", real, runs([1.5] * 20, [2] * 10 + [1] * 10))
    back = score_from_json(score.to_json(), DistTolerances(), 5)
    assert back == score
    assert (back.ok, back.flags) == (False, "T")


def test_a_run_list_says_each_run_its_time_requests_and_a_star_for_a_second_attempt() -> None:
    from zkconsumer.results.figures.scale_distributions import runs_said
    from zkconsumer.results.judging import Run

    said = runs_said((Run(44.0, 1.0, 0.0, 0.271), Run(60.0, 2.0, 0.0, 0.28),
                       Run(7.0, 1.0, 1.0, 0.0), Run(3.0, 1.0, 0.0, None)))
    assert said == "0.27 / 44; 0.28 / 60*; 0.00 / 7*; - / 3"


def test_plan_7s_run_table_lists_exactly_its_failing_cells() -> None:
    from zkconsumer.results.figures.scale_distributions import load_scores, runs_table
    from zkconsumer.results.registry import Context

    ctx = Context(results=REPO / "results", figures=REPO / "docs" / "figures")
    scores, _ = load_scores(ctx, 7)
    failing = [s for s in scores if s.judged and not s.ok]
    rows = runs_table(ctx, 7, 5)[2:]
    assert len(rows) == len(failing) == 8
    for row, s in zip(rows, failing, strict=True):
        assert f"`{s.model}`) N = {s.key.members} {s.key.event}" in row
        assert row.count(";") == 2 * (len(s.real) - 1)  # five runs in each plan


def test_a_run_set_scored_as_the_model_of_itself_passes_every_judged_cell() -> None:
    from zkconsumer.results.figures.scale_distributions import replication
    from zkconsumer.results.registry import Context

    ctx = Context(results=REPO / "results", figures=REPO / "docs" / "figures")
    runs, model = replication(ctx, 9, (9,))
    judged = [r for r in runs if r.judged]
    assert len(judged) == 28 and all(r.ok for r in judged)
    assert [m.key for m in model] == [r.key for r in runs]


def test_earlier_run_sets_pool_into_one_prediction_per_cell() -> None:
    from zkconsumer.results.figures.scale_distributions import (
        load_scores,
        replication,
        replication_said,
    )
    from zkconsumer.results.registry import Context

    ctx = Context(results=REPO / "results", figures=REPO / "docs" / "figures")
    runs, _ = replication(ctx, 9, (7, 9))
    seven = {(s.key, s.model): s.real for s in load_scores(ctx, 7)[0]}
    nine = {(s.key, s.model): s.real for s in load_scores(ctx, 9)[0]}
    assert {r.model for r in runs} == {"the runs of plans 7 and 9"}
    for r, (key, model) in zip(runs, nine, strict=True):
        assert r.sim == seven[(key, model)] + nine[(key, model)]
        assert len(r.sim) == 10
    said = replication_said(ctx, 9, (7, 9))
    assert said.startswith("**The lab against itself.** The real runs of plans 7 and 9 pooled,")


def test_plan_23_splits_its_tansu_sets_by_stragglers_and_no_other() -> None:
    plan = DistPlan.from_json(json.loads(
        (REPO / "results/scale/validation-plan-23.json").read_text()))
    assert plan.tolerances.split_by_stragglers and not plan.tolerances.split_by_movement
    rows = "results/scale/validation-23/formation-spread/formation-spread.csv"
    assert {s.name: s.formation_spread for s in plan.sets} == {
        "tansu": (rows,), "tansu-source-rules": (rows,), "kafka-2.4.1": ()}
    assert len(plan.cells()) == 28


def test_the_model_observes_a_set_as_its_meta_says_the_lab_settled_it(tmp_path):
    # a ZooKeeper set whose sweep records the newer rule is drawn waiting for every rebalance
    # to end; a broker-side one, or a set made before the rule was recorded, with the plain one
    from zkconsumer.spark.herd.scoring import HERD_OBSERVATION, RunSet, set_observation
    from zkconsumer.spark.task_control import SETTLE_REBALANCES_ENDED

    def folder(name: str, settle: str | None) -> None:
        extra = {} if settle is None else {"settle": settle}
        (tmp_path / "set" / name).mkdir(parents=True)
        (tmp_path / "set" / name / "meta.json").write_text(json.dumps(
            {"command": "zkconsumer spark herd", "revision": "r", "date": "d", "machine": {},
             "extra": extra}))

    folder("zk-range-n96", SETTLE_REBALANCES_ENDED)
    folder("eager-range-n96", SETTLE_REBALANCES_ENDED)
    folder("zk-range-n48", None)
    run_set = RunSet("tansu", "tansu-0.6.0", "set", ("zk-range", "eager-range"), "spark herd")

    def observed(protocol: str, n: int):
        return set_observation(tmp_path, run_set, CellKey("tansu", "tansu-0.6.0", protocol, n,
                                                           24, "join"))

    assert observed("zk-range", 96).rebalances_ended
    assert observed("eager-range", 96) == HERD_OBSERVATION
    assert observed("zk-range", 48) == HERD_OBSERVATION
    assert observed("zk-range", 12) == HERD_OBSERVATION  # no meta.json at all


def test_the_score_table_names_each_run_set_where_two_share_a_broker() -> None:
    real = runs([1.0] * 5)
    first, second = KEY, CellKey("tansu-b", "tansu-0.6.0", "zk-range", 12, 24, "join")
    rows = score_table([CellScore(first, "zk-range", real, real),
                        CellScore(second, "zk-range", real, real)])
    assert rows[2].startswith("| tansu-0.6.0 (tansu) | zk-range")
    assert rows[3].startswith("| tansu-0.6.0 (tansu-b) | zk-range")
    # one set per broker: the broker says it all
    kafka = CellKey("kafka", "apache-kafka-2.4.1", "zk-range", 12, 24, "join")
    rows = score_table([CellScore(first, "zk-range", real, real),
                        CellScore(kafka, "zk-range", real, real)])
    assert rows[2].startswith("| tansu-0.6.0 | zk-range")
    assert rows[3].startswith("| apache-kafka-2.4.1 | zk-range")
