"""A run set's speed and its formations' stragglers as the model's inputs."""

import dataclasses
import statistics
from pathlib import Path

import pytest

from zkconsumer.results.distributions import CellKey, CellScore, score_from_json, sides_note
from zkconsumer.results.judging import DistTolerances, Run
from zkconsumer.results.real_runs import cell_formation_reads, formation_reads
from zkconsumer.scenarios.timing import Timing
from zkconsumer.sim import Calibration, SimConfig, simulate
from zkconsumer.sim.calibration import CPU_BOUND
from zkconsumer.spark.herd.scoring import (
    HERD_OBSERVATION,
    DistPlan,
    RunSet,
    SetRows,
    cell_inputs,
    folder_straggler_shares,
)
from zkconsumer.spark.herd.set_speed import (
    FitCell,
    SpeedReference,
    fit_reference,
    interpolate,
    speed_factor,
)
from zkconsumer.spark.herd.validate import lab_sim_config

REPO = Path(__file__).resolve().parents[2]
CAL = Calibration.load(REPO / "results/scale/calibration-10/calibration.json")
KEY = CellKey("tansu", "tansu-0.6.0", "eager-range", 48, 24, "join")


def test_a_slowed_calibration_stretches_every_cpu_step_and_no_timer() -> None:
    slow = CAL.slowed(1.5)
    for name in CPU_BOUND:
        assert getattr(slow, name) == pytest.approx(getattr(CAL, name) * 1.5)
    for name in ("delivery_round_ms", "fetcher_close_traffic_ms", "leave_wake_ms",
                 "zk_tick_ms", "session_expiry_factor"):
        assert getattr(slow, name) == getattr(CAL, name)
    assert CAL.slowed(1.0) is CAL
    for bad in (0, -1.0, float("nan"), float("inf"), "2"):
        with pytest.raises(ValueError, match="speed factor must be a finite number > 0"):
            CAL.slowed(bad)  # type: ignore[arg-type]


def test_a_slower_set_makes_the_legacy_n48_leave_slower_and_costs_no_request_more() -> None:
    def draws(cal: Calibration) -> tuple[float, float]:
        runs = [simulate(lab_sim_config("zk-range", 48, 24, "leave", seed, cal, 6000, 2,
                                        Timing()), HERD_OBSERVATION) for seed in range(12)]
        return (statistics.median(r.time_to_stable_s for r in runs),
                statistics.median(r.coordination_requests for r in runs))

    (base_t, base_r), (slow_t, slow_r) = draws(CAL), draws(CAL.slowed(1.3))
    # the group read is most of a leave at N = 48: 30 % slower CPU is >= 15 % slower settling
    assert slow_t > 1.15 * base_t
    assert slow_r == base_r


def test_a_plan_reference_names_its_protocols_and_sizes_and_refuses_bad_values() -> None:
    ref = SpeedReference.from_json({"protocols": ["zk-range"],
                                    "reference_formation_read_s": {"48": 1.1}, "fit": "x"})
    assert ref.reference("zk-range", 48) == 1.1
    assert ref.reference("zk-range", 12) is None and ref.reference("eager-range", 48) is None
    with pytest.raises(ValueError, match="reference for N = 48 must be a finite number"):
        SpeedReference.from_json({"protocols": ["zk-range"],
                                  "reference_formation_read_s": {"48": 0}})
    with pytest.raises(ValueError, match="set_speed must be an object"):
        SpeedReference.from_json({"protocols": ["zk-range"], "reference": 1.0})
    with pytest.raises(ValueError, match="needs 'protocols'"):
        SpeedReference.from_json({"protocols": ["zk-range"],
                                  "reference_formation_read_s": [1.1]})


def test_a_sets_factor_is_its_formation_read_over_the_reference() -> None:
    assert speed_factor(1.32, 1.1) == pytest.approx(1.2)
    assert speed_factor(None, 1.1) == 1.0 and speed_factor(1.32, None) == 1.0
    with pytest.raises(ValueError, match="formation read must be a number of seconds > 0"):
        speed_factor(0.0, 1.1)


def test_the_fit_finds_the_reference_that_brings_the_model_onto_the_real_medians() -> None:
    model = interpolate([(0.5, 0.75), (2.0, 3.0)])  # 1.5 s per unit of factor
    assert model(1.0) == pytest.approx(1.5) and model(0.1) == 0.75 and model(9) == 3.0
    # three sets whose real medians are the model at their formation read over 1.2 s
    cells = [FitCell(f"plan-{i}", "join", fr, 1.5 * fr / 1.2, model)
             for i, fr in enumerate((1.0, 1.3, 1.5))]
    fit = fit_reference(cells, [round(0.8 + 0.01 * i, 2) for i in range(80)])
    assert fit.reference_s == 1.2 and fit.loss == pytest.approx(0.0, abs=1e-12)
    assert [round(c[3], 3) for c in fit.cells] == [0.833, 1.083, 1.25]
    with pytest.raises(ValueError, match="distinct increasing x"):
        interpolate([(1.0, 1.0), (1.0, 2.0)])


def test_a_folder_median_formation_read_pools_its_join_and_leave_runs() -> None:
    rows = [{"run_id": f"zk-range-n48-p24-{ev}-s{s}-abc", "kind": "formation_read",
             "seconds": str(t)} for ev, s, t in (("join", 0, 1.0), ("join", 1, 1.4),
                                                 ("leave", 0, 1.2))]
    rows.append({"run_id": "zk-range-n48-p24-join-s0-abc", "kind": "event_lag", "seconds": "3"})
    assert formation_reads(rows) == {("zk-range", 48): 1.2}
    # per cell: the join runs' median apart from the leave runs'
    assert cell_formation_reads(rows) == {("zk-range", 48, "join"): 1.2,
                                          ("zk-range", 48, "leave"): 1.2}
    rows.append({"run_id": "zk-range-n48-p24-join-s2-abc", "kind": "formation_read",
                 "seconds": "1.5"})
    assert cell_formation_reads(rows)[("zk-range", 48, "join")] == 1.4


