"""The split-brain pages' generated statements: counts with their n and interval, empty cases
said in words, the real table's budget column, and real vs simulated named in every figure."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from zkconsumer.results.figures.splitbrain import real_runs
from zkconsumer.results.figures.splitbrain_findings import findings, storm_sim
from zkconsumer.results.figures.splitbrain_formation import formation_statement
from zkconsumer.results.figures.splitbrain_text import at_sizes, sizes, span, wilson
from zkconsumer.results.figures.splitbrain_validation import compact_reasons, exclusions
from zkconsumer.results.registry import Context

REPO = Path(__file__).resolve().parents[2]


def test_the_wilson_interval_matches_known_values_and_stays_in_bounds() -> None:
    assert wilson(0, 10) == (0.0, pytest.approx(0.2775, abs=1e-4))
    lo, hi = wilson(1, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.0179, 0.4042)
    assert wilson(5, 5)[1] == 1.0
    with pytest.raises(ValueError, match="got 3 of 2"):
        wilson(3, 2)


def test_an_empty_list_of_sizes_is_said_in_words_never_as_none() -> None:
    assert sizes([]) == "no N measured"
    assert at_sizes([]) == "at no N measured"
    assert at_sizes([1000, 10]) == "at N = 10, 1,000"


def test_a_single_run_is_one_run_never_a_median_or_a_range() -> None:
    assert span([12.5], " s") == "12.5 s (one run)"
    assert span([3.0, 3.0]) == "3.0 in all 2 runs"
    assert span([13.25, 15.1], " s") == "13.2–15.1 s over 2 runs"
    assert span([], what="seed") == "no seed"


def test_budget_one_formation_is_a_minority_at_every_size_with_counts_and_interval() -> None:
    text = formation_statement(1, {2: (1, 10), 3: (0, 10), 100: (0, 1)})
    assert text == ("Under a budget of 1 a group started together formed only in a minority "
                    "of runs at every N measured: 1 of 21 (95 % interval 0.01–0.23) in all, "
                    "1/10, 0/10, 0/1 at N = 2, 3, 100.")
    assert formation_statement(2, {10: (7, 7), 200: (3, 3)}) == (
        "Under a budget of 2 the group formed in every run measured: 10 of 10 (95 % interval "
        "0.72–1.00), at N = 10, 200.")


def test_a_mixed_formation_names_the_sizes_of_each_outcome() -> None:
    text = formation_statement(1, {2: (1, 10), 100: (1, 2), 200: (3, 3)})
    assert "in a minority of runs at N = 2, in every run at N = 200, in half or more but " \
           "not all at N = 100" in text
    assert "none" not in text


def _sweep(folder: Path, rows: list[dict[str, str]], command: str = "zkconsumer x") -> None:
    folder.mkdir(parents=True)
    base = {"mode": "", "protocol": "zk-range", "scenario": "storm", "members": "10",
            "partitions": "64", "seed": "1", "applicable": "true", "reason": "",
            "double_owned_partition_s": "0.0", "zombie_deliveries": "0",
            "delivered_twice": "0", "offsets_went_back": "0", "zombie_stop_s": "",
            "conflicts": "0", "rollbacks": "0", "attempts_max": "1", "stale_decisions": "0",
            "rebalances_given_up": "0", "gave_up_members": "0", "unowned_partition_s": "0.0",
            "time_to_stable_s": "3.0", "verify_ok": "true", "repaired": "false", "lost": "0",
            "rebalance_max_retries": "1", "p_give_up": "", "settled": ""}
    full = [{**base, **r} for r in rows]
    with open(folder / "sweep.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(full[0]))
        w.writeheader()
        w.writerows(full)
    (folder / "meta.json").write_text(json.dumps({"date": folder.name, "revision": "r",
                                                  "command": command}))


def test_the_real_table_tells_runs_of_the_same_seed_apart_by_budget_and_folder(tmp_path) -> None:
    base = tmp_path / "splitbrain"
    _sweep(base / "real-r1", [{"mode": "real", "seed": "41", "rebalances_given_up": "6",
                               "gave_up_members": "6"}])
    _sweep(base / "real-r2", [{"mode": "real", "seed": "41", "rebalance_max_retries": "2"}])
    text = real_runs(Context(results=tmp_path, figures=tmp_path / "fig"))
    header = text.splitlines()[2].split(" | ")
    assert header[:5] == ["| scenario", "protocol", "retries", "N", "seed"]
    assert header[-1] == "run |"
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| storm")]
    assert [(r[2], r[4], r[14], r[-1]) for r in rows] == [
        ("1", "41", "6 (6)", "`real-r1` |"), ("2", "41", "0 (0)", "`real-r2` |")]


def test_rows_that_did_not_form_are_counted_per_budget_and_size(tmp_path) -> None:
    base = tmp_path / "splitbrain"
    why = ("failed: RunFailed('g: the group did not form: {} of 10 initial members exited "
           "before it was stable (rebalance.max.retries = 1)')")
    _sweep(base / "real-a", [{"mode": "real", "seed": s, "reason": why.format(k)}
                             for s, k in (("1", 4), ("2", 5))] +
           [{"mode": "real", "seed": "3"}])
    ctx = Context(results=tmp_path, figures=tmp_path / "fig")
    assert "| 1 | 10 | 2 | 4–5 of 10 | 1, 2 | `real-a` |" in exclusions(ctx)
    assert "Not in the table (2 of 3 real rows): 2 legacy storms whose group did not form" \
        in real_runs(ctx)


def test_unscored_cells_that_did_not_form_become_one_line_per_size() -> None:
    why = ("counted in runs_formed only: failed: RuntimeError('g: the group did not form: {} "
           "of 4 initial members exited before it was stable (rebalance.max.retries = 1)') "
           "(real-v5-small)")
    rows = [{"protocol": "zk-range", "scenario": "storm", "members": "4", "seed": s,
             "reason": why.format(k)} for s, k in (("12", 2), ("11", 3))]
    assert compact_reasons(rows) == [
        "- zk-range storm N = 4, seeds 11, 12 (`real-v5-small`): the group did not form "
        "(counted in runs_formed only); 2–3 of 4 initial members exited"]


def test_a_budget_without_any_give_up_says_so_in_words(tmp_path) -> None:
    base = tmp_path / "splitbrain"
    for budget, p in (("1", "1.0"), ("4", "0.0")):
        _sweep(base / f"sim-storm-r{budget}", [
            {"mode": "sim", "members": n, "seed": s, "p_give_up": p,
             "rebalance_max_retries": budget} for n in ("10", "30") for s in ("0", "1")])
    text = storm_sim(Context(results=tmp_path, figures=tmp_path / "fig"), "sim-storm-r", "x")
    assert "budget 1: 2/2, 2/2 at N = 10, 30; budget 4: no give-up at any N measured." in text
    assert "none" not in text


def test_the_committed_findings_answer_the_budget_question_and_never_print_none() -> None:
    text = findings(Context(results=REPO / "results", figures=REPO / "unused"))
    assert "N = none" not in text and "= none" not in text
    assert "a group started together formed only in a minority of runs at every N " \
           "measured" in text
    assert "Under a budget of 2 the group formed in every run measured" in text


@pytest.mark.parametrize(("svg", "labels"), [
    ("splitbrain-giveup.svg", ("(simulated)",)),
    ("splitbrain-giveup-here.svg", ("(simulated)", "(real runs, 95 % interval)")),
    ("splitbrain-zombie.svg", ("(simulated median)",)),
    ("splitbrain-formation.svg", ("(real runs)",)),
])
def test_every_split_brain_figure_names_real_and_simulated_in_its_legend(svg, labels) -> None:
    text = (REPO / "docs" / "figures" / svg).read_text()
    for label in labels:
        assert label in text, f"{svg}: no legend label {label!r}"
