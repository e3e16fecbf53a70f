"""What a herd-ops run writes: ``runs.json`` (one row per event), ``meta.json`` (command,
revision, date, machine, broker) and ``traces.jsonl.gz`` (every window's operations in order:
the raw data each explanation of a difference reads)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import IO

from zkconsumer.lab.herdops.count import path_pattern
from zkconsumer.lab.herdops.run import RunRow
from zkconsumer.lab.herdops.tap import TapRecord

RUNS_FILE = "runs.json"
TRACES_FILE = "traces.jsonl.gz"


def write_runs(folder: Path, rows: list[RunRow]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / RUNS_FILE
    path.write_text(json.dumps([r.to_json() for r in rows], indent=1, sort_keys=True) + "\n")
    return path


def read_runs(folder: Path) -> list[dict[str, object]]:
    runs: list[dict[str, object]] = json.loads((folder / RUNS_FILE).read_text())
    return runs


class Traces:
    """``traces.jsonl.gz``: one line per window, its records as ``[ms since the window's first
    record, member, op, path class, watch, err, event]``."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] = gzip.open(folder / TRACES_FILE, "wt")

    def __call__(self, kind: str, n: int, event: str, repeat: int, records: list[TapRecord],
                 owners: dict[int, str], group: str, topic: str) -> None:
        t0 = records[0].t if records else 0.0
        ops = [[round((r.t - t0) * 1000, 1), owners.get(r.conn, f"?{r.conn}").replace(
                    f"{group}_", ""), r.op.op, path_pattern(r.op.path, group, (topic,)),
                r.op.watch, r.op.err, r.op.event]
               for r in records if r.op.op != "ping"]
        self._file.write(json.dumps({"kind": kind, "members": n, "event": event,
                                     "repeat": repeat, "ops": ops}) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()
