"""The herd effect, measured on the real servers.

A stable group of N ZooKeeper-coordinated consumers, one more joins: every member's watch fires
and every member runs a whole rebalance, reading every registration, so the requests one join
costs grow like N² (here with N = 4..64 on 8 partitions: exactly the simulator's cost table
when no claim conflicts, and a log-log slope above linear, near 2 between the largest sizes).
The ZooKeeper server's own count (mntr, pings taken out) must agree with the clients' counters.
The CLI writes the lab's results.json shape with the herd's fields, a summary and two plots.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from zkconsumer.cli import experiment
from zkconsumer.lab.herd.run import run_herd
from zkconsumer.lab.herd.spec import HERD_TIMING, HerdSpec
from zkconsumer.sim.costs import clean_join_requests

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SIZES = (4, 8, 16, 32, 64)


def cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="zkconsumer")
    experiment.register(parser.add_subparsers(dest="verb"))
    args = parser.parse_args(["experiment", "herd", *argv])
    return int(args.func(args))


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_one_join_costs_every_member_a_rebalance_and_grows_superlinearly(
        broker: object, tmp_path: Path) -> None:
    # Short timing so that the sweep fits the test budget: the costs counted do not depend on
    # it (backoff only spaces retries; quiet_s is how long "settled" must hold).
    timing = replace(HERD_TIMING, rebalance_backoff_ms=200, quiet_s=0.6,
                     auto_commit_interval_ms=300)
    result = run_herd(HerdSpec(protocols=("zk-range",), members=SIZES, partitions=8,
                               events=("join",), timing=timing,
                               bootstrap=broker.bootstrap,  # type: ignore[attr-defined]
                               dedicated_zookeeper=True, ping_window_s=0.7,
                               out_dir=str(tmp_path)))
    runs = {r.members: r for r in result.runs}
    assert sorted(runs) == list(SIZES)
    for n, r in runs.items():
        m = r.metrics
        assert r.status == "ok" and r.reason is None, (n, r.reason, r.details.get("traceback"))
        assert (r.scenario, r.event, r.params["size_before"], r.params["size_after"]) == (
            "herd", "join", n, n + 1)
        # Herd: all N + 1 members rebalanced on one join, N of them told by a watch.
        assert m["members_rebalanced"] == n + 1, (n, r.details["members_rebalanced"])
        assert m["rebalance_attempts"] >= n + 1
        assert m["watch_notifications"] >= n
        assert m["watch_notifications"] == m["watch_notifications_server"]
        # ...each reading every registration: at least (N+1)² getData.
        assert m["requests_by_type"]["getData"] >= (n + 1) ** 2, (n, m["requests_by_type"])
        assert m["failed_rebalances"] == 0
        assert m["conflicting_decisions"] == 0      # one join, one view: all decided alike
        assert m["time_to_stable_s"] is not None
        # The server saw what the clients counted (pings, connects, the mntr itself out).
        assert m["requests_disagreement"] <= 0.10, (n, m["coordination_requests"],
                                                    m["zk_requests_server"],
                                                    r.details["zk_server"])
        # A conflict-free join with a member per partition or more costs exactly what the
        # simulator's cost table says: (N+1)² + 11(N+1) + 53 requests on 8 partitions.
        if m["conflicts"] == 0 and n + 1 >= 8:
            assert m["coordination_requests"] == clean_join_requests(n, 8), (n, m)
    fit = result.fit("zk-range", "join")
    assert fit is not None
    assert [p[0] for p in fit["points"]] == list(SIZES)
    # Superlinear: over all sizes the linear term still weighs (slope ~1.3 with these
    # constants); between the two largest sizes the quadratic term dominates.
    assert fit["slope"] > 1.2 and fit["server_slope"] > 1.2, fit
    requests = {n: runs[n].metrics["coordination_requests"] for n in SIZES}
    local = math.log(requests[64] / requests[32]) / math.log(2)
    assert local > 1.6, requests
    # 64 members in threads: the process stayed within sane thread and descriptor counts.
    big = runs[64].details
    assert big["threads"] < 1500 and (big["open_fds"] is None or big["open_fds"] < 5000)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_cli_writes_results_summary_and_plots_for_leaves(broker: object, tmp_path: Path
                                                        ) -> None:
    out = tmp_path / "herd"
    code = cli("--members", "2,4", "--partitions", "4", "--protocols", "zk-range",
               "--events", "leave", "--backoff-ms", "200", "--quiet-s", "0.6",
               "--bootstrap", broker.bootstrap,  # type: ignore[attr-defined]
               "--out", str(out), "--json", str(tmp_path / "copy.json"), "--no-progress")
    assert code == 0
    doc = json.loads((out / "results.json").read_text())
    assert json.loads((tmp_path / "copy.json").read_text())["fits"] == doc["fits"]
    assert [(r["members"], r["event"]) for r in doc["runs"]] == [(2, "leave"), (4, "leave")]
    for r in doc["runs"]:
        n, m = r["members"], r["metrics"]
        assert r["status"] == "ok" and r["scenario"] == "herd", r
        assert (r["params"]["size_before"], r["params"]["size_after"]) == (n + 1, n)
        # The N who stay all rebalance, told by their watches; the leaver is not counted.
        assert m["members_rebalanced"] == n and m["watch_notifications"] >= n
        assert m["conflicting_decisions"] == 0
        assert m["requests_disagreement"] <= 0.10, (m, r["details"]["zk_server"])
    fit = doc["fits"]["zk-range/leave"]
    assert isinstance(fit["slope"], float)
    assert [p[0] for p in fit["points"]] == [2, 4]
    assert fit["points"][1][1] > fit["points"][0][1]    # more members, more requests
    summary = (out / "summary.md").read_text()
    assert "| zk-range/leave |" in summary and "zkconsumer experiment herd" in summary
    for png in ("herd-requests.png", "herd-time-to-stable.png"):
        data = (out / png).read_bytes()
        assert data[:8] == PNG_MAGIC and len(data) > 5000, png


def test_cli_rejects_bad_sizes_before_starting_anything(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    with pytest.raises(SystemExit):
        cli("--members", "4,x", "--out", str(tmp_path))
    assert "group sizes" in capsys.readouterr().err
    assert cli("--members", "4,4", "--out", str(tmp_path / "o"), "--no-progress") == 2
    assert "twice" in capsys.readouterr().err
