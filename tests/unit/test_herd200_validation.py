"""Plan 30's page: the ZooKeeper designs' herd from 12 to 200 members, from the scorings."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from zkconsumer.results.figures.findings_text import exponent
from zkconsumer.results.figures.herd200_validation import SIZES, herd_200
from zkconsumer.results.figures.scale_distributions import load_scores
from zkconsumer.results.registry import Context

REPO = Path(__file__).resolve().parents[2]
CTX = Context(REPO / "results", REPO / "docs" / "figures")


def test_the_exponent_is_the_power_of_n_between_two_sizes() -> None:
    assert exponent((10, 100.0), (20, 400.0)) == pytest.approx(2.0)
    assert exponent((48, 3000.0), (96, 3000.0)) == 0.0
    assert exponent((12, 0.0), (48, 5.0)) is None  # no power takes 0 anywhere


def test_each_row_reads_its_plans_cell_and_the_size_before() -> None:
    text = herd_200(CTX)
    for protocol, sizes in SIZES.items():
        cells = []
        for n, plan in sizes:
            scores, _ = load_scores(CTX, plan)
            cell = next(s for s in scores if s.key.broker.startswith("tansu")
                        and (s.key.protocol, s.key.members, s.key.event)
                        == (protocol, n, "join"))
            cells.append(cell)
            assert (f"| {protocol} | join | {n} ({plan}) | {cell.real_requests:,.0f} / "
                    f"{cell.sim_requests:,.0f} |") in text
        small, large = cells[-2], cells[-1]
        k = math.log(large.real_requests / small.real_requests) / math.log(
            large.key.members / small.key.members)
        first = cells[0]  # the smallest size has no size before it
        assert (f"| {first.real_requests:,.0f} / {first.sim_requests:,.0f} | – |") in text
        assert f"| {large.real_requests:,.0f} / {large.sim_requests:,.0f} | {k:.2f} / " in text


def test_the_findings_name_the_largest_real_herd_and_its_growth() -> None:
    from zkconsumer.results.figures.findings import largest_herd, largest_herd_clause

    points = largest_herd(CTX)
    assert [p.members for p in points] == [12, 48, 96, 200]
    assert [p.requests.n for p in points] == [20, 10, 10, 5]  # both N = 12 sets of plan 29
    before, last = points[-2], points[-1]
    k = exponent((96, before.requests.median), (200, last.requests.median))
    clause = largest_herd_clause(CTX)
    assert f"to {last.requests.text(0)} at N = 200, as N^{k:.2f} from N = 96" in clause
