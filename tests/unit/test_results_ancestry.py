"""Result folders are placed before or after a fix from real git history, and the split-brain
table marks exactly the rows measured without it."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import pytest

from zkconsumer.results.ancestry import classify, git_is_ancestor, read_fix, write_fix
from zkconsumer.results.figures.splitbrain import real_runs
from zkconsumer.results.figures.splitbrain_validation import ancestry
from zkconsumer.results.registry import Context

ROW = {"mode": "real", "scenario": "zombie", "members": "100", "partitions": "64", "seed": "1",
       "applicable": "true", "reason": "", "double_owned_partition_s": "0.0",
       "zombie_deliveries": "0", "delivered_twice": "0", "offsets_went_back": "0",
       "zombie_stop_s": "4.5", "conflicts": "0", "rollbacks": "0", "attempts_max": "3",
       "stale_decisions": "0", "rebalances_given_up": "0", "gave_up_members": "0",
       "unowned_partition_s": "0.0", "time_to_stable_s": "9.0", "verify_ok": "true",
       "repaired": "false", "lost": "0", "rebalance_max_retries": "10"}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                          cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


def _commit(repo: Path, name: str) -> str:
    (repo / name).write_text(name)
    _git(repo, "add", name)
    _git(repo, "commit", "-q", "-m", name)
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture()
def history(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """before -> fix -> after on one line, and a side branch forked before the fix."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "trunk")
    before = _commit(repo, "before")
    fix = _commit(repo, "fix")
    after = _commit(repo, "after")
    _git(repo, "checkout", "-q", "-b", "side", before)
    side = _commit(repo, "side")
    return repo, {"before": before, "fix": fix, "after": after, "side": side}


def test_a_run_contains_the_fix_only_when_its_revision_descends_from_it(history) -> None:
    repo, c = history
    got = classify({"run-before": c["before"], "run-fix": c["fix"],
                    "run-after": c["after"] + "-dirty", "run-side": c["side"]},
                   git_is_ancestor(repo, c["fix"]))
    assert got == {"run-after": True, "run-before": False, "run-fix": True, "run-side": False}


def test_a_revision_missing_from_history_is_an_error_not_a_pre_fix_run(history) -> None:
    repo, c = history
    with pytest.raises(ValueError, match="cannot tell whether .* ancestor of 1234567"):
        classify({"run-x": "1234567" * 5 + "12345"}, git_is_ancestor(repo, c["fix"]))


def test_a_run_without_a_revision_is_named(history) -> None:
    repo, c = history
    with pytest.raises(ValueError, match="'real-x' has no git revision"):
        classify({"real-x": "unknown"}, git_is_ancestor(repo, c["fix"]))


