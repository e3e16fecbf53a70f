"""Plan 29's page: the N = 96 ZooKeeper cells under both settle rules, and the N = 12 join's
share in two sets of one session, read from the committed runs."""

from __future__ import annotations

import csv
from pathlib import Path

from zkconsumer.results.distributions import CellKey
from zkconsumer.results.figures.coverage_validation import ended_early
from zkconsumer.results.figures.settle_validation import (
    join_share_29,
    leader_96_phases_29,
    settle_96,
)
from zkconsumer.results.proportions import homogeneity_p
from zkconsumer.results.real_runs import sweep_cell
from zkconsumer.results.registry import Context

REPO = Path(__file__).resolve().parents[2]
CTX = Context(REPO / "results", REPO / "docs" / "figures")


def _joins(plan: int) -> list[dict[str, str]]:
    folder = REPO / f"results/scale/validation-{plan}/tansu-96/zk-range-n96"
    with open(folder / "sweep.csv", newline="") as fh:
        return [r for r in csv.DictReader(fh) if r["event"] == "join"]


def test_each_plan_s_n96_join_row_names_its_recorded_rule_and_counts_its_early_ends() -> None:
    text = settle_96(CTX)
    for plan, rule in ((28, "plain"), (29, "zookeeper-rebalances-ended")):
        joins = _joins(plan)
        unsettled = sum(not r["time_to_stable_s"] for r in joins)
        early = sum(ended_early(r, 96) for r in joins)
        assert (f"| zk-range | join | {plan}: {rule} | {unsettled} of {len(joins)} | "
                f"{early} of {len(joins)} |") in text
    # the newer rule's whole point: no join of plan 29 closed mid-rebalance
    assert sum(ended_early(r, 96) for r in _joins(29)) == 0


def test_the_two_sets_shares_and_their_test_come_from_their_own_sweeps() -> None:
    text = join_share_29(CTX)
    counts = []
    for name in ("tansu-a", "tansu-b"):
        key = CellKey(name, "tansu-0.6.0", "zk-range", 12, 24, "join")
        cell = [run for _, run in sweep_cell(
            REPO / f"results/scale/validation-29/{name}/zk-range-n12", key)]
        counts.append((sum(r.multi for r in cell), len(cell)))
        assert f"| 29, {name} | {len(cell)} | {counts[-1][0]} of {len(cell)} [" in text
        assert f"| 29, {name} | {len(cell)} | {counts[-1][0]} |" in text  # its race row
    assert f"probability {homogeneity_p(counts):.4f} if their" in text


def test_the_leader_phases_table_shows_both_plans_real_members_and_the_model() -> None:
    text = leader_96_phases_29(CTX)
    for plan in (28, 29):
        assert f"| 96 (plan {plan}) | leave | real: " in text
        assert f"| 96 (plan {plan}) | leave | model: " in text
