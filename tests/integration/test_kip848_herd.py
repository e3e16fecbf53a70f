"""The herd sweep and the Spark herd's real mode with KIP-848 groups on Apache Kafka 4.0
(../shared/kafka-4.0): what a user reads in their tables.

- ``experiment herd``: a KIP-848 group's requests per event include the ConsumerGroupHeartbeat
  requests its members sent (librdkafka's statistics have none), a join and the leave back move
  exactly the newcomer's share and leave nobody idle, and meta.json records the heartbeat the
  broker gave the group;
- ``spark herd --mode real``: the broker spec reaches the job, the KIP-848 members in the Spark
  task form and absorb a join, and the row counts their reconciliations and heartbeats.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path
from typing import Any

import pytest

from zkconsumer.cli import experiment
from zkconsumer.cli.main import build_parser


def herd(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="zkconsumer")
    experiment.register(parser.add_subparsers(dest="verb"))
    args = parser.parse_args(["experiment", "herd", *argv])
    return int(args.func(args))


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_herd_counts_kip848_heartbeats_and_moves_only_the_newcomers_share(
        kafka_build: Any, tmp_path: Path) -> None:
    home = kafka_build("4.0")
    out = tmp_path / "herd"
    code = herd("--members", "2", "--partitions", "4", "--protocols", "consumer-uniform",
                "--consumer-heartbeat-ms", "1000", "--broker", f"kafka:{home}",
                "--out", str(out), "--no-progress")
    assert code == 0

    meta = json.loads((out / "meta.json").read_text())
    assert meta["broker"] == "apache-kafka-4.0.2"
    assert meta["extra"]["consumer_heartbeat_interval_ms"] == 1000
    assert "--consumer-heartbeat-ms 1000" in meta["command"]
    runs = {r["event"]: r for r in json.loads((out / "results.json").read_text())["runs"]}
    assert sorted(runs) == ["join", "leave"]
    for event, r in runs.items():
        assert r["status"] == "ok", (event, r["reason"])
        m = r["metrics"]
        heartbeats = m["requests_by_type"]["ConsumerGroupHeartbeat"]
        # every member heartbeats at least once in a window of several seconds
        assert heartbeats >= 2, (event, m["requests_by_type"])
        assert m["coordination_requests"] == sum(m["requests_by_type"].values())
        assert m["requests_by_type"].get("JoinGroup", 0) == 0
        # 4 partitions, 2 -> 3 members and back: the newcomer's one partition moves, and the
        # members that keep theirs never stop.
        assert m["partitions_moved"] == 1, (event, m)
        assert m["members_idle"] == 0, (event, m)
    assert "| paused | idle | revoked | moved |" in (out / "summary.md").read_text()
    assert "heartbeat interval 1000 ms" in (out / "summary.md").read_text()


@pytest.fixture(scope="module")
def spark():
    from zkconsumer.spark.session import spark_session

    session = spark_session("local[2]", app="zkconsumer-tests-kip848", shuffle_partitions=2)
    yield session
    session.stop()


@pytest.mark.slow
@pytest.mark.timeout(1500)   # a hang guard: Spark, a KRaft node and the members share 2 cores
def test_the_spark_herd_runs_kip848_members_on_the_kafka_4_broker_it_starts(
        spark: Any, kafka_build: Any, tmp_path: Path) -> None:
    from zkconsumer.spark.herd.job import run

    home = kafka_build("4.0")
    out = tmp_path / "spark"
    args = build_parser().parse_args([
        "spark", "herd", "--mode", "real", "--members", "2", "--partitions", "4",
        "--protocols", "consumer-uniform", "--events", "join", "--seeds", "1", "--tasks", "1",
        "--quiet-s", "1", "--broker", f"kafka:{home}", "--consumer-heartbeat-ms", "1000",
        "--out", str(out)])
    assert run(args, spark) == 0

    meta = json.loads((out / "meta.json").read_text())
    assert meta["broker"] == "apache-kafka-4.0.2"
    assert meta["extra"]["consumer_heartbeat_interval_ms"] == 1000
    assert "--broker kafka:" in meta["command"] and "--consumer-heartbeat-ms 1000" in \
        meta["command"]
    with open(out / "sweep.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 1
    row = rows[0]
    assert (row["protocol"], row["event"], row["lost"]) == ("consumer-uniform", "join", "0")
    assert float(row["time_to_stable_s"]) > 0
    # one reconciliation per member at least, and heartbeats among the requests
    assert int(row["rebalance_attempts"]) >= 1
    assert int(row["coordination_requests"]) >= 3
    assert "KIP-848 heartbeat interval 1000 ms" in (out / "summary.md").read_text()

    # Where the formed group's schedules stood: the event no sooner than the quiet rule's
    # second after the formation's last change, each member placed against that change (the
    # member that made it at 0), at the broker's 1000 ms interval.
    from zkconsumer.spark.herd.formation_spread import run as spread

    table = tmp_path / "spread" / "formation-spread.csv"
    assert spread(build_parser().parse_args([
        "spark", "formation-spread", "--raw", str(out), "--out", str(table)]), spark) == 0
    with open(table, newline="") as fh:
        spread_rows = list(csv.DictReader(fh))
    lags = [float(r["seconds"]) for r in spread_rows if r["kind"] == "event_lag"]
    assert len(lags) == 1 and lags[0] >= 1.0, lags
    schedules = {r["member"]: float(r["seconds"]) for r in spread_rows
                 if r["kind"] == "schedule"}
    assert len(schedules) == 2 and 0.0 in schedules.values(), schedules
    assert {r["heartbeat_ms"] for r in spread_rows} == {"1000"}
