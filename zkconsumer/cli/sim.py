"""``sim``: the simulator checked against committed real runs.

    zkconsumer sim kafka-check [results/comparison] [--seen FOLDER ...]
    zkconsumer sim placement-check --real DIR [--real DIR ...] --out DIR [--calibration FILE]

Scores the Kafka coordinator profile on the Kafka 2.4.1 runs it was not fitted to, as
``results/comparison/kafka-model-plan.md`` fixes (:mod:`zkconsumer.sim.kafka_check`), and
writes ``kafka-model-check/checks.json`` and ``sim-profiles/rows.json`` under the results
folder, each with its ``meta.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    sim = sub.add_parser("sim", help="the simulator against committed real runs")
    verbs = sim.add_subparsers(dest="sim_verb", metavar="SUBVERB")
    verbs.required = True
    kc = verbs.add_parser(
        "kafka-check", help="the Kafka coordinator profile against Kafka 2.4.1 runs",
        description="Simulate every scored cell of the Kafka 2.4.1 comparison runs and compare "
                    "the medians with the plan's tolerances (requests 10%, time to stable "
                    "20%); also writes the Tansu-timed and Kafka-modelled profiles side by "
                    "side at larger N.")
    kc.add_argument("results", type=Path, nargs="?", default=Path("results/comparison"),
                    help="the comparison results folder (default: results/comparison)")
    kc.add_argument("--seen", action="append", default=[],
                    help="a results folder looked at before the profile's last change")
    kc.set_defaults(func=run_kafka_check)
    pc = verbs.add_parser(
        "placement-check", help="the placement model against development runs' slowdown",
        description="Simulate each legacy zombie row of the given real split-brain folders "
                    "with the model as it was (a core per process), this machine's placement "
                    "and one host per member, and write the times and slowdowns to "
                    "OUT/checks.json (zkconsumer.spark.splitbrain.placement_check). Give it "
                    "the runs the model was developed on, not held-out runs.")
    pc.add_argument("--real", type=Path, action="append", required=True,
                    help="a real `spark split-brain` output folder; may repeat")
    pc.add_argument("--calibration", type=Path,
                    default=Path("results/scale/calibration/calibration.json"),
                    help="calibration file (default: the committed one)")
    pc.add_argument("--draws", type=int, default=5, help="simulated draws per row (median)")
    pc.add_argument("--out", type=Path, required=True, help="output folder")
    pc.set_defaults(func=run_placement_check)


def run_placement_check(args: argparse.Namespace) -> int:
    from zkconsumer.results.provenance import capture, write_provenance
    from zkconsumer.sim import Calibration
    from zkconsumer.spark.splitbrain.placement_check import PLACEMENTS, check

    if args.draws < 1:
        raise ValueError(f"--draws must be >= 1, got {args.draws}")
    command = " ".join(["zkconsumer sim placement-check",
                        *(f"--real {d}" for d in args.real),
                        f"--calibration {args.calibration}", f"--draws {args.draws}",
                        f"--out {args.out}"])
    prov = capture(command, broker="")
    rows = check(args.real, Calibration.load(args.calibration), args.draws)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "checks.json").write_text(json.dumps(
        {"calibration": str(args.calibration), "draws": args.draws,
         "placements": list(PLACEMENTS), "rows": rows}, indent=1) + "\n")
    write_provenance(args.out, prov)
    print(args.out / "checks.json")
    return 0


def run_kafka_check(args: argparse.Namespace) -> int:
    from zkconsumer.results.comparison_data import load_runs
    from zkconsumer.results.provenance import capture, write_provenance
    from zkconsumer.sim.kafka_check import (
        KAFKA_RUNS,
        REQUESTS_TOLERANCE,
        SEEDS,
        TIME_TOLERANCE,
        check,
        profile_rows,
        real_cells,
    )

    results: Path = args.results
    command = " ".join(["zkconsumer sim kafka-check", str(results),
                        *(f"--seen {f}" for f in args.seen)])
    prov = capture(command, broker="")
    runs = [r for folder in sorted(results.glob(f"*{KAFKA_RUNS}*"))
            if (folder / "runs.json").is_file() for r in load_runs(folder)]
    seen = [c for f in args.seen for c in real_cells(load_runs(results / f))]
    checks = check(runs, seen=seen)
    out = results / "kafka-model-check"
    out.mkdir(parents=True, exist_ok=True)
    (out / "checks.json").write_text(json.dumps(
        {"tolerances": {"requests": REQUESTS_TOLERANCE, "time_to_stable": TIME_TOLERANCE},
         "seeds": list(SEEDS), "seen": list(args.seen),
         "cells": [c.to_json() for c in checks]}, indent=1) + "\n")
    write_provenance(out, prov)
    prof = results / "sim-profiles"
    prof.mkdir(parents=True, exist_ok=True)
    (prof / "rows.json").write_text(json.dumps({"rows": profile_rows()}, indent=1) + "\n")
    write_provenance(prof, prov)
    print(out / "checks.json")
    print(prof / "rows.json")
    return 0
