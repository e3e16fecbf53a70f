"""The committable runs.json keeps every figure of a results.json and drops its bulk."""

from __future__ import annotations

import json
from pathlib import Path

from zkconsumer.lab.runs import RunResult
from zkconsumer.results.compact import MAX_DETAIL_CHARS, compact_doc, write_compact


def test_figures_and_small_details_stay_bulk_and_local_paths_go(tmp_path: Path) -> None:
    run = {"protocol": "zk-range", "members": 4, "partitions": 8, "event": "zombie",
           "repeat": 2, "status": "ok", "reason": None, "scenario": "split-brain",
           "params": {"session_timeout_ms": 4000}, "metrics": {"offset_regressions": 1},
           "records_dir": "/tmp/x/records",
           "details": {"zombie": "m00", "pause_s": 6.6, "records_dir": "/tmp/x",
                       "timeline": [[i, i + 0.5] for i in range(200)]}}
    doc = {"runs": [run], "spec": {"scenario": "zombie", "out_dir": "/tmp/x"},
           "fits": {"zk-range/join": {"slope": 1.4}}}
    (tmp_path / "results.json").write_text(json.dumps(doc))
    out = json.loads(write_compact(tmp_path).read_text())
    [small] = out["runs"]
    assert small["metrics"] == {"offset_regressions": 1} and small["repeat"] == 2
    assert small["details"] == {"zombie": "m00", "pause_s": 6.6}
    assert "records_dir" not in small and out["spec"] == {"scenario": "zombie"}
    assert out["fits"] == doc["fits"]
    assert len(json.dumps(run["details"]["timeline"])) > MAX_DETAIL_CHARS
    # the lab's own reader loads it unchanged
    assert RunResult.from_json(small).metrics == {"offset_regressions": 1}


def test_compacting_twice_changes_nothing() -> None:
    doc = {"runs": [{"protocol": "p", "metrics": {}, "details": {"a": 1}}]}
    assert compact_doc(compact_doc(doc)) == compact_doc(doc)
