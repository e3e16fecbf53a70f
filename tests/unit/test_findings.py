"""docs/findings.md: the interval arithmetic it rests on, and the page's structure from the data.

The blocks' staleness is checked with every other block in ``test_figures.py``; here: the
Wilson interval against published values, the wording of counts and spreads, and that each
topic's block, rendered from the committed results, states its finding with runs and intervals,
draws a plot and tells real from simulated in it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from zkconsumer.results.figures.findings_outcome import BudgetCell, formation_phrase
from zkconsumer.results.figures.findings_text import Share, spread
from zkconsumer.results.figures.splitbrain_text import Z95, wilson
from zkconsumer.results.regenerate import all_figures
from zkconsumer.results.registry import Context

REPO = Path(__file__).resolve().parents[2]
TOPICS = ("findings-herd", "findings-splitbrain", "findings-outcome", "findings-alternatives",
          "findings-today")


@pytest.mark.parametrize(("k", "n", "low", "high"), [
    (0, 10, 0.0, 0.2775),     # the textbook "rule of three" neighbourhood: 0 of 10
    (5, 10, 0.2366, 0.7634),
    (3, 3, 0.4385, 1.0),
    (1, 2, 0.0945, 0.9055),
    (16, 88, 0.1151, 0.2751),
])
def test_wilson_interval_matches_known_values(k: int, n: int, low: float,
                                                  high: float) -> None:
    lo, hi = wilson(k, n)
    assert (round(lo, 4), round(hi, 4)) == (low, high)


@pytest.mark.parametrize(("k", "n"), [(1, 3), (6, 18), (16, 88), (7, 7)])
def test_wilson_bounds_solve_the_score_equation(k: int, n: int) -> None:
    """Each bound p (other than an exact 0 or 1) solves (k/n - p)² = z² p (1 - p) / n."""
    for p in wilson(k, n):
        if p not in (0.0, 1.0):
            assert (k / n - p) ** 2 == pytest.approx(Z95 ** 2 * p * (1 - p) / n, abs=1e-12)


def test_wilson_interval_is_exact_at_the_ends_and_symmetric() -> None:
    assert wilson(0, 3)[0] == 0.0
    assert wilson(3, 3)[1] == 1.0
    lo, hi = wilson(2, 7)
    mirror = wilson(5, 7)
    assert (round(lo, 12), round(hi, 12)) == (round(1 - mirror[1], 12), round(1 - mirror[0], 12))


def test_counts_and_spreads_say_how_many_runs_and_never_call_one_run_a_median() -> None:
    assert Share(3, 13).text() == "3 of 13 runs (95 % Wilson interval 0.08–0.50)"
    assert Share(0, 1).text() == "0 of 1 run (95 % Wilson interval 0.00–0.79)"
    assert Share(5, 10, "seeds").cell() == "5/10 (0.24–0.76)"
    one = spread([4.657])
    assert one is not None and one.text() == "4.66 (one run)" and one.cell() == "4.66 (one run)"
    many = spread([4.49, 4.66, 4.65, None])
    assert many is not None
    assert many.text(2, " s") == "4.65 s (median of 3 runs, range 4.49–4.66 s)"
    assert many.cell() == "4.65 (4.49–4.66; 3 runs)"
    same = spread([562, 562, 562], "seeds")
    assert same is not None and same.cell(0) == "562 (3 seeds, all equal)"
    assert spread([None]) is None


def _cell(n: int, formed: int, runs: int) -> BudgetCell:
    return BudgetCell(1, n, Share(formed, runs), None, None)


def test_formation_is_answered_the_right_way_round() -> None:
    """A group that formed in a minority of runs everywhere is said to, with the sizes."""
    assert formation_phrase([_cell(2, 1, 10), _cell(100, 0, 2)]) == \
        "in a minority of the runs at every size measured (N = 2, 100)"
    assert formation_phrase([_cell(2, 1, 10), _cell(100, 1, 2)]) == \
        "in at most half of the runs at every size measured (N = 2, 100)"
    assert formation_phrase([_cell(2, 2, 2), _cell(10, 7, 7)]) == \
        "in every run at every size measured (N = 2, 10)"
    assert formation_phrase([_cell(2, 2, 2), _cell(10, 6, 7)]) == \
        "in most runs at every size measured (N = 2, 10)"
    assert formation_phrase([_cell(2, 0, 5), _cell(10, 4, 5)]) == \
        "in most runs only at N = 10 (of N = 2, 10)"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    figures = all_figures()
    ctx = Context(results=REPO / "results", figures=tmp_path_factory.mktemp("figures"))
    return {name: figures[name].render(ctx) for name in (*TOPICS, "findings-summary")}


@pytest.mark.parametrize("name", TOPICS)
def test_each_topic_states_a_finding_with_runs_a_plot_and_a_table(
        rendered: dict[str, str], name: str) -> None:
    text = rendered[name]
    assert text.startswith("**Finding")
    assert re.search(r"!\[[^]]+\]\(figures/findings-[a-z]+\.svg\)", text)
    assert re.search(r"^\|---", text, re.M), "no table"
    # every number of the claim rests on stated runs or seeds
    claim = text.split("\n\n")[0]
    assert re.search(r"one run|median of \d+ (runs|seeds)|\d+ of \d+ (runs|seeds)|all \d+ "
                     r"(runs|seeds)", claim)


def test_every_count_of_runs_on_the_page_carries_its_wilson_interval(
        rendered: dict[str, str]) -> None:
    for name, text in rendered.items():
        for m in re.finditer(r"\b\d+ of \d+ (runs?|seeds?)\b", text):
            assert text[m.end():].startswith(" (95 % Wilson interval"), (name, m.group(0))


def test_the_page_prints_no_none_as_an_answer_and_no_construction_claim(
        rendered: dict[str, str]) -> None:
    for text in rendered.values():
        assert not re.search(r"\bnone\b", text, re.I)
        assert "removes the defect by construction" not in text


def test_the_plots_tell_real_from_simulated(tmp_path: Path) -> None:
    figures = all_figures()
    ctx = Context(results=REPO / "results", figures=tmp_path)
    for name in TOPICS:
        figures[name].render(ctx)
    for svg in ("findings-herd.svg", "findings-zombie.svg", "findings-outcome.svg"):
        body = (tmp_path / svg).read_text()
        assert "real" in body and "simulated" in body, svg
    assert "real" in (tmp_path / "findings-alternatives.svg").read_text()


def test_the_summary_has_a_row_per_defect(rendered: dict[str, str]) -> None:
    rows = [line for line in rendered["findings-summary"].splitlines()
            if line.startswith("| (")]
    assert [r.split("|")[1].strip()[:3] for r in rows] == ["(a)", "(b)", "(b)", "(c)"]


def test_the_page_is_short_and_linked_from_the_readme() -> None:
    page = (REPO / "docs" / "findings.md").read_text()
    assert len(page.splitlines()) < 400
    for method in ("scale.md", "split-brain-at-scale.md", "comparison.md", "leader.md",
                   "brokers.md", "validation.md"):
        assert f"]({method})" in page, method
    head = (REPO / "README.md").read_text().splitlines()[:40]
    assert any("(docs/findings.md)" in line for line in head)


def test_todays_answer_names_its_broker_and_the_heartbeat_of_every_figure(
        rendered: dict[str, str]) -> None:
    """Under KIP-848 a change reaches a member in its next heartbeat answer, so a time without
    its heartbeat interval says nothing: each row and the claim carry it."""
    text = rendered["findings-today"]
    claim = text.split("\n\n")[0]
    assert "Apache Kafka 4.0.2" in claim
    assert re.search(r"at 1000 ms heartbeats and [^;]+ at the broker's default of 5000 ms", claim)
    rows = [line for line in text.splitlines() if line.startswith("| ") and " ms |" in line]
    assert rows and all(re.match(r"\| (1000|5000) ms \| ", row) for row in rows)
    assert {"consumer-uniform", "eager-range"} <= {row.split(" | ")[1] for row in rows}
    assert claim.endswith("Records lost over all 132 runs on this broker: 0.")
