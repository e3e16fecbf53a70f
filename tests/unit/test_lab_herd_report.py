"""The herd's fits, summary and plots from hand-made results (no servers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zkconsumer.lab.herd.report import read_herd_results, summary_table, write_herd_outputs
from zkconsumer.lab.herd.spec import HerdResult, HerdSpec, fit_runs
from zkconsumer.lab.runs import RunResult

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(protocol: str, event: str, n: int, requests: int | None, status: str = "ok",
        server: int | None = None) -> RunResult:
    metrics = {} if status != "ok" else {
        "coordination_requests": requests, "zk_requests_server": server,
        "requests_disagreement": None if server is None else abs(server - requests) / requests,
        "watch_notifications": n if server is not None else None, "rebalance_attempts": n + 1,
        "members_rebalanced": n + 1, "conflicts": 0, "rollbacks": 0,
        "time_to_stable_s": 0.1 * n, "coordination_s": 0.12 * n, "failed_rebalances": 0,
        "conflicting_decisions": 0 if server is not None else None}
    return RunResult(protocol=protocol, members=n, partitions=8, event=event, repeat=0,
                     status=status, reason=None if status == "ok" else "boom",
                     metrics=metrics, scenario="herd",
                     params={"n": n, "size_before": n, "size_after": n + 1})


def sweep() -> list[RunResult]:
    runs = [run("zk-range", "join", n, n * n + 10 * n + 24, server=n * n + 10 * n + 25)
            for n in (4, 8, 16, 32, 64)]
    runs += [run("eager-range", "join", n, 4 * n + 10) for n in (4, 8, 16)]
    runs.append(run("eager-range", "join", 32, None, status="failed"))
    return runs


def test_fits_per_protocol_and_event_skip_failed_points() -> None:
    fits = fit_runs(sweep())
    zk, eager = fits["zk-range/join"], fits["eager-range/join"]
    assert 1.3 < zk["slope"] < 2 and zk["server_slope"] == pytest.approx(zk["slope"], abs=0.01)
    assert [p[0] for p in eager["points"]] == [4, 8, 16] and eager["server_slope"] is None
    assert eager["slope"] < 1


def test_outputs_have_the_lab_shape_plus_fits(tmp_path: Path) -> None:
    runs = sweep()
    result = HerdResult(HerdSpec(protocols=("zk-range", "eager-range"), events=("join",)),
                        runs, fit_runs(runs))
    written = write_herd_outputs(result, tmp_path, command="zkconsumer experiment herd ...")
    names = {p.name for p in written}
    assert names == {"results.json", "summary.md", "herd-requests.png",
                     "herd-time-to-stable.png"}
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["scenario"] == "herd" and set(doc["fits"]) == {"zk-range/join",
                                                               "eager-range/join"}
    assert all(r["scenario"] == "herd" and "params" in r for r in doc["runs"])
    again, fits = read_herd_results(tmp_path / "results.json")
    assert [r.members for r in again] == [r.members for r in runs] and fits == doc["fits"]
    summary = (tmp_path / "summary.md").read_text()
    assert "| zk-range/join |" in summary and "zkconsumer experiment herd" in summary
    assert "eager-range/join at N=32: failed: boom" in summary
    for png in ("herd-requests.png", "herd-time-to-stable.png"):
        data = (tmp_path / png).read_bytes()
        assert data[:8] == PNG_MAGIC and len(data) > 5000


def test_summary_rows_show_sizes_and_not_applicable_cells() -> None:
    table = summary_table(sweep())
    row = next(line for line in table.splitlines() if line.startswith("| eager-range | join | 4 "))
    assert "| 4→5 |" in row and "| — |" in row        # no ZooKeeper count for a broker group


def test_movement_columns_appear_for_sweeps_that_measured_them() -> None:
    old = [run("consumer-uniform", "join", 4, 36)]
    assert "| moved |" not in summary_table(old)
    new = [run("consumer-uniform", "join", 4, 36)]
    new[0].metrics.update({"members_paused": 4, "members_idle": 0, "partitions_revoked": 25,
                           "partitions_moved": 25})
    table = summary_table(new)
    head, _, row = table.splitlines()[:3]
    assert "| rebalanced | paused | idle | revoked | moved | conflicts |" in head
    assert "| 5 | 4 | 0 | 25 | 25 | 0 |" in row
