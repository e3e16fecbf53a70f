"""Rows of committed runs marked as not measuring what their labels say."""

from __future__ import annotations

import pytest

from zkconsumer.results.exclusions import sweep_rows

SWEEP = ("mode,protocol,scenario,members,partitions,seed,applicable,reason\n"
         "real,zk-range,storm,100,64,2,true,\n"
         "real,zk-range,zombie,100,64,2,true,\n")


def _run(tmp_path, excluded=None):
    (tmp_path / "sweep.csv").write_text(SWEEP)
    if excluded is not None:
        (tmp_path / "excluded.csv").write_text(
            "protocol,scenario,members,seed,reason\n" + excluded)
    return tmp_path


def test_an_excluded_row_carries_its_reason_and_the_others_are_untouched(tmp_path):
    rows = sweep_rows(_run(tmp_path, "zk-range,storm,100,2,began with 69 of 100 members\n"))
    assert [r["reason"] for r in rows] == ["excluded: began with 69 of 100 members", ""]


def test_without_the_file_the_sweep_is_as_written(tmp_path):
    assert [r["reason"] for r in sweep_rows(_run(tmp_path))] == ["", ""]


def test_an_exclusion_matching_no_row_or_without_a_reason_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no real row for"):
        sweep_rows(_run(tmp_path, "zk-range,storm,200,2,whatever\n"))
    with pytest.raises(ValueError, match="without a reason"):
        sweep_rows(_run(tmp_path, "zk-range,storm,100,2,\n"))
