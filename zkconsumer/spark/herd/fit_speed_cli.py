"""``zkconsumer spark fit-speed``: fit the formation read the calibration stands for.

    zkconsumer spark fit-speed --fit PLAN.json=ROWS.csv [--fit ...] --set tansu \\
        --protocol zk-range --members 48 --out DIR

Each ``--fit`` is an earlier distribution plan and the ``spark formation-spread`` rows of its
set's runs (their ``formation_read`` rows). The model is drawn at a grid of speed factors
(:meth:`zkconsumer.sim.Calibration.slowed`) with the settings the plan's cells were made with,
and the reference is the one whose factors (each set's median formation read over it) bring
the model's median time to stable nearest the sets' real medians
(:func:`.set_speed.fit_reference`). Writes ``fit.json``, ``fit.md`` and ``meta.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
from pathlib import Path

from zkconsumer.results.distributions import CellKey, settled
from zkconsumer.results.real_runs import spread_rows
from zkconsumer.spark.herd.scoring import (
    DistPlan,
    RunSet,
    SetRows,
    draw,
    plan_producer_events,
    real_runs,
    set_observation,
)
from zkconsumer.spark.herd.scoring_cli import repo_root
from zkconsumer.spark.herd.set_speed import PER, FitCell, fit_json, fit_reference, interpolate

# Factors the model is drawn at, and the references tried (seconds of formation read).
FACTORS = tuple(round(0.6 + 0.05 * i, 2) for i in range(25))  # 0.6 .. 1.8
CANDIDATES = tuple(round(0.5 + 0.005 * i, 3) for i in range(301))  # 0.5 .. 2.0 s


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fit", action="append", required=True, metavar="PLAN=ROWS",
                   help="an earlier distribution plan and its set's formation-spread rows "
                        "(a CSV with formation_read rows); repeat for each set")
    p.add_argument("--set", default="tansu", help="the run set of each plan fitted on")
    p.add_argument("--protocol", default="zk-range", help="the cells' protocol")
    p.add_argument("--members", type=int, default=48, help="the cells' group size")
    p.add_argument("--calibration", type=Path, required=True,
                   help="the calibration the plan this fit serves draws with")
    p.add_argument("--event-on-producer", type=Path, default=None,
                   help="producer_event rows placing the event on the producer's cycle, as "
                        "the plan this fit serves draws it")
    p.add_argument("--draws", type=int, default=40, help="model draws per factor and event")
    p.add_argument("--per", choices=PER, default="folder",
                   help="whose formation reads give a cell's factor: its folder's median (join "
                        "and leave runs together) or its own runs' (set_speed's per)")
    p.add_argument("--out", type=Path, required=True,
                   help="folder for fit.json, fit.md and meta.json")


def _pair(text: str) -> tuple[Path, Path]:
    plan, sep, rows = text.partition("=")
    if not sep or not plan or not rows:
        raise ValueError(f"--fit wants PLAN.json=ROWS.csv, got {text!r}")
    return Path(plan), Path(rows)


def _set(plan: DistPlan, name: str, path: Path) -> RunSet:
    for s in plan.sets:
        if s.name == name:
            return s
    raise ValueError(f"{path}: no run set named {name!r} (it has "
                     f"{', '.join(s.name for s in plan.sets)})")


def run(args: argparse.Namespace) -> int:
    if args.draws < 1:
        raise ValueError(f"--draws must be >= 1, got {args.draws}")
    try:
        return _fit(args)
    except OSError as exc:  # a missing plan, rows or calibration file: bad input, named
        raise ValueError(str(exc)) from None


def _fit(args: argparse.Namespace) -> int:
    from zkconsumer.results import capture
    from zkconsumer.results.provenance import write_provenance
    from zkconsumer.sim import Calibration

    cal = Calibration.load(args.calibration)
    cells: list[FitCell] = []
    curves: dict[tuple[str, int, int, int], list[tuple[float, float]]] = {}
    for plan_path, rows_path in (_pair(t) for t in args.fit):
        plan = DistPlan.from_json(json.loads(plan_path.read_text()))
        plan = dataclasses.replace(plan, sim_draws=args.draws, event_on_producer=(
            str(args.event_on_producer) if args.event_on_producer else None))
        repo = repo_root(plan_path)
        run_set = _set(plan, args.set, plan_path)
        set_rows = SetRows.from_rows(spread_rows(rows_path))
        keys = [CellKey(run_set.name, run_set.broker, args.protocol, args.members,
                        plan.partitions, event) for event in plan.events]
        reads = {key: set_rows.read(key, args.per) for key in keys}
        for key, read in reads.items():  # every cell's read before any draw
            if read is None:
                raise ValueError(f"{rows_path}: no formation_read rows for {args.protocol} "
                                 f"N = {args.members}"
                                 + (f" {key.event}" if args.per == "cell" else ""))
        on_producer = plan_producer_events(plan, repo)
        for key, read in reads.items():
            event = key.event
            real, tasks = real_runs(repo, run_set, key, set())
            real_tts = settled(real)
            if not real_tts:
                raise ValueError(f"{plan_path}: {key.protocol} N = {key.members} {event}: no "
                                 "settled real run to fit on")
            curve_key = (event, plan.session_timeout_ms, plan.partitions, tasks)
            if curve_key not in curves:
                cue = on_producer.get((args.protocol, args.members, event), ())
                observed = set_observation(repo, run_set, key)
                curves[curve_key] = [
                    (f, statistics.median(settled(draw(run_set, key, plan, cal.slowed(f), tasks,
                                                       None, cue, observation=observed)[1])))
                    for f in FACTORS]
            cells.append(FitCell(plan_path.stem, event, read, statistics.median(real_tts),
                                 interpolate(curves[curve_key])))
    fit = fit_reference(cells, CANDIDATES)
    command = " ".join(["zkconsumer spark fit-speed", *(f"--fit {t}" for t in args.fit),
                        f"--set {args.set} --protocol {args.protocol}",
                        f"--members {args.members} --calibration {args.calibration}",
                        *([f"--event-on-producer {args.event_on_producer}"]
                          if args.event_on_producer else []),
                        f"--draws {args.draws}",
                        *([f"--per {args.per}"] if args.per != "folder" else []),
                        f"--out {args.out}"])
    prov = capture(command)
    data = fit_json(fit, {"protocol": args.protocol, "members": args.members,
                          "draws": args.draws, "factors": list(FACTORS),
                          **({"per": args.per} if args.per != "folder" else {}),
                          "model_curves": {f"{k[0]}": [[f, round(m, 4)] for f, m in v]
                                           for k, v in curves.items()}})
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "fit.json").write_text(json.dumps(data, indent=1) + "\n")
    lines = [f"reference formation read: {fit.reference_s:.3f} s "
             f"(squared log error {fit.loss:.4f} over {len(cells)} cells)", "",
             "| set | event | formation read (s) | factor | real median (s) | model median (s) |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {label} | {event} | {fr:.3f} | {factor:.3f} | {real:.3f} | {m:.3f} |"
              for label, event, fr, factor, real, m in fit.cells]
    text = "\n".join(lines) + "\n"
    (args.out / "fit.md").write_text(text)
    write_provenance(args.out, prov)
    print(text, end="")
    print(f"wrote {args.out}/fit.json, fit.md, meta.json", file=sys.stderr)
    return 0
