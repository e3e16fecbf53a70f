"""``spark request-types``: rows per run and type, and the check against the sweep's totals."""

from __future__ import annotations

from pathlib import Path

import pytest

from zkconsumer.spark.herd.request_types import raw_windows, totals_mismatch, type_rows

WINDOWS = [{"run_id": "r1", "protocol": "eager-range", "members": 8, "partitions": 40,
            "event": "crash", "seed": 0},
           {"run_id": "r0", "protocol": "eager-range", "members": 8, "partitions": 40,
            "event": "crash", "seed": 1}]


def test_rows_name_the_cell_and_leave_commits_out_of_the_total():
    rows = type_rows([("r1", "Heartbeat", 38), ("r1", "OffsetCommit", 100), ("r0", "JoinGroup", 7)],
                     WINDOWS, ("setData", "OffsetCommit"))
    assert [(r["seed"], r["request"], r["count"], r["counted"]) for r in rows] == [
        (0, "Heartbeat", 38, True), (0, "OffsetCommit", 100, False), (1, "JoinGroup", 7, True)]
    assert rows[0]["protocol"] == "eager-range" and rows[0]["members"] == 8


def test_a_run_whose_types_do_not_add_up_is_named():
    rows = type_rows([("r1", "Heartbeat", 38), ("r1", "JoinGroup", 7), ("r1", "OffsetCommit", 9),
                      ("r0", "JoinGroup", 7)], WINDOWS, ("OffsetCommit",))
    sweep = [{"protocol": "eager-range", "members": 8, "partitions": 40, "event": "crash",
              "seed": 0, "coordination_requests": 45},
             {"protocol": "eager-range", "members": 8, "partitions": 40, "event": "crash",
              "seed": 1, "coordination_requests": 8}]
    assert totals_mismatch(rows, sweep) == [
        "('eager-range', 8, 40, 'crash', 1): 7 by type, 8 in the sweep"]


def test_a_directory_without_windows_is_refused_by_name(tmp_path: Path):
    with pytest.raises(ValueError, match=f"{tmp_path}: no windows/ folder"):
        raw_windows(tmp_path)
