"""The committable form of an experiment's ``results.json``: every run's figures, no bulk.

``results.json`` keeps what a run saw in detail (samples of deliveries, per-message timelines,
the records folder); the figures in the docs need only each run's identity, status, parameters
and metrics, plus the small scalar details the tables quote. ``runs.json`` is that, a few KB.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

COMPACT_FILE = "runs.json"
RUN_KEYS = ("protocol", "members", "partitions", "event", "repeat", "status", "reason",
            "scenario", "params", "metrics")
MAX_DETAIL_CHARS = 300  # a detail longer than this as JSON is bulk, not a figure


def compact_doc(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` (a results.json) with bulky details and local paths dropped."""
    runs = []
    for run in doc.get("runs", []):
        small = {k: run.get(k) for k in RUN_KEYS if k in run}
        small["details"] = {k: v for k, v in (run.get("details") or {}).items()
                            if len(json.dumps(v, default=str)) <= MAX_DETAIL_CHARS
                            and not k.endswith("_dir")}
        runs.append(small)
    out: dict[str, Any] = {"runs": runs}
    for key in ("scenario", "fits", "spec"):
        if key in doc:
            out[key] = doc[key]
    if isinstance(out.get("spec"), dict):
        out["spec"] = {k: v for k, v in out["spec"].items() if k != "out_dir"}
    return out


def write_compact(out_dir: Path) -> Path:
    """``out_dir/runs.json`` from ``out_dir/results.json``."""
    doc = json.loads((out_dir / "results.json").read_text(encoding="utf-8"))
    path = out_dir / COMPACT_FILE
    path.write_text(json.dumps(compact_doc(doc), indent=1, sort_keys=True, default=str) + "\n",
                    encoding="utf-8")
    return path
