"""docs/brokers.md's era table: medians per broker, unsupported runs with their reason."""

from __future__ import annotations

import csv
from pathlib import Path

from zkconsumer.results import capture, write_provenance
from zkconsumer.results.figures.brokers import FIELDS_FOR_TESTS, broker_folders, compare_table


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
