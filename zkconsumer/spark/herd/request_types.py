"""``spark request-types``: the real runs' coordination requests by request type.

    zkconsumer spark request-types --raw DIR [--raw DIR ...] --out FILE.csv

A real-mode sweep commits one row per run (``sweep.csv``); its ``coordination_requests`` is a
sum over request types. Where a simulated count misses, which type is short is what matters
(heartbeats, JoinGroup, SyncGroup; getData, getChildren...). This job reads a sweep's local
raw output (``DIR/records/<run>``, Parquet, and ``DIR/windows/<run>.json``, written by
``spark herd --mode real``), counts each type over the same window as the sweep
(:func:`zkconsumer.spark.herd.metrics.request_deltas`), and writes one row per (run, type):
protocol, N, P, event, seed, request, count, and whether the type is in
``coordination_requests`` (offset commits are not). The counted types of a run add up to its
``coordination_requests`` (the job checks it against ``DIR/sweep.parquet`` when present).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

COLUMNS = ("protocol", "members", "partitions", "event", "seed", "request", "count", "counted")


def raw_windows(raw: Path) -> list[dict[str, Any]]:
    """The event windows of one raw output directory (``windows/*.json``), sorted by run."""
    folder = raw / "windows"
    if not folder.is_dir():
        raise ValueError(f"{raw}: no windows/ folder (the local output of "
                         "`zkconsumer spark herd --mode real --out DIR`)")
    windows = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    if not windows:
        raise ValueError(f"{raw}: windows/ holds no run (no <run>.json)")
    return windows


def type_rows(deltas: Iterable[tuple[str, str, int]], windows: Sequence[dict[str, Any]],
              commits: Sequence[str]) -> list[dict[str, Any]]:
    """Rows of :data:`COLUMNS` from ``(run_id, request, count)`` sums, sorted by cell and type."""
    by_run = {w["run_id"]: w for w in windows}
    rows = []
    for run_id, request, count in deltas:
        w = by_run[run_id]
        rows.append({"protocol": w["protocol"], "members": int(w["members"]),
                     "partitions": int(w["partitions"]), "event": w["event"],
                     "seed": int(w["seed"]), "request": request, "count": int(count),
                     "counted": request not in commits})
    return sorted(rows, key=lambda r: tuple(r[c] for c in COLUMNS[:6]))


def totals_mismatch(rows: Sequence[dict[str, Any]], sweep: Sequence[dict[str, Any]]
                    ) -> list[str]:
    """Runs whose counted types do not add up to the sweep's ``coordination_requests``."""
    key = ("protocol", "members", "partitions", "event", "seed")
    sums: dict[tuple[Any, ...], int] = {}
    for r in rows:
        if r["counted"]:
            k = tuple(r[c] for c in key)
            sums[k] = sums.get(k, 0) + r["count"]
    bad = []
    for s in sweep:
        k = (s["protocol"], int(s["members"]), int(s["partitions"]), s["event"], int(s["seed"]))
        if sums.get(k, 0) != int(s["coordination_requests"] or 0):
            bad.append(f"{k}: {sums.get(k, 0)} by type, {s['coordination_requests']} in the sweep")
    return bad


def run_records(spark: Any, raw: Path, run_id: str, kinds: Sequence[str]
                ) -> list[dict[str, Any]]:
    """One run's local records of ``kinds`` (``DIR/records/<run>``), each as ``kind``, ``ts``,
    ``member``, ``what``, ``task`` and ``seq`` (a delivered message's number)."""
    wanted = ", ".join(f"'{k}'" for k in kinds)
    return [r.asDict() for r in (spark.read.parquet(str(raw / "records" / run_id))
                                 .where(f"kind in ({wanted})")
                                 .select("kind", "ts", "member", "what", "task", "seq").collect())]


def records_job_command(job: str, args: argparse.Namespace) -> str:
    """The command line a job over raw record folders (``--raw``, ``--out``, ``--master``)
    records in its provenance."""
    return " ".join(["zkconsumer", "spark", job, *(f"--raw {d}" for d in args.raw),
                     f"--out {args.out}",
                     *([f"--master '{args.master}'"] if args.master else [])])


def add_records_arguments(p: argparse.ArgumentParser, raw_help: str) -> None:
    """``--raw`` (repeatable), ``--out`` and ``--master``: the options of every job over raw
    record folders (:func:`records_job_command` records them)."""
    p.add_argument("--raw", required=True, type=Path, action="append", help=raw_help)
    p.add_argument("--out", required=True, type=Path, help="CSV to write")
    p.add_argument("--master", default=None, help="Spark master (default local[*])")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_records_arguments(p, "a real-mode output directory with records/ and windows/; may "
                             "repeat")


def run(args: argparse.Namespace) -> int:
    from pyspark.sql import functions as F

    from zkconsumer.results import capture
    from zkconsumer.results.provenance import write_rows_csv
    from zkconsumer.spark.herd.metrics import (
        COMMIT_REQUESTS,
        WINDOW_DDL,
        request_deltas,
        stability_table,
    )
    from zkconsumer.spark.session import session_for

    prov = capture(records_job_command("request-types", args))
    windows_of = {raw: raw_windows(raw) for raw in args.raw}  # bad input before Spark starts
    with session_for(None, args.master, "zkconsumer-request-types") as spark:
        cols = tuple(part.split()[0] for part in WINDOW_DDL.split(", "))
        rows: list[dict[str, Any]] = []
        bad: list[str] = []
        for raw in args.raw:
            windows = windows_of[raw]
            records = spark.read.parquet(*(str(raw / "records" / w["run_id"]) for w in windows))
            window_df = spark.createDataFrame([tuple(w.get(c) for c in cols) for w in windows],
                                              WINDOW_DDL)
            ivs = stability_table(spark, records, window_df).cache()
            deltas = (request_deltas(records, window_df, ivs).groupBy("run_id", "name")
                      .agg(F.sum("delta").alias("count")).collect())
            these = type_rows(((d["run_id"], d["name"], d["count"]) for d in deltas), windows,
                              COMMIT_REQUESTS)
            rows += these
            if (raw / "sweep.parquet").exists():
                sweep = [r.asDict()
                         for r in spark.read.parquet(str(raw / "sweep.parquet")).collect()]
                bad += [f"{raw}: {b}" for b in totals_mismatch(these, sweep)]
    if bad:
        print("zkconsumer: error: counts by type do not add up to the sweeps':\n  "
              + "\n  ".join(bad), file=sys.stderr)
        return 1
    write_rows_csv(args.out, COLUMNS, rows, prov)
    print(f"wrote {args.out}: {len(rows)} rows from {len(args.raw)} sweeps")
    return 0
