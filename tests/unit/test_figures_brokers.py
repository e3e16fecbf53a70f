"""docs/brokers.md's era tables: medians per broker, unsupported runs with their reason, and the
herd and split-brain rows of each broker side by side."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from zkconsumer.lab.runs import RunResult
from zkconsumer.results import capture, write_provenance
from zkconsumer.results.compact import COMPACT_FILE
from zkconsumer.results.figures.brokers import (
    FIELDS_FOR_TESTS,
    broker_folders,
    compare_table,
    static_folders,
)
from zkconsumer.results.figures.brokers_era import render_herd, render_zombie
from zkconsumer.results.registry import Context


def write_runs(folder: Path, broker: str, rows: list[dict[str, object]]) -> None:
    folder.mkdir(parents=True)
    with open(folder / "runs.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, FIELDS_FOR_TESTS)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: row.get(k, "") for k in FIELDS_FOR_TESTS})
    write_provenance(folder, capture("python benchmarks/era_compare.py", broker=broker))


def test_each_broker_gets_its_own_row_with_medians_and_tansu_comes_first(tmp_path):
    base = tmp_path / "brokers"
    ok = {"status": "ok", "members_paused": 4, "coordination_requests": 10, "group_rebalances": 1,
          "partition_seconds_unavailable": 1.0, "duplicates": 0, "lost": 0}
    write_runs(base / "compare-apache-kafka-0.10.2.2", "apache-kafka-0.10.2.2", [
        {**ok, "protocol": "eager-range", "event": "join", "time_to_stable_s": s}
        for s in (1.0, 3.0, 2.0)] + [
        {"protocol": "static-range", "event": "join", "status": "unsupported",
         "reason": "needs JoinGroup v5"}])
    write_runs(base / "compare-tansu-0.6.0", "tansu-0.6.0", [
        {**ok, "protocol": "eager-range", "event": "join", "time_to_stable_s": 0.5}])
    folders = broker_folders(tmp_path)
    assert [f.name for f in folders] == ["compare-tansu-0.6.0", "compare-apache-kafka-0.10.2.2"]
    table = compare_table(folders).splitlines()
    assert table[2].startswith("| join | eager-range | tansu-0.6.0 | 1/1 | 0.50 | 1.00 | 4 |")
    assert table[3].startswith("| join | eager-range | apache-kafka-0.10.2.2 | 3/3 | 2.00 |")
    assert table[4] == ("| join | static-range | apache-kafka-0.10.2.2 | 0/1 | **unsupported** |"
                        + "  |" * 6)
    assert table[-1] == "- static-range on apache-kafka-0.10.2.2: needs JoinGroup v5"


def test_a_later_static_verdict_replaces_the_compare_folders_static_rows(tmp_path):
    base = tmp_path / "brokers"
    write_runs(base / "compare-apache-kafka-0.10.2.2", "apache-kafka-0.10.2.2", [
        {"protocol": "static-range", "event": e, "status": "unsupported", "reason": "old words"}
        for e in ("join", "leave")])
    write_runs(base / "static-apache-kafka-0.10.2.2", "apache-kafka-0.10.2.2", [
        {"protocol": "static-range", "event": "join", "status": "unsupported",
         "reason": "cannot be asked"}])
    table = compare_table(broker_folders(tmp_path), static_folders(tmp_path)).splitlines()
    assert [line.split(" | ")[:4] for line in table[2:-2]] == [
        ["| join", "static-range", "apache-kafka-0.10.2.2", "0/1"]]
    assert table[-1] == "- static-range on apache-kafka-0.10.2.2: cannot be asked"


def lab_run(protocol: str, event: str, members: int, repeat: int = 0, **metrics: object
            ) -> RunResult:
    return RunResult(protocol=protocol, members=members, partitions=8, event=event,
                     repeat=repeat, status="ok", metrics=dict(metrics))


def write_lab(folder: Path, broker: str, runs: list[RunResult], **extra: object) -> None:
    folder.mkdir(parents=True)
    doc = {"runs": [r.to_json() for r in runs], **extra}
    (folder / COMPACT_FILE).write_text(json.dumps(doc))
    write_provenance(folder, capture("zkconsumer experiment", broker=broker))


def test_herd_rows_pair_the_brokers_per_size_and_count_requests_by_type(tmp_path):
    base = tmp_path / "brokers"
    by_type = {"JoinGroup": 5, "SyncGroup": 5, "Heartbeat": 7}
    write_lab(base / "herd-apache-kafka-0.10.2.2", "apache-kafka-0.10.2.2", [
        lab_run("eager-range", "join", 4, coordination_requests=22, requests_by_type=by_type),
        lab_run("zk-range", "join", 4, coordination_requests=99)],
        fits={"eager-range/join": {"slope": 0.5, "r2": 1.0, "points": [[4, 22]]}})
    write_lab(base / "herd-tansu-0.6.0", "tansu-0.6.0", [
        lab_run("eager-range", "join", 4, coordination_requests=30, time_to_stable_s=9.5)])
    lines = render_herd(Context(tmp_path, tmp_path)).splitlines()
    assert lines[2].startswith("| eager-range | join | 4 | tansu-0.6.0 | 30 | 0 | 0 | 0 |")
    assert lines[3].startswith(
        "| eager-range | join | 4 | apache-kafka-0.10.2.2 | 22 | 5 | 5 | 7 |")
    assert not any("zk-range" in line for line in lines), "only the broker-side protocols"
    assert "| eager-range/join | apache-kafka-0.10.2.2 | 0.50 | 1.000 | [[4, 22]] |" in lines


def test_split_rows_take_tansu_from_the_lab_runs_and_kafka_from_brokers(tmp_path):
    write_lab(tmp_path / "lab" / "split-zombie", "tansu-0.6.0", [
        lab_run("zk-range", "zombie", 4, delivered_by_two=60),
        *[lab_run("eager-range", "zombie", 4, repeat=i, delivered_by_two=v)
          for i, v in enumerate((1, 5, 3))]])
    write_lab(tmp_path / "brokers" / "split-zombie-apache-kafka-0.10.2.2",
              "apache-kafka-0.10.2.2", [RunResult(
                  protocol="eager-range", members=4, partitions=8, event="zombie", repeat=0,
                  status="ok", metrics={"delivered_by_two": 2},
                  details={"zombie_view": {"rejections": ["UNKNOWN_MEMBER_ID"]}})])
    lines = render_zombie(Context(tmp_path, tmp_path)).splitlines()
    column = lines[0].split(" | ").index("msgs delivered by two")
    assert [(line.split(" | ")[1], line.split(" | ")[2], line.split(" | ")[column])
            for line in lines[2:4]] == [("tansu-0.6.0", "3/3", "3"),
                                        ("apache-kafka-0.10.2.2", "1/1", "2")]
    assert not any(line.startswith("| zk-range") for line in lines)
    assert ("Refusals the zombie's late commits got: on tansu-0.6.0, none; on "
            "apache-kafka-0.10.2.2, `UNKNOWN_MEMBER_ID`.") in lines
    assert "`results/lab/split-zombie`" in lines[-2]
