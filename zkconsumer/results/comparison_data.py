"""The comparison's committed raw data: compact copies of the lab's outputs.

An ``experiment compare`` (or ``split-brain``) ``--out DIR`` folder holds per-member records
(megabytes); the docs' comparison tables need each run's metrics. :func:`import_compare` keeps,
per run, the metrics, the status, the broker and, for a join, two counts derived from the run's
rebuilt timeline (partitions whose fetching stopped in the window, partitions that changed
owner), and copies ``meta.json`` (command, revision, date, machine, broker) beside them, its
command's ``--out`` naming ``DEST``::

    zkconsumer results import-comparison OUT_DIR results/comparison/NAME
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from zkconsumer.results.provenance import META_FILE, copy_provenance

RESULTS_FILE = "runs.json"
# Run details worth keeping (the rest are per-machine paths, traces and notes).
KEPT_DETAILS = ("broker", "session_timeout_ms", "settled", "drained", "crash_victim",
                "extra_metrics", "zk_mntr_delta", "family", "zombie_view", "offset_regressions",
                "group_protocol", "consumer_heartbeat_interval_ms")


def join_movement(timeline: dict[str, Any]) -> dict[str, int]:
    """Partitions that stopped being fetched inside the window, and partitions whose owner
    after the window differs from the owner before it (pure; the timeline is event-relative)."""
    end = float(timeline["end_s"])
    stopped: set[int] = set()
    before: dict[int, str] = {}
    after: dict[int, str] = {}
    for iv in timeline["fetching"]:
        p, start, stop = int(iv["partition"]), float(iv["start"]), float(iv["end"])
        if 0.0 <= stop < end:
            stopped.add(p)
        if start <= 0.0 < stop or (start <= 0.0 and stop >= end):
            before[p] = iv["member"]
        if start < end <= stop:
            after[p] = iv["member"]
    moved = {p for p in after if before.get(p) != after[p]}
    return {"partitions_stopped": len(stopped), "partitions_moved": len(moved)}


def compact_run(run: dict[str, Any], timeline: dict[str, Any] | None) -> dict[str, Any]:
    details = run.get("details") or {}
    out = {k: run.get(k) for k in ("protocol", "members", "partitions", "event", "repeat",
                                     "status", "reason", "metrics", "scenario", "params")}
    out["details"] = {k: details[k] for k in KEPT_DETAILS if k in details}
    if timeline is not None and run.get("event") == "join" and run.get("status") == "ok":
        out["details"].update(join_movement(timeline))
    return out


def import_compare(out_dir: Path, dest: Path) -> Path:
    """Write ``dest/runs.json`` and ``dest/meta.json`` from an ``experiment compare`` folder."""
    meta = out_dir / META_FILE
    if not meta.is_file():
        raise FileNotFoundError(f"{out_dir} has no {META_FILE}: not a finished compare output")
    doc = json.loads((out_dir / "results.json").read_text())
    runs = []
    for run in doc["runs"]:
        tl_path = Path(run["records_dir"]) / "timeline.json" if run.get("records_dir") else None
        if tl_path is not None and not tl_path.is_file():
            tl_path = out_dir / "runs" / Path(run["records_dir"]).name / "timeline.json"
        timeline = json.loads(tl_path.read_text()) if tl_path and tl_path.is_file() else None
        runs.append(compact_run(run, timeline))
    spec = doc.get("spec")
    if isinstance(spec, dict):  # where the run wrote, on the machine that ran it
        spec = {k: v for k, v in spec.items() if k != "out_dir"}
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / RESULTS_FILE
    path.write_text(json.dumps({"spec": spec, "runs": runs}, indent=1, sort_keys=True) + "\n")
    copy_provenance(out_dir, dest)
    return path


def load_runs(folder: Path) -> list[dict[str, Any]]:
    return list(json.loads((folder / RESULTS_FILE).read_text())["runs"])

