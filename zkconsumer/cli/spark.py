"""``spark herd`` and ``spark validate``: the Spark jobs from the command line.

    zkconsumer spark herd --mode real|sim --members 4,64,1000 --partitions 16,128 \\
        --protocols zk-range,eager-range,cooperative-sticky --events join,leave,crash \\
        --seeds 3 --out DIR [--master URL] [--tasks K]
    zkconsumer spark validate --real DIR [--calibration FILE] [--out FILE]

The same jobs run under ``spark-submit`` (``zkconsumer/spark/herd.py``); see docs/scale.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    from zkconsumer.spark.herd import add_arguments  # first: MissingExtra before any parser

    spark = sub.add_parser("spark", help="the herd sweep on Spark: real consumers or simulated")
    verbs = spark.add_subparsers(dest="spark_verb", metavar="SUBVERB")
    verbs.required = True

    herd = verbs.add_parser(
        "herd", help="requests, attempts, conflicts and time to stable vs group size",
        description="Real consumers hosted by Spark tasks (--mode real) or the simulator over "
                    "a parameter grid (--mode sim); writes sweep.parquet, sweep.csv, "
                    "summary.md and plots to --out.")
    add_arguments(herd)
    herd.set_defaults(func=run_herd)

    val = verbs.add_parser(
        "validate", help="the simulator against real runs (requests, attempts, time to stable)",
        description="Simulate every real row of a real-mode sweep (same protocol, N, P, "
                    "event, seed and settings) and compare: requests per event within 15%%, "
                    "rebalance attempts within 1, time to stable within 30%%.")
    val.add_argument("--real", required=True, type=Path, action="append",
                     help="a real-mode output directory (its sweep.csv); may repeat")
    val.add_argument("--calibration", type=Path, default=None,
                     help="calibration file from `zkconsumer calibrate` (default: built in)")
    val.add_argument("--seeds", type=int, default=5,
                     help="simulated seeds per real row (the median is compared)")
    val.add_argument("--out", type=Path, default=None, help="also write the table here (.md)")
    val.set_defaults(func=run_validate)

    from zkconsumer.spark.splitbrain import add_arguments as split_arguments

    split = verbs.add_parser(
        "split-brain", help="zombie, stale-view and storm at scale: real members or simulated",
        description="Split brain and the uncontrollable outcome at scale: real members hosted "
                    "by Spark tasks behind per-member fault proxies (--mode real) or the "
                    "simulator (--mode sim); writes sweep.parquet, sweep.csv, summary.md, "
                    "plots and meta.json to --out.")
    split_arguments(split)
    split.set_defaults(func=run_split_brain)


def run_herd(args: argparse.Namespace) -> int:
    from zkconsumer.spark.herd import run

    try:
        return run(args)
    except ValueError as exc:
        print(f"zkconsumer: error: {exc}", file=sys.stderr)
        return 2


def run_split_brain(args: argparse.Namespace) -> int:
    from zkconsumer.spark.splitbrain import run

    try:
        return run(args)
    except ValueError as exc:
        print(f"zkconsumer: error: {exc}", file=sys.stderr)
        return 2


def run_validate(args: argparse.Namespace) -> int:
    from zkconsumer.sim import Calibration
    from zkconsumer.spark.validate import load_real_rows, validate, validation_markdown

    cal = Calibration.load(args.calibration) if args.calibration else Calibration()
    missing = [str(d) for d in args.real
               if not (d / "sweep.csv" if d.is_dir() else d).is_file()]
    if missing:
        print(f"zkconsumer: error: no sweep.csv in {', '.join(missing)} (the output of "
              "`zkconsumer spark herd --mode real`)", file=sys.stderr)
        return 2
    rows = [r for d in args.real for r in load_real_rows(d)]
    if not rows:
        print("zkconsumer: error: no real rows found", file=sys.stderr)
        return 2
    checks = validate(rows, cal, seeds=args.seeds)
    text = validation_markdown(checks, cal)
    print(text)
    if args.out:
        args.out.write_text(text)
        print(f"wrote {args.out}")
    return 0 if all(c.ok for c in checks) else 1
