"""Verdicts and headings the docs print: one goal rule for the benchmarks, the N range of the
KIP section from its runs, attempts compared per member, duplicates per episode."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from zkconsumer.results import capture, write_provenance
from zkconsumer.results.figures.benchmarks import Goal, shown, throughput
from zkconsumer.results.figures.comparison import (
    attempts_per_member,
    kip_heading,
    members_after,
)
from zkconsumer.results.figures.reliability import duplicates_per_episode
from zkconsumer.results.registry import Context

AT_LEAST = Goal(0.95, at_least=True)


def test_a_median_below_the_goal_is_not_met_and_does_not_print_as_the_goal() -> None:
    assert not AT_LEAST.met(0.9463)
    assert AT_LEAST.verdict(0.9463) == "**not met**"
    assert shown(0.9463, AT_LEAST) == "0.946"


def test_a_median_at_or_above_the_goal_is_met() -> None:
    assert AT_LEAST.met(0.95) and AT_LEAST.met(0.9529)
    assert AT_LEAST.verdict(0.9529) == "met"
    assert shown(0.9529, AT_LEAST) == "0.953"
    assert shown(0.95, AT_LEAST) == "0.95"
    assert shown(0.83, AT_LEAST) == "0.83"


def test_an_upper_bound_goal_is_strict() -> None:
    cpu = Goal(60.0, at_least=False, unit=" s")
    assert cpu.met(59.99) and not cpu.met(60.0)
    assert cpu.describe() == "< 60 s"
    assert AT_LEAST.describe() == "≥ 0.95"


def _throughput_run(folder: Path, connector_s: list[float]) -> None:
    folder.mkdir(parents=True)
    with open(folder / "rounds.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["round", "path", "steady_s", "end_to_end_s", "cpu_s"])
        for i, conn in enumerate(connector_s, 1):
            w.writerow([i, "bare", 1.0, 1.1, 0.5])
            w.writerow([i, "connector", conn, conn + 0.1, 0.55])
    (folder / "summary.json").write_text(json.dumps({
        "c_extension": True, "connector_path": "connector", "messages": 1000, "partitions": 4,
        "rounds": len(connector_s), "target": 0.95, "value_bytes": 100}))
    write_provenance(folder, capture("python benchmarks/throughput.py --rounds 3"))


def test_both_throughput_blocks_judge_by_the_same_rule(tmp_path: Path) -> None:
    # ratios bare / connector: 1/1.0567 = 0.9463 (median) and 1/1.0494 = 0.9529 (median)
    _throughput_run(tmp_path / "benchmarks" / "throughput", [1.0, 1.0567, 1.2])
    ctx = Context(results=tmp_path, figures=tmp_path / "figures")
    text = throughput(ctx)
    assert "median of the 3 per-round ratios: 0.946**: goal **not met**" in text
    _throughput_run(tmp_path / "other" / "benchmarks" / "throughput", [1.0, 1.0494, 1.2])
    text = throughput(Context(results=tmp_path / "other", figures=tmp_path / "figures"))
    assert "median of the 3 per-round ratios: 0.953**: goal met" in text


def test_the_kip_heading_takes_its_range_of_n_from_the_runs() -> None:
    assert kip_heading([4, 8, 16]) == "## KIP-345 and KIP-429 on the real coordinator, N = 4 to 16"
    assert kip_heading([8]) == "## KIP-345 and KIP-429 on the real coordinator, N = 8"
    assert kip_heading([]) == "## KIP-345 and KIP-429 on the real coordinator"


def test_attempts_are_compared_per_member_on_both_sides() -> None:
    assert members_after(16, "join") == 17
    assert members_after(4, "crash") == 3
    cell = {"members": 16, "event": "join", "real_attempts": 35.0, "sim_attempts": 2.0}
    assert attempts_per_member(cell) == "2.06 (35 ÷ 17) / 2"


def test_duplicates_per_episode_names_causes_without_episodes() -> None:
    episodes = [{"cause": "kill", "duplicates": d} for d in ("1", "3", "92")]
    episodes.append({"cause": "leave", "duplicates": "22"})
    line = duplicates_per_episode(episodes)
    assert line == ("Duplicates per episode, by cause: kill: median 3, range 1–92 (3 episodes); "
                    "expire: no episode; pause: no episode; zk-leader-kill: no episode; "
                    "leave: 22 (one episode).")


def test_a_plot_title_says_how_many_real_runs_each_size_is() -> None:
    from zkconsumer.results.figures.comparison import real_label

    rows = [{"n": 4, "runs": 3}, {"n": 8, "runs": 1}, {"n": 16, "runs": 1}]
    assert real_label(rows) == "real: median of 3 runs at N = 4; one run at N = 8, 16"
