"""docs/comparison.md's Apache Kafka 4 block: one table per committed chunk, headed by the
KIP-848 heartbeat its broker gave the groups, with partitions revoked from the extras."""

from __future__ import annotations

import json
from pathlib import Path

from zkconsumer.results import capture, write_provenance
from zkconsumer.results.figures.comparison_kafka4 import comparison_kafka4
from zkconsumer.results.registry import Context


def run(protocol: str, paused: int, revoked: int, idle: int, status: str = "ok",
        reason: str | None = None) -> dict[str, object]:
    metrics = {"time_to_stable_s": 1.5, "members_paused": paused,
               "partition_seconds_unavailable": 0.5, "duplicates": 0, "lost": 0}
    return {"protocol": protocol, "event": "join", "members": 4, "partitions": 8, "repeat": 0,
            "status": status, "reason": reason, "metrics": metrics if status == "ok" else {},
            "details": {"extra_metrics": {"partitions_revoked": revoked, "members_idle": idle,
                                          "group_rebalances": 1}}}


def test_each_kafka_4_chunk_shows_its_heartbeat_and_who_gave_partitions_up(tmp_path: Path):
    folder = tmp_path / "comparison" / "compare-apache-kafka-4.0.2-hb1000"
    folder.mkdir(parents=True)
    runs = [run("eager-range", 4, 8, 4), run("consumer-uniform", 1, 1, 0),
            run("consumer-uniform", 2, 2, 0), run("consumer-range", 0, 0, 0, "unsupported",
                                                  "no ConsumerGroupHeartbeat")]
    (folder / "runs.json").write_text(json.dumps({"spec": {}, "runs": runs}))
    write_provenance(folder, capture("zkconsumer experiment compare", broker="apache-kafka-4.0.2",
                                     consumer_heartbeat_interval_ms=1000,
                                     consumer_heartbeat_source="--consumer-heartbeat-ms"))
    text = comparison_kafka4(Context(results=tmp_path, figures=tmp_path / "figures"))
    lines = text.splitlines()
    assert lines[0].startswith("`compare-apache-kafka-4.0.2-hb1000`: KIP-848 heartbeat 1000 ms "
                               "(--consumer-heartbeat-ms); ")
    assert lines[2] == ("| event | protocol | n | stable s | paused | idle | revoked | part·s | "
                        "rebal. | dups | lost |")
    assert lines[4] == "| join | eager-range | 1/1 | 1.5 | 4 | 4 | 8 | 0.5 | 1 | 0 | 0 |"
    assert lines[5] == "| join | consumer-uniform | 2/2 | 1.5 | 1.5 | 0 | 1.5 | 0.5 | 1 | 0 | 0 |"
    assert lines[6] == "| join | consumer-range | 0/1 | **unsupported** |" + "  |" * 7
    assert "Records lost over the chunk's 3 measured runs: 0." in lines
    assert 'Not measured: "no ConsumerGroupHeartbeat".' in lines


def test_without_kafka_4_runs_the_block_says_so(tmp_path: Path):
    (tmp_path / "comparison").mkdir()
    assert comparison_kafka4(Context(results=tmp_path, figures=tmp_path)) == (
        "_No Apache Kafka 4 runs committed yet._")
