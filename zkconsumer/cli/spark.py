"""``spark herd`` and ``spark validate``: the Spark jobs from the command line.

    zkconsumer spark herd --mode real|sim --members 4,64,1000 --partitions 16,128 \\
        --protocols zk-range,eager-range,cooperative-sticky --events join,leave,crash \\
        --seeds 3 --out DIR [--master URL] [--tasks K]
    zkconsumer spark validate --real DIR [--calibration FILE] [--out FILE]
    zkconsumer spark request-types --raw DIR [--raw DIR ...] --out FILE.csv
    zkconsumer spark formation-spread --raw DIR [--raw DIR ...] --out FILE.csv
    zkconsumer spark fit-speed --fit PLAN.json=ROWS.csv [--fit ...] --calibration FILE --out DIR
    zkconsumer spark rebalance-phases --raw DIR [--raw DIR ...] --out FILE.csv
    zkconsumer spark validate-split-brain --real DIR [--real DIR ...] --out DIR
    zkconsumer spark cluster start [--workers 2]

The same jobs run under ``spark-submit`` (``zkconsumer/spark/herd/job.py``,
``zkconsumer/spark/splitbrain/job.py``); see docs/scale.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    from zkconsumer.spark.herd.job import add_arguments  # first: MissingExtra before any parser

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
                    "event, seed and settings) and compare the medians with the plan's "
                    "tolerances (default: requests within 10%, attempts equal, time to stable "
                    "within 20%).")
    val.add_argument("--real", type=Path, action="append", default=None,
                     help="a real-mode output directory (its sweep.csv); may repeat (not with "
                          "a distribution plan, which names its runs' folders)")
    val.add_argument("--calibration", type=Path, default=None,
                     help="calibration file from `zkconsumer calibrate` (default: built in)")
    val.add_argument("--seeds", type=int, default=5,
                     help="simulated seeds per real row (the median is compared)")
    val.add_argument("--out", type=Path, default=None,
                     help="also write the table here (.md); with a distribution plan: the "
                          "scoring folder (scoring.json, scoring.md, meta.json)")
    val.add_argument("--plan", type=Path, default=None,
                     help="validation plan (JSON) whose tolerances apply")
    val.add_argument("--json", type=Path, default=None,
                     help="also write every cell's check here (JSON, with the provenance)")
    val.add_argument("--label", default="",
                     help="what these runs are (e.g. held-out validation), kept in --json")
    val.set_defaults(func=run_validate)

    from zkconsumer.spark.herd.fit import add_fit_arguments

    fit = verbs.add_parser(
        "fit", help="fit the broker group timings to real runs",
        description="Grid search, one parameter at a time, of the calibration parameters no "
                    "round trip measures (the broker's group timings), minimising the "
                    "simulator's error on the fitting runs; writes the calibration with each "
                    "fitted parameter's origin.")
    add_fit_arguments(fit)
    fit.set_defaults(func=run_fit)

    from zkconsumer.spark.herd.request_types import add_arguments as type_arguments

    types = verbs.add_parser(
        "request-types", help="real runs' coordination requests by request type",
        description="Count each request type (JoinGroup, Heartbeat, getData...) of every "
                    "real run over the sweep's counting window, from a real-mode output "
                    "directory's local records; writes one CSV row per run and type.")
    type_arguments(types)
    types.set_defaults(func=run_request_types)

    from zkconsumer.spark.herd.formation_spread import add_arguments as spread_arguments

    spread = verbs.add_parser(
        "formation-spread", help="where a formed broker-side group's heartbeat schedules stood",
        description="From the local records of real broker-side runs (KIP-848 on Apache "
                    "Kafka 4, or classic groups): each member's heartbeat schedule against the "
                    "formation's last change, the idle members' grants, the statistics ticks' "
                    "lead, the Spark tasks' ticks against task 0's and the event's lag; writes "
                    "one CSV row per measurement and prints their 5 %, median and 95 %.")
    spread_arguments(spread)
    spread.set_defaults(func=run_formation_spread)

    from zkconsumer.spark.herd.fit_speed_cli import add_arguments as speed_arguments

    speed = verbs.add_parser(
        "fit-speed", help="fit the formation read the legacy model's calibration stands for",
        description="On earlier plans' run sets: draw the model at a grid of machine speeds "
                    "and find the formation read (spark formation-spread's formation_read "
                    "rows) at which it runs at the calibration's; a plan then draws each set "
                    "at its own speed. Writes fit.json, fit.md and meta.json to --out.")
    speed_arguments(speed)
    speed.set_defaults(func=run_fit_speed)

    from zkconsumer.spark.herd.rebalance_phases import add_arguments as phase_arguments

    phases = verbs.add_parser(
        "rebalance-phases",
        help="each ZooKeeper-family member's stop, read and claim after the event",
        description="From the local records of real runs of a ZooKeeper protocol: per member, "
                    "its first attempt after the event, how long it took to stop its fetchers, "
                    "from there to its plan and to fetching again, where its stop ended on its "
                    "fetcher's poll grid, and whether it met an owner conflict; writes one CSV "
                    "row per member and prints the phases' medians.")
    phase_arguments(phases)
    phases.set_defaults(func=run_rebalance_phases)

    from zkconsumer.spark.splitbrain.job import add_arguments as split_arguments

    split = verbs.add_parser(
        "split-brain", help="zombie, stale-view and storm at scale: real members or simulated",
        description="Split brain and the uncontrollable outcome at scale: real members hosted "
                    "by Spark tasks behind per-member fault proxies (--mode real) or the "
                    "simulator (--mode sim); writes sweep.parquet, sweep.csv, summary.md, "
                    "plots and meta.json to --out. Exits 1 if a run lost acknowledged records "
                    "or failed (a harness error); a group that did not form under its retry "
                    "budget is an outcome, a row of the summary.")
    split_arguments(split)
    split.set_defaults(func=run_split_brain)

    from zkconsumer.spark.splitbrain.validate import add_arguments as split_validate_arguments

    split_val = verbs.add_parser(
        "validate-split-brain", help="the split-brain simulator against real runs",
        description="Simulate every applicable real split-brain row (same plan, seed, N, P, "
                    "protocol and settings) and compare each metric's median with the "
                    "tolerances fixed in advance (results/splitbrain/validation-plan.md); "
                    "writes checks.csv, validation.md and meta.json to --out.")
    split_validate_arguments(split_val)
    split_val.set_defaults(func=run_validate_split_brain)

    from zkconsumer.cli.spark_cluster import register as register_cluster

    register_cluster(verbs)


def _bad_input_exits_2(run: Callable[[argparse.Namespace], int],
                       args: argparse.Namespace) -> int:
    """Run a job; a ``ValueError`` (bad input, named in its message) is exit status 2."""
    try:
        return run(args)
    except ValueError as exc:
        print(f"zkconsumer: error: {exc}", file=sys.stderr)
        return 2


def run_herd(args: argparse.Namespace) -> int:
    from zkconsumer.spark.herd.job import run

    return _bad_input_exits_2(run, args)


def run_split_brain(args: argparse.Namespace) -> int:
    from zkconsumer.spark.splitbrain.job import run

    return _bad_input_exits_2(run, args)


def run_validate_split_brain(args: argparse.Namespace) -> int:
    from zkconsumer.spark.splitbrain.validate import run

    return _bad_input_exits_2(run, args)


def run_formation_spread(args: argparse.Namespace) -> int:
    from zkconsumer.spark.herd.formation_spread import run

    return _bad_input_exits_2(run, args)


def run_fit_speed(args: argparse.Namespace) -> int:
    from zkconsumer.spark.herd.fit_speed_cli import run

    return _bad_input_exits_2(run, args)


def run_rebalance_phases(args: argparse.Namespace) -> int:
    from zkconsumer.spark.herd.rebalance_phases import run

    return _bad_input_exits_2(run, args)


def run_request_types(args: argparse.Namespace) -> int:
    from zkconsumer.spark.herd.request_types import run

    return _bad_input_exits_2(run, args)


def run_validate(args: argparse.Namespace) -> int:
    from zkconsumer.sim import Calibration
    from zkconsumer.spark.herd.scoring_cli import is_distribution_plan_file, run_plan

    if args.plan and is_distribution_plan_file(args.plan):
        return run_plan(args.plan, args.out, args.calibration)
    if not args.real:
        print("zkconsumer: error: --real is required unless --plan is a distribution plan "
              "(one with run 'sets')", file=sys.stderr)
        return 2
    from zkconsumer.spark.herd.validate import (
        Tolerances,
        check_to_dict,
        load_real_rows,
        validate,
        validation_markdown,
    )

    try:
        cal = Calibration.load(args.calibration) if args.calibration else Calibration()
    except (OSError, ValueError) as exc:
        print(f"zkconsumer: error: calibration {args.calibration}: {exc}", file=sys.stderr)
        return 2
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
    tolerances = Tolerances()
    if args.plan:
        try:
            tolerances = Tolerances.from_plan(json.loads(args.plan.read_text()))
        except (OSError, ValueError) as exc:
            print(f"zkconsumer: error: {args.plan}: {exc}", file=sys.stderr)
            return 2
    checks = validate(rows, cal, seeds=args.seeds, tolerances=tolerances)
    text = validation_markdown(checks, cal)
    print(text)
    if args.out:
        args.out.write_text(text)
        print(f"wrote {args.out}")
    if args.json:
        from zkconsumer.results import capture

        prov = capture(" ".join(["zkconsumer", "spark", "validate",
                                 *(f"--real {d}" for d in args.real),
                                 *([f"--calibration {args.calibration}"] if args.calibration
                                   else []),
                                 *([f"--plan {args.plan}"] if args.plan else []),
                                 f"--seeds {args.seeds}", f"--json {args.json}",
                                 *([f"--label {shlex.quote(args.label)}"] if args.label
                                   else [])]))
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({
            "provenance": prov.to_json(), "label": args.label,
            "calibration_source": cal.source,
            "tolerances": dataclasses.asdict(tolerances), "sim_seeds": args.seeds,
            "checks": [check_to_dict(c) for c in checks]}, indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0 if all(c.ok for c in checks) else 1


def run_fit(args: argparse.Namespace) -> int:
    from zkconsumer.spark.herd.fit import run_fit_command

    return _bad_input_exits_2(run_fit_command, args)
