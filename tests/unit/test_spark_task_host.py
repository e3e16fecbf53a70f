"""The frame both Spark jobs' real-mode tasks share: what a task returns of its record files."""

from __future__ import annotations

from pathlib import Path

from zkconsumer.spark.task_host import record_lines


def test_a_task_returns_complete_record_lines_of_every_file_in_name_order(tmp_path: Path):
    (tmp_path / "m00001.0.jsonl").write_text('{"k": "t", "m": "m00001"}\n\n  \n')
    # the last line of a SIGKILLed member has no newline: it is cut, not a record
    (tmp_path / "m00000.0.jsonl").write_text('{"k": "d", "m": "m00000"}\n{"k": "d", "m"')
    (tmp_path / "notes.txt").write_text("not a record file\n")
    assert list(record_lines(tmp_path)) == ['{"k": "d", "m": "m00000"}',
                                            '{"k": "t", "m": "m00001"}']
