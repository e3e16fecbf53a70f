"""``experiment compare`` on Apache Kafka 4.0 (../shared/kafka-4.0): the KIP-848 group, an eager
broker group and the legacy ZooKeeper group against one KRaft broker in one run.

What a user of the lab would check: the broker the lab started (no ZooKeeper of its own) serves
all three, nothing is lost, and on a join the KIP-848 group stops only the partitions that move,
at the members that give them up, while the eager and the ZooKeeper groups stop everybody.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from zkconsumer.cli import experiment

PROTOCOLS = ("consumer-uniform", "eager-range", "zk-range")


def compare(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="zkconsumer")
    experiment.register(parser.add_subparsers(dest="verb"))
    args = parser.parse_args(["experiment", "compare", *argv])
    return int(args.func(args))


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_join_on_kafka_4_stops_only_what_moves_under_kip848(kafka_build: Any,
                                                              tmp_path: Path) -> None:
    home = kafka_build("4.0")
    out = tmp_path / "lab"
    code = compare("--members", "4", "--partitions", "8", "--events", "join",
                   "--protocols", ",".join(PROTOCOLS), "--session-timeout-ms", "6000",
                   "--consumer-heartbeat-ms", "1000", "--broker", f"kafka:{home}",
                   "--out", str(out), "--no-progress")
    assert code == 0

    meta = json.loads((out / "meta.json").read_text())
    assert meta["broker"] == "apache-kafka-4.0.2"
    assert meta["extra"]["consumer_heartbeat_interval_ms"] == 1000
    runs = {r["protocol"]: r for r in json.loads((out / "results.json").read_text())["runs"]}
    assert sorted(runs) == sorted(PROTOCOLS)
    for name, r in runs.items():
        assert r["status"] == "ok", (name, r["reason"])
        assert r["details"]["broker"] == "apache-kafka-4.0.2"
        assert r["metrics"]["lost"] == 0, (name, r["details"])
        assert r["metrics"]["time_to_stable_s"] is not None, name

    kip848 = runs["consumer-uniform"]
    assert kip848["details"]["group_protocol"] == "consumer"
    assert kip848["details"]["consumer_heartbeat_interval_ms"] == 1000
    revoked = kip848["details"]["extra_metrics"]["partitions_revoked"]
    # 8 partitions over 5 members: the newcomer takes one or two, nothing else moves.
    assert 1 <= revoked <= 2
    assert 1 <= kip848["metrics"]["members_paused"] <= revoked
    assert kip848["metrics"]["members_idle"] == 0
    eager = runs["eager-range"]
    assert eager["details"]["extra_metrics"]["partitions_revoked"] == 8
    assert eager["metrics"]["members_paused"] == eager["metrics"]["members_idle"] == 4
    assert runs["zk-range"]["metrics"]["members_paused"] == 4