def _real_run(base: Path, name: str, revision: str, protocol: str) -> None:
    folder = base / name
    folder.mkdir(parents=True)
    with open(folder / "sweep.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(ROW) + ["protocol"])
        w.writeheader()
        w.writerow({**ROW, "protocol": protocol})
    (folder / "meta.json").write_text(json.dumps({"revision": revision, "date": name,
                                                  "command": f"run {name}", "machine": {}}))


def test_the_real_table_marks_the_leader_rows_measured_before_the_fix(tmp_path: Path) -> None:
    base = tmp_path / "results" / "splitbrain"
    _real_run(base, "real-a", "a" * 40, "zk-leader-range")
    _real_run(base, "real-b", "b" * 40, "zk-leader-range")
    _real_run(base, "real-c", "a" * 40, "zk-range")
    write_fix(base / "fix-leader-watch", "f" * 40, "the fix", ["zk-leader-range"],
              {"real-a": "a" * 40, "real-b": "b" * 40, "real-c": "a" * 40},
              {"real-a": False, "real-b": True, "real-c": False}, "classify")
    assert read_fix(base / "fix-leader-watch").predates("real-c", "zk-range") is False
    ctx = Context(results=tmp_path / "results", figures=tmp_path / "fig")
    text = real_runs(ctx)
    rows = [line for line in text.splitlines() if line.startswith("| zombie")]
    assert [r.split(" | ")[1] + " " + r.rstrip(" |").split(" | ")[-1] for r in rows] == [
        "zk-leader-range `real-a` †", "zk-leader-range `real-b`", "zk-range `real-c`"]
    assert "fix ffffffffff (\"the fix\")" in text
    assert ("Rows before it: zk-leader-range zombie N = 100 (`real-a`). "
            in ancestry(ctx))


def test_a_real_run_missing_from_the_classification_is_a_clear_error(tmp_path: Path) -> None:
    base = tmp_path / "results" / "splitbrain"
    _real_run(base, "real-a", "a" * 40, "zk-leader-range")
    _real_run(base, "real-new", "c" * 40, "zk-leader-range")
    write_fix(base / "fix-leader-watch", "f" * 40, "the fix", ["zk-leader-range"],
              {"real-a": "a" * 40}, {"real-a": False}, "classify")
    with pytest.raises(KeyError, match="'real-new' is not classified against fix ffffffffff"):
        real_runs(Context(results=tmp_path / "results", figures=tmp_path / "fig"))


def _sweep(folder: Path, date: str, rows: list[dict[str, str]]) -> None:
    folder.mkdir(parents=True)
    full = [{**ROW, "partitions": "64", **r} for r in rows]
    with open(folder / "sweep.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(full[0]))
        w.writeheader()
        w.writerows(full)
    (folder / "meta.json").write_text(json.dumps({"date": date, "revision": "r"}))


def test_validation_scores_the_newest_run_of_a_cell_and_never_a_pre_fix_row(tmp_path) -> None:
    from zkconsumer.spark.splitbrain.validate import load_rows

    old, new = tmp_path / "real-old", tmp_path / "real-new"
    _sweep(old, "2026-01-01T00:00:00Z", [
        {"protocol": "zk-leader-range", "scenario": "storm", "lost": "7"},
        {"protocol": "zk-range", "scenario": "storm", "time_to_stable_s": "19.0"},
        {"protocol": "zk-range", "scenario": "zombie", "time_to_stable_s": "29.0"},
        {"protocol": "zk-leader-range", "scenario": "zombie", "time_to_stable_s": "3.0"}])
    _sweep(new, "2026-01-02T00:00:00Z", [
        {"protocol": "zk-range", "scenario": "storm", "time_to_stable_s": "40.0"},
        {"protocol": "eager-range", "scenario": "zombie", "applicable": "false"}])
    write_fix(tmp_path / "fix", "f" * 40, "the fix", ["zk-leader-range"],
              {"real-old": "a", "real-new": "b"}, {"real-old": False, "real-new": True}, "c")
    got = load_rows([new, old], read_fix(tmp_path / "fix"))
    assert [(r["protocol"], r["scenario"], r["run"], r["time_to_stable_s"]) for r in got] == [
        ("zk-range", "storm", "real-new", "40.0"), ("zk-range", "zombie", "real-old", "29.0")]


def test_the_validation_block_names_each_unscored_plan_cell_with_its_reason(tmp_path) -> None:
    from zkconsumer.results.figures.splitbrain_validation import (
        PLAN_CELLS,
        first_split_brain_scoring,
    )

    base = tmp_path / "results" / "splitbrain"
    _sweep(base / "real-n200", "2026-01-01T00:00:00Z", [
        {"protocol": "zk-leader-range", "members": "200",
         "reason": "failed: interrupted after 800 s, before the run finished"}])
    (base / "validation").mkdir()
    scored = [(sc, n, p) for sc, n, p in PLAN_CELLS
              if not (sc == "zombie" and n == 200) and (sc, n, p) != ("storm", 100, "zk-range")]
    with open(base / "validation" / "checks.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["protocol", "scenario", "members", "seed", "metric", "real", "sim", "rule",
                    "ok", "run"])
        for sc, n, p in scored:
            w.writerow([p, sc, n, 1, "conflicts", 0, 0, "zero", True, "real-x"])
    ctx = Context(results=tmp_path / "results", figures=tmp_path / "fig")
    text = first_split_brain_scoring(ctx)
    assert f"**{len(scored)} of {len(scored)} cells**" in text
    tail = text[text.index("Cells of the plan without a score"):].splitlines()
    assert tail[:5] == [
        "Cells of the plan without a score (3 of 20):", "",
        "- zk-range zombie N = 200: not run",
        "- zk-leader-range zombie N = 200: failed: interrupted after 800 s, before the run "
        "finished (`real-n200`)",
        "- zk-range storm N = 100: not run"]
