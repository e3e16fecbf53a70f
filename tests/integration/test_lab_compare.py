"""The lab's must-show scenario: ``experiment compare`` with 4 members and 8 partitions, one join
and one crash, for zk-range, eager-range and cooperative-sticky, on the real servers.

What a user of the lab would check in the output: nothing is lost under any protocol, the legacy
ZooKeeper protocol stops every member on a join, incremental cooperative rebalancing stops fewer
members than eager, and the plots are real PNG files.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from zkconsumer.cli import experiment

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
PROTOCOLS = "zk-range,eager-range,cooperative-sticky"


def compare(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="zkconsumer")
    experiment.register(parser.add_subparsers(dest="verb"))
    args = parser.parse_args(["experiment", "compare", *argv])
    return int(args.func(args))


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_compare_join_and_crash_across_three_protocols(zk_connect: str, broker: object,
                                                       tmp_path: Path) -> None:
    out = tmp_path / "lab"
    code = compare("--members", "4", "--partitions", "8", "--events", "join,crash",
                   "--protocols", PROTOCOLS, "--session-timeout-ms", "3000",
                   "--zookeeper", zk_connect, "--bootstrap", broker.bootstrap,  # type: ignore[attr-defined]
                   "--out", str(out), "--json", str(tmp_path / "copy.json"), "--no-progress",
                   # two cells at once: what is checked here is who stopped and what was lost,
                   # which a neighbour's load does not change (the timings are not asserted)
                   "--parallel", "2")
    assert code == 0

    runs = json.loads((out / "results.json").read_text())["runs"]
    by = {(r["protocol"], r["event"]): r for r in runs}
    assert sorted(by) == sorted((p, e) for p in PROTOCOLS.split(",") for e in ("join", "crash"))
    for r in runs:
        assert r["status"] == "ok", (r["protocol"], r["event"], r["reason"])
        assert r["metrics"]["lost"] == 0, (r["protocol"], r["event"], r["details"])
        assert r["metrics"]["time_to_stable_s"] is not None, (r["protocol"], r["event"])

    zk_join = by[("zk-range", "join")]["metrics"]
    assert zk_join["members_paused"] == 4      # every member of the stable group of 4
    coop = by[("cooperative-sticky", "join")]["metrics"]["members_paused"]
    eager = by[("eager-range", "join")]["metrics"]["members_paused"]
    assert coop < eager
    # a crash is only noticed after the session timeout, whatever coordinates the group
    for p in PROTOCOLS.split(","):
        assert by[(p, "crash")]["metrics"]["partition_seconds_unavailable"] > 0

    for png in ("gantt-join.png", "gantt-crash.png", "metrics.png"):
        data = (out / png).read_bytes()
        assert data[:8] == PNG_MAGIC and len(data) > 5000, png
    summary = (out / "summary.md").read_text()
    assert "| zk-range | join |" in summary and "zkconsumer experiment compare" in summary
    assert json.loads((tmp_path / "copy.json").read_text())["runs"] == runs
