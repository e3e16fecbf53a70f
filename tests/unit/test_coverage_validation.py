"""Plan 28's page: which N = 96 joins the lab ended before their group had rebalanced."""

from __future__ import annotations

from pathlib import Path

from zkconsumer.results.figures.coverage_validation import early_ended_96, ended_early
from zkconsumer.results.registry import Context


def row(tts: str, attempts: str) -> dict[str, str]:
    return {"time_to_stable_s": tts, "attempts_total": attempts}


def test_a_join_without_a_time_to_stable_ended_early_whatever_its_attempts() -> None:
    assert ended_early(row("", "97"), 96)


def test_a_join_where_fewer_members_than_the_group_attempted_ended_early() -> None:
    assert ended_early(row("0.0", "39"), 96)
    assert not ended_early(row("4.169", "97"), 96)  # all 96 and the joiner
    assert not ended_early(row("4.169", "98"), 96)  # one member twice


def test_the_block_counts_the_committed_sets_runs_by_that_rule() -> None:
    import csv

    repo = Path(__file__).resolve().parents[2]
    text = early_ended_96(Context(repo / "results", repo / "docs" / "figures"))
    folder = repo / "results/scale/validation-28/tansu-96/zk-range-n96"
    with open(folder / "sweep.csv", newline="") as fh:
        joins = [r for r in csv.DictReader(fh) if r["event"] == "join"]
    early = sum(ended_early(r, 96) for r in joins)
    assert f"| scored | zk-range | {len(joins)} | {early} |" in text