def test_a_plan_may_draw_each_cell_at_its_own_formations_speed() -> None:
    folder = SpeedReference.from_json({"protocols": ["zk-range"],
                                       "reference_formation_read_s": {"48": 1.0}})
    cell = SpeedReference.from_json({"protocols": ["zk-range"], "per": "cell",
                                     "reference_formation_read_s": {"48": 1.0}})
    assert (folder.per, cell.per) == ("folder", "cell")
    rows = SetRows(frozenset(), {("zk-range", 48): 1.3},
                   {("zk-range", 48, "join"): 1.2, ("zk-range", 48, "leave"): 1.5})
    leave = dataclasses.replace(KEY, protocol="zk-range", event="leave")
    assert rows.read(leave, folder.per) == 1.3 and rows.read(leave, cell.per) == 1.5
    with pytest.raises(ValueError, match="'per' must be one of folder, cell, got 'run'"):
        SpeedReference.from_json({"protocols": ["zk-range"], "per": "run",
                                  "reference_formation_read_s": {"48": 1.0}})


def _plan(**tolerances: bool) -> DistPlan:
    return DistPlan.from_json({
        "sets": [], "members": [48], "partitions": 24, "events": ["join", "leave"],
        "session_timeout_ms": 6000, "real_seeds": 10, "sim_draws": 40,
        "set_speed": {"protocols": ["zk-range"], "reference_formation_read_s": {"48": 1.1}},
        "tolerances": {"time_to_stable_relative": 0.2, "time_to_stable_absolute_s": 0.25,
                       "time_to_stable_iqr": True, "requests_relative": 0.1,
                       "requests_absolute": 5, "multi_attempt_share": "wilson-95",
                       **tolerances}})


def test_a_cell_is_drawn_with_its_sets_speed_and_straggler_share_where_the_plan_takes_them(
) -> None:
    plan = _plan(split_by_stragglers=True, stragglers_given=True)
    tansu = RunSet("tansu", "tansu-0.6.0", "runs", ("zk-range", "eager-range"),
                   "spark herd --mode real", formation_spread=("spread.csv",))
    rows = SetRows(frozenset(), {("zk-range", 48): 1.32})
    late, quick = Run(60, 1, 0, 4.0, True), Run(40, 1, 0, 3.0)
    real = {("tansu", dataclasses.replace(KEY, event="join")): (late, quick, quick),
            ("tansu", dataclasses.replace(KEY, event="leave")): (late, quick, quick, quick, late)}
    shares = folder_straggler_shares(real)
    assert shares == {("tansu", "eager-range", 48): 3 / 8}
    zk = dataclasses.replace(KEY, protocol="zk-range")
    assert cell_inputs(plan, tansu, zk, rows, shares) == pytest.approx(
        {"formation_read_s": 1.32, "speed_factor": 1.2})
    assert cell_inputs(plan, tansu, KEY, rows, shares) == {"straggler_share": 3 / 8}
    # a set without formation rows for a cell drawn at its speed is refused by name
    with pytest.raises(ValueError, match="no formation_read rows for zk-range N = 48"):
        cell_inputs(plan, tansu, zk, SetRows(frozenset(), {}), shares)
    # a plan that does not give the share leaves the broker's rate
    assert cell_inputs(_plan(split_by_stragglers=True), tansu, KEY, rows, shares) == {}


def test_a_given_straggler_share_draws_at_that_share_on_tansu_and_never_on_kafka() -> None:
    def with_stragglers(protocol: str, share: float | None) -> int:
        cfgs = [dataclasses.replace(lab_sim_config(protocol, 12, 24, "leave", seed, CAL, 6000,
                                                   2, Timing()),
                                    formation_straggler_share=share) for seed in range(30)]
        return sum(simulate(c, HERD_OBSERVATION).formation_stragglers > 0 for c in cfgs)

    assert with_stragglers("eager-range", 1.0) == 30
    assert with_stragglers("eager-range", 0.0) == 0
    assert with_stragglers("kafka-eager-range", 1.0) == 0
    with pytest.raises(ValueError, match=r"formation_straggler_share must lie in \[0, 1\]"):
        SimConfig("eager-range", 12, 24, "join", formation_straggler_share=1.5)


def test_a_given_share_is_not_judged_and_each_side_still_is() -> None:
    given = DistTolerances(split_by_stragglers=True, stragglers_given=True)
    real = (Run(60, 1, 0, 4.9, True),) * 6 + (Run(40, 1, 0, 3.9),) * 4
    never = (Run(41, 1, 0, 3.85),) * 40
    score = CellScore(KEY, "eager-range", real, never, given, 5, (("straggler_share", 0.6),))
    assert score.ok and score.flags == ""  # the share 0 is outside [0.31, 0.83]: not judged
    assert sides_note(score).startswith("stragglers: 6 of 10 [0.31–0.83] / 0.00 (given)")
    assert CellScore(KEY, "eager-range", real, (Run(41, 1, 0, 4.9),) * 40, given).flags == "T"
    data = score.to_json()
    assert data["stragglers_given"] and data["model_inputs"] == {"straggler_share": 0.6}
    assert score_from_json(data, given, 5) == score
    with pytest.raises(ValueError, match="stragglers_given needs split_by_stragglers"):
        DistTolerances(stragglers_given=True)
    assert "the model draws them at the share the set's own formations had" in given.describe()
