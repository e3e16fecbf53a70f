"""``spark fit``: the calibration parameters no round trip measures, fitted to real runs.

    zkconsumer spark fit --runs results/scale/fitting/eager-range --runs ... \\
        --calibration results/scale/calibration/measured.json \\
        --out results/scale/calibration/calibration.json

``calibrate`` measures request latencies; the broker's group timings (when a coordinator
answers a JoinGroup, when it notices a dead session, how Tansu's coordinator paces its
rounds) only show in whole rebalances. They are fitted here: each parameter of
:data:`FIT_GRIDS` in turn (two passes), every candidate value is scored by simulating the
fitting runs' cells exactly as ``spark validate`` does (:func:`zkconsumer.spark.herd.validate.
validate`), and the value with the smallest :func:`loss` is kept (the current one on a tie).
Only the cells of the protocols a parameter acts on are simulated for it.

The output is the calibration with the fitted values and, per fitted parameter, its origin
(this command and the folders), and a report (``--report``) with every candidate's loss. The
fitting runs must never be the ones a validation scores (``results/scale/validation-plan.json``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zkconsumer.sim import Calibration
from zkconsumer.spark.herd.validate import Check, load_real_rows, validate

log = logging.getLogger(__name__)

BROKER = ("eager-range", "cooperative-sticky")
COOPERATIVE = ("cooperative-sticky",)

# parameter -> (protocols whose cells it moves, candidate values). Ordered: coarse timings
# first, then the finer ones they leave.
FIT_GRIDS: dict[str, tuple[tuple[str, ...], tuple[float, ...]]] = {
    "broker_join_window_factor": (BROKER, (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)),
    "broker_join_start_ms": (BROKER, (0.0, 300.0, 600.0, 900.0, 1200.0, 1600.0, 2000.0,
                                      2500.0, 3000.0)),
    "broker_session_check_factor": (BROKER, (0.85, 0.9, 0.95, 1.0, 1.05, 1.1, 1.2)),
    "broker_leave_wait_factor": (BROKER, (0.0, 0.25, 0.5, 0.75, 1.0, 1.25)),
    "session_expiry_jitter": (BROKER, (0.0, 0.03, 0.06, 0.1)),
    "coop_coordinator_poll_ms": (COOPERATIVE, (250.0, 500.0, 1000.0, 1500.0, 2000.0)),
    "coop_sync_wait_ms": (COOPERATIVE, (3000.0, 4000.0, 5000.0, 6000.0, 7000.0)),
    "coop_formation_stagger_ms": (COOPERATIVE, (0.0, 10.0, 21.0, 40.0, 80.0)),
}
PASSES = 2
MISSING_TIME_PENALTY = 1.0


def loss(checks: Sequence[Check]) -> float:
    """Sum over cells of the relative request error, |log| of the time ratio and attempts apart.

    A time to stable on one side only costs :data:`MISSING_TIME_PENALTY`.
    """
    total = 0.0
    for c in checks:
        total += c.requests_error + 0.5 * abs(c.sim_attempts - c.real_attempts)
        if c.real_tts and c.sim_tts:
            total += abs(math.log(c.sim_tts / c.real_tts))
        elif (c.real_tts is None) != (c.sim_tts is None):
            total += MISSING_TIME_PENALTY
    return total


@dataclass(frozen=True)
class Trial:
    parameter: str
    value: float
    loss: float


@dataclass(frozen=True)
class FitResult:
    calibration: Calibration
    trials: tuple[Trial, ...]
    loss_before: float
    loss_after: float
    fitted: tuple[str, ...]


def fit(rows: Sequence[dict[str, Any]], base: Calibration, parameters: Sequence[str],
        seeds: int = 5, passes: int = PASSES) -> FitResult:
    """Coordinate descent over ``parameters`` (names of :data:`FIT_GRIDS`)."""
    unknown = [p for p in parameters if p not in FIT_GRIDS]
    if unknown:
        raise ValueError(f"cannot fit {unknown}: choose from {', '.join(FIT_GRIDS)}")
    by_protocol: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_protocol.setdefault(r["protocol"], []).append(r)
    active = [p for p in parameters if any(by_protocol.get(x) for x in FIT_GRIDS[p][0])]
    if not active:
        raise ValueError(f"no fitting runs of the protocols {parameters} act on")

    def score(cal: Calibration, protocols: Sequence[str]) -> float:
        cells = [r for x in protocols for r in by_protocol.get(x, [])]
        return loss(validate(cells, cal, seeds=seeds))

    every = sorted({x for p in active for x in FIT_GRIDS[p][0]})
    before = score(base, every)
    cal = base
    trials: list[Trial] = []
    for _ in range(passes):
        for name in active:
            protocols, candidates = FIT_GRIDS[name]
            current = getattr(cal, name)
            best_value, best_loss = current, score(cal, protocols)
            for value in candidates:
                if value == current:
                    continue
                trial = dataclasses.replace(cal, **{name: value})
                got = score(trial, protocols)
                trials.append(Trial(name, value, round(got, 4)))
                if got < best_loss - 1e-9:
                    best_value, best_loss = value, got
            trials.append(Trial(name, current, round(score(cal, protocols), 4)))
            cal = dataclasses.replace(cal, **{name: best_value})
            log.info("fit %s = %s (loss %.3f)", name, best_value, best_loss)
    return FitResult(cal, tuple(trials), round(before, 4), round(score(cal, every), 4),
                     tuple(active))


def add_fit_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runs", required=True, type=Path, action="append",
                   help="a real-mode output directory (its sweep.csv); may repeat")
    p.add_argument("--calibration", required=True, type=Path,
                   help="the measured calibration (`zkconsumer calibrate --out`) to start from")
    p.add_argument("--out", required=True, type=Path, help="calibration file to write")
    p.add_argument("--report", type=Path, default=None,
                   help="also write every candidate's loss here (JSON)")
    p.add_argument("--params", default=",".join(FIT_GRIDS),
                   help=f"parameters to fit (default: all of {', '.join(FIT_GRIDS)})")
    p.add_argument("--seeds", type=int, default=5, help="simulated seeds per cell")


def command_line(args: argparse.Namespace) -> str:
    parts = ["zkconsumer", "spark", "fit"]
    for d in args.runs:
        parts += ["--runs", str(d)]
    parts += ["--calibration", str(args.calibration), "--out", str(args.out)]
    if args.report:
        parts += ["--report", str(args.report)]
    if args.params != ",".join(FIT_GRIDS):
        parts += ["--params", args.params]
    if args.seeds != 5:
        parts += ["--seeds", str(args.seeds)]
    return " ".join(shlex.quote(x) for x in parts)


def run_fit_command(args: argparse.Namespace) -> int:
    from zkconsumer.results import capture

    missing = [str(d) for d in args.runs if not (d / "sweep.csv").is_file()]
    if missing:
        raise ValueError(f"no sweep.csv in {', '.join(missing)} (the output of "
                         "`zkconsumer spark herd --mode real`)")
    if args.seeds < 1:
        raise ValueError(f"--seeds must be >= 1, got {args.seeds}")
    params = [p.strip() for p in args.params.split(",") if p.strip()]
    try:
        base = Calibration.load(args.calibration)
    except OSError as exc:
        raise ValueError(f"calibration {args.calibration}: {exc}") from None
    rows = [r for d in args.runs for r in load_real_rows(d)]
    if not rows:
        raise ValueError("the --runs folders hold no real rows")
    command = command_line(args)
    prov = capture(command)
    result = fit(rows, base, params, seeds=args.seeds)
    folders = ", ".join(str(d) for d in args.runs)
    origins = {name: f"fitted by `{command}` from {folders} on {prov.date} (fitting loss "
                     f"{result.loss_before:g} -> {result.loss_after:g} over the cells of "
                     f"{', '.join(FIT_GRIDS[name][0])})"
               for name in result.fitted}
    for name in FIT_GRIDS:
        if name not in result.fitted:  # no fitting run of a protocol it acts on
            origins[name] = (f"not fitted by `zkconsumer spark fit`: no fitting runs of "
                             f"{', '.join(FIT_GRIDS[name][0])} in {folders}; built-in "
                             f"default {getattr(base, name)!r}")
    source = (f"{base.source}; fitted: {', '.join(result.fitted)} by spark fit from "
              f"{folders}")
    cal = dataclasses.replace(result.calibration, source=source).with_origins(origins)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cal.save(args.out)
    summary = {name: getattr(cal, name) for name in result.fitted}
    if args.report:
        args.report.write_text(json.dumps({
            "provenance": prov.to_json(), "loss_before": result.loss_before,
            "loss_after": result.loss_after, "fitted": summary,
            "grids": {k: list(v[1]) for k, v in FIT_GRIDS.items() if k in result.fitted},
            "trials": [dataclasses.asdict(t) for t in result.trials]}, indent=1) + "\n")
    print(json.dumps({"loss_before": result.loss_before, "loss_after": result.loss_after,
                      "fitted": summary}, indent=2))
    print(f"wrote {args.out}")
    return 0
