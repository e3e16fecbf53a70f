"""``zkconsumer spark validate --plan PLAN --out DIR`` for a distribution plan: score, print,
and write the scoring folder (``scoring.json``, ``scoring.md``, ``meta.json``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from zkconsumer.results.distributions import pass_line, score_table
from zkconsumer.spark.herd.scoring import (
    DistPlan,
    is_distribution_plan,
    plan_calibration,
    score_plan,
    scoring_json,
)


def is_distribution_plan_file(path: Path) -> bool:
    try:
        return is_distribution_plan(json.loads(path.read_text()))
    except (OSError, ValueError):
        return False


def repo_root(plan_path: Path) -> Path:
    """The checkout the plan's folders are relative to: the ancestor holding ``results/``."""
    for parent in plan_path.resolve().parents:
        if (parent / "results").is_dir() and (parent / "zkconsumer").is_dir():
            return parent
    return Path.cwd()


def run_plan(plan_path: Path, out: Path | None, calibration: Path | None) -> int:
    from zkconsumer.results import capture
    from zkconsumer.results.provenance import write_provenance
    from zkconsumer.sim import Calibration

    try:
        plan = DistPlan.from_json(json.loads(plan_path.read_text()))
        repo = repo_root(plan_path)
        cal = Calibration.load(calibration) if calibration else plan_calibration(plan, repo)
    except (OSError, ValueError) as exc:
        print(f"zkconsumer: error: {plan_path}: {exc}", file=sys.stderr)
        return 2
    scores = score_plan(plan, repo, cal)
    text = "\n".join([pass_line(scores), "", plan.tolerances.describe(), "",
                      *score_table(scores)]) + "\n"
    print(text)
    if out is not None:
        command = " ".join(["zkconsumer spark validate", f"--plan {plan_path}",
                            *([f"--calibration {calibration}"] if calibration else []),
                            f"--out {out}"])
        prov = capture(command)
        out.mkdir(parents=True, exist_ok=True)
        (out / "scoring.json").write_text(scoring_json(scores, plan, cal, prov.to_json()))
        (out / "scoring.md").write_text(text)
        write_provenance(out, prov)
        print(f"wrote {out}/scoring.json, scoring.md, meta.json")
    judged = [s for s in scores if s.judged]
    return 0 if judged and all(s.ok for s in judged) else 1
