"""The split-brain simulator against real runs, with the tolerances fixed in advance.

The tolerances are those of ``results/splitbrain/validation-plan.md`` (committed before the
real runs it judges). For every applicable real row, the simulator runs the same cell (same
plan: same seed, N, P, protocol, settings, the real run's two client processes) with
``draws`` draws of its own randomness, and each metric's median is compared.

    zkconsumer spark validate-split-brain --real DIR [--real DIR ...] \
        [--fix results/splitbrain/fix-leader-watch] [--plan PLAN.json] [--calibration FILE] \
        --out DIR

A ``--plan`` file (JSON: ``calibration``, ``draws`` and ``cells``, each ``[protocol, scenario,
N, seed]``) fixes in advance which cells are scored and with which calibration: rows of other
cells are left out, and the plan's cells without a scored row are written to
``unscored.csv`` with the reason their run recorded (a failed run) or "not run".

A plan's ``formation`` names the ``protocol/scenario`` pairs whose runs are also scored on
whether the group formed at all (:func:`formation_checks`): those include the plan's runs that
failed because some initial member exited, which the other checks cannot score.

A row measured without a fix of its protocol (``--fix``: the folder written by
``zkconsumer results ancestry``) judges a defect, not the model, and is left out. When
several runs hold the same cell (protocol, scenario, N, P, seed), the most recent one (its
``meta.json`` date) is scored: a cell is re-run because its earlier run no longer measures the
code as it is; ``checks.csv`` names the run each check comes from.
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zkconsumer.results.ancestry import Fix, read_fix
from zkconsumer.results.exclusions import NOT_FORMED, formation_verdict, sweep_rows
from zkconsumer.scenarios.splitbrain import ScenarioParams
from zkconsumer.scenarios.timing import Timing
from zkconsumer.sim.calibration import Calibration
from zkconsumer.sim.splitbrain.formation import p_formed
from zkconsumer.sim.splitbrain.simulate import SplitSimSettings, simulate_cell
from zkconsumer.spark.splitbrain.real import SplitCellKey
from zkconsumer.tables import median

log = logging.getLogger(__name__)

RELATIVE = 0.5
GIVE_UP_FACTOR = 3.0


@dataclass(frozen=True)
class MetricCheck:
    protocol: str
    scenario: str
    members: int
    seed: int | None             # None: a check pooled over the cell's seeds
    metric: str
    real: float | None
    sim: float | None
    ok: bool
    rule: str
    run: str = ""


def _num(v: Any) -> float | None:
    return None if v in (None, "") else float(v)


def within(real: float | None, sim: float | None, rel: float, floor: float) -> bool:
    """Sim within ``rel`` of real, or both below ``floor``; None only matches None."""
    if real is None or sim is None:
        return real is None and sim is None
    if real < floor and sim < floor:
        return True
    return abs(sim - real) <= rel * max(real, 1e-9)


def rules(protocol: str, scenario: str) -> list[tuple[str, str]]:
    """(metric, rule) pairs of the plan that apply to a cell."""
    if protocol == "zk-leader-range":
        return [(m, "zero") for m in ("double_owned_partition_s", "conflicts",
                                      "rebalances_given_up")]
    if protocol != "zk-range":
        return [(m, "zero") for m in ("conflicts", "rebalances_given_up")]
    out = [("time_to_stable_s", "rel50")]
    if scenario == "zombie":
        out += [("double_owned_partition_s", "rel50-floor1"),
                ("zombie_deliveries", "rel50-floor5")]
    elif scenario == "stale-view":
        out.append(("conflicts", "abs2-or-rel50"))
    else:
        out += [("gave_up", "same-verdict"), ("rebalances_given_up", "factor3")]
    return out


def judge(rule: str, real: float | None, sim: float | None) -> bool:
    if rule == "zero":
        return real == 0 and sim == 0
    if rule == "rel50":
        return within(real, sim, RELATIVE, 0.0)
    if rule == "rel50-floor1":
        return within(real, sim, RELATIVE, 1.0)
    if rule == "rel50-floor5":
        return within(real, sim, RELATIVE, 5.0)
    if rule == "abs2-or-rel50":
        return real is not None and sim is not None and \
            abs(sim - real) <= max(2.0, RELATIVE * real)
    if rule == "same-verdict":
        return real is not None and sim is not None and (real > 0) == (sim > 0)
    if rule == "factor3":
        if real is None or sim is None:
            return False
        if real == 0 or sim == 0:
            return real == sim
        return 1 / GIVE_UP_FACTOR <= sim / real <= GIVE_UP_FACTOR
    raise ValueError(f"unknown rule {rule!r}")


def latest_rows(dirs: Sequence[Path], accept: Callable[[str, dict[str, Any]], bool],
                key: Callable[[dict[str, Any]], tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Of each cell (``key``), the row that ``accept`` takes (given the run folder's name)
    from the most recent run (its ``meta.json`` date), ``run`` naming its folder, in key
    order: a cell is re-run because its earlier run no longer measures the code as it is."""
    latest: dict[tuple[Any, ...], tuple[str, dict[str, Any]]] = {}
    for d in dirs:
        date = str(json.loads((d / "meta.json").read_text()).get("date", "")) \
            if (d / "meta.json").is_file() else ""
        for r in sweep_rows(d):
            if not accept(d.name, r):
                continue
            k = key(r)
            if k not in latest or latest[k][0] < date:
                latest[k] = (date, {**r, "run": d.name})
    return [row for _, row in (latest[k] for k in sorted(latest))]


def load_rows(dirs: Sequence[Path], fix: Fix | None = None) -> list[dict[str, Any]]:
    """The applicable real rows to score: without those measured before ``fix``, and of each
    cell only the most recent run's row (``run`` names its folder)."""
    def accept(run: str, r: dict[str, Any]) -> bool:
        return (r["mode"] == "real" and r["applicable"] == "true" and not r["reason"]
                and not (fix is not None and fix.predates(run, r["protocol"])))
    return latest_rows(dirs, accept, lambda r: (r["protocol"], r["scenario"], r["members"],
                                                r["partitions"], r["seed"]))


@dataclass(frozen=True)
class ValidationPlan:
    """The cells to score, the calibration and the draws, fixed before the real runs.

    ``rules`` replaces the built-in per-row rules of a ``protocol/scenario`` (a list of
    ``[metric, rule]``); ``pooled`` names the ``protocol/scenario`` pairs whose "some member
    gave up" is judged over all seeds of an N at once (:func:`pooled_checks`), an outcome
    the model gives as a probability; ``formation`` names those whose runs are also judged,
    per N, on how many formed (:func:`formation_checks`).
    """

    cells: tuple[tuple[str, str, int, int], ...]
    calibration: Path | None = None
    draws: int = 5
    rules: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    pooled: tuple[str, ...] = ()
    formation: tuple[str, ...] = ()

    @classmethod
    def load(cls, path: Path) -> ValidationPlan:
        try:
            data = json.loads(path.read_text())
            cells = tuple((str(p), str(sc), int(n), int(seed)) for p, sc, n, seed
                          in data["cells"])
            cal = data.get("calibration")
            rules_ = {str(k): tuple((str(m), str(r)) for m, r in v)
                      for k, v in data.get("rules", {}).items()}
            for pairs in rules_.values():
                for _, rule in pairs:
                    judge(rule, 0.0, 0.0)          # an unknown rule is an error now
            return cls(cells, Path(cal) if cal else None, int(data.get("draws", 5)),
                       rules_, tuple(str(x) for x in data.get("pooled", ())),
                       tuple(str(x) for x in data.get("formation", ())))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"validation plan {path}: {exc}") from exc

    def covers(self, row: dict[str, Any]) -> bool:
        return (row["protocol"], row["scenario"], int(row["members"]),
                int(row["seed"])) in self.cells


def unscored(plan: ValidationPlan, scored: Sequence[dict[str, Any]],
             dirs: Sequence[Path]) -> list[dict[str, Any]]:
    """The plan's cells without a scored row, each with its failed run's reason or "not run"
    (a run whose group did not form, in a pair scored on formation, says it was counted
    there)."""
    done = {(r["protocol"], r["scenario"], int(r["members"]), int(r["seed"])) for r in scored}
    failed: dict[tuple[str, str, int, int], str] = {}
    for d in dirs:
        for r in sweep_rows(d):
            if r["mode"] == "real" and r["applicable"] == "true" and r["reason"]:
                key = (r["protocol"], r["scenario"], int(r["members"]), int(r["seed"]))
                why = f"{r['reason']} ({d.name})"
                failed[key] = f"{failed[key]}; {why}" if key in failed else why
    pairs_scored_on_formation = set(plan.formation)
    out = []
    for p, sc, n, seed in plan.cells:
        if (p, sc, n, seed) in done:
            continue
        reason = failed.get((p, sc, n, seed), "not run")
        if f"{p}/{sc}" in pairs_scored_on_formation and NOT_FORMED in reason:
            reason = f"counted in runs_formed only: {reason}"
        out.append({"protocol": p, "scenario": sc, "members": n, "seed": seed,
                    "reason": reason})
    return out


def binomial_range(runs: int, p: float, mass: float = 0.95) -> tuple[int, int]:
    """The central ``mass`` of Binomial(runs, p): the smallest and largest counts whose tails
    are each at least (1 - mass) / 2 likely."""
    pmf = [math.comb(runs, k) * p ** k * (1 - p) ** (runs - k) for k in range(runs + 1)]
    tail = (1 - mass) / 2
    lo = next(k for k in range(runs + 1) if sum(pmf[:k + 1]) > tail)
    hi = next(k for k in range(runs, -1, -1) if sum(pmf[k:]) > tail)
    return lo, hi


def pooled_checks(outcomes: dict[tuple[str, str, int], list[tuple[str, bool, list[bool]]]]
                  ) -> list[MetricCheck]:
    """Per (protocol, scenario, N): how many real runs had some member give up, against the
    model's probability (the mean over those runs' seeds and draws): it passes when the count
    lies in the central 95 % of Binomial(runs, p)."""
    checks = []
    for (protocol, scenario, n), runs in sorted(outcomes.items()):
        draws = [d for _, _, ds in runs for d in ds]
        checks.append(binomial_check(protocol, scenario, n, "runs_with_give_up",
                                     sum(gave for _, gave, _ in runs), len(runs),
                                     sum(draws) / len(draws) if draws else 0.0,
                                     {run for run, _, _ in runs}))
    return checks


def binomial_check(protocol: str, scenario: str, n: int, metric: str, real: int, runs: int,
                   p: float, names: set[str]) -> MetricCheck:
    """``real`` of ``runs`` against the model's probability ``p``: passes when the count lies
    in the central 95 % of Binomial(runs, p); ``sim`` is the expected count."""
    lo, hi = binomial_range(runs, p)
    return MetricCheck(protocol, scenario, n, None, metric, real, round(p * runs, 2),
                       lo <= real <= hi, f"binomial95-of-{runs}", ",".join(sorted(names)))


def formation_rows(dirs: Sequence[Path], plan: ValidationPlan) -> list[dict[str, Any]]:
    """The plan's real rows of its ``formation`` pairs with a formation verdict
    (:func:`.formation_verdict`, as ``formed``), the most recent run of each cell."""
    def cell(r: dict[str, Any]) -> tuple[str, str, int, int]:
        return r["protocol"], r["scenario"], int(r["members"]), int(r["seed"])

    def accept(_run: str, r: dict[str, Any]) -> bool:
        return (r["mode"] == "real" and r["applicable"] == "true"
                and f"{r['protocol']}/{r['scenario']}" in plan.formation
                and cell(r) in plan.cells and formation_verdict(r) is not None)
    return [{**r, "formed": formation_verdict(r)} for r in latest_rows(dirs, accept, cell)]


def formation_checks(rows: Sequence[dict[str, Any]], cal: Calibration, draws: int
                     ) -> list[MetricCheck]:
    """Per (protocol, scenario, N): how many real runs formed, against the model's probability
    of forming (:func:`.formation.p_formed`, the mean over those runs' seeds): it passes when
    the count lies in the central 95 % of Binomial(runs, p)."""
    by_n: dict[tuple[str, str, int], list[tuple[dict[str, Any], float]]] = {}
    for r in rows:
        p = p_formed(int(r["members"]), int(r["partitions"]), cal,
                     int(r["session_timeout_ms"]) / 1000.0,
                     int(r["rebalance_backoff_ms"]) / 1000.0, int(r["rebalance_max_retries"]),
                     int(r.get("tasks") or 2), int(r["seed"]), draws)
        by_n.setdefault((r["protocol"], r["scenario"], int(r["members"])), []).append((r, p))
    return [binomial_check(protocol, scenario, n, "runs_formed",
                           sum(1 for r, _ in runs if r["formed"]), len(runs),
                           sum(x for _, x in runs) / len(runs), {r["run"] for r, _ in runs})
            for (protocol, scenario, n), runs in sorted(by_n.items())]


def validate(rows: Sequence[dict[str, Any]], draws: int = 5,
             calibration: Calibration | None = None,
             plan: ValidationPlan | None = None) -> list[MetricCheck]:
    checks = []
    cal = calibration if calibration is not None else Calibration()
    pooled: dict[tuple[str, str, int], list[tuple[str, bool, list[bool]]]] = {}
    for r in rows:
        key = SplitCellKey(r["protocol"], r["scenario"], int(r["members"]),
                           int(r["partitions"]), int(r["seed"]))
        timing = Timing(session_timeout_ms=int(r["session_timeout_ms"]),
                        rebalance_backoff_ms=int(r["rebalance_backoff_ms"]),
                        rebalance_max_retries=int(r["rebalance_max_retries"]), quiet_s=2.5)
        params = ScenarioParams(
            zombie_fraction=_num(r["zombie_fraction"]) or ScenarioParams.zombie_fraction,
            cut_factor=(_num(r["cut_s"]) or 12.0) * 1000.0 / timing.session_timeout_ms,
            delay_ms_max=_num(r["delay_ms_max"]) or ScenarioParams.delay_ms_max,
            max_retries=int(r["rebalance_max_retries"]) if r["scenario"] == "storm" else 1)
        settings = SplitSimSettings(calibration=cal, timing=timing, params=params,
                                    tasks=int(r["tasks"] or 2))
        sims = [simulate_cell(key, settings, draw) for draw in range(draws)]
        pair = f"{key.protocol}/{key.scenario}"
        if plan is not None and pair in plan.pooled:
            pooled.setdefault((key.protocol, key.scenario, key.members), []).append(
                (r.get("run", ""), (_num(r["rebalances_given_up"]) or 0) > 0,
                 [(s.get("rebalances_given_up") or 0) > 0 for s in sims]))
        row_rules = plan.rules.get(pair) if plan is not None else None
        for metric, rule in (row_rules if row_rules is not None
                             else rules(key.protocol, key.scenario)):
            if metric == "gave_up":
                real = _num(r["rebalances_given_up"])
                sim = median(s.get("rebalances_given_up") for s in sims)
            else:
                real = _num(r[metric])
                sim = median(_num(s.get(metric)) for s in sims)
            checks.append(MetricCheck(key.protocol, key.scenario, key.members, key.seed,
                                      metric, real, sim, judge(rule, real, sim), rule,
                                      r.get("run", "")))
    return checks + pooled_checks(pooled)


def _f(v: float | None) -> str:
    return "—" if v is None else f"{v:,.2f}"


def markdown(checks: Sequence[MetricCheck], plan: str = "results/splitbrain/validation-plan.md",
             draws: int = 5) -> str:
    cells: dict[tuple[str, str, int, int | None], bool] = {}
    for c in checks:
        key = (c.protocol, c.scenario, c.members, c.seed)
        cells[key] = cells.get(key, True) and c.ok
    lines = [f"{sum(cells.values())} of {len(cells)} cells and {sum(c.ok for c in checks)} of "
             f"{len(checks)} metric checks within the tolerances fixed in advance "
             f"(`{plan}`).", "",
             f"| protocol | scenario | N | seed | metric | real | sim (median of {draws}) | rule "
             "| ok |",
             "|---|---|---|---|---|---|---|---|---|"]
    for c in sorted(checks, key=lambda c: (c.scenario, c.protocol, c.members, c.seed or 0,
                                           c.metric)):
        seed = "all" if c.seed is None else c.seed
        lines.append(f"| {c.protocol} | {c.scenario} | {c.members} | {seed} | {c.metric} | "
                     f"{_f(c.real)} | {_f(c.sim)} | {c.rule} | {'yes' if c.ok else 'NO'} |")
    return "\n".join(lines) + "\n"


def write_csv(checks: Sequence[MetricCheck], path: Path) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["protocol", "scenario", "members", "seed", "metric", "real", "sim", "rule",
                    "ok", "run"])
        for c in checks:
            w.writerow([c.protocol, c.scenario, c.members, "" if c.seed is None else c.seed,
                        c.metric,
                        "" if c.real is None else c.real, "" if c.sim is None else c.sim,
                        c.rule, c.ok, c.run])


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--real", type=Path, action="append", required=True,
                   help="a real-mode split-brain output folder (its sweep.csv); may repeat")
    p.add_argument("--out", type=Path, required=True,
                   help="folder to write checks.csv, validation.md and meta.json to")
    p.add_argument("--draws", type=int, default=5,
                   help="simulated draws per real row (the median is compared)")
    p.add_argument("--fix", type=Path, default=None,
                   help="leave out rows measured before this fix (a `zkconsumer results "
                        "ancestry` output folder)")
    p.add_argument("--plan", type=Path, default=None,
                   help="JSON plan fixing the cells, calibration and draws (see above)")
    p.add_argument("--calibration", type=Path, default=None,
                   help="calibration file (default: the plan's, else built in)")


def run(args: argparse.Namespace) -> int:
    """``zkconsumer spark validate-split-brain``: the checks, written to ``args.out``."""
    missing = [str(d) for d in args.real if not (d / "sweep.csv").is_file()]
    if missing:
        print(f"zkconsumer: error: no sweep.csv in {', '.join(missing)}", file=sys.stderr)
        return 2
    from zkconsumer.results import capture, write_provenance

    prov = capture(" ".join(["zkconsumer", "spark", "validate-split-brain",
                             *(f"--real {d}" for d in args.real),
                             *([f"--fix {args.fix}"] if args.fix else []),
                             *([f"--plan {args.plan}"] if args.plan else []),
                             *([f"--calibration {args.calibration}"] if args.calibration
                               else []), f"--out {args.out}"]))
    if args.fix is not None and not (args.fix / "runs.csv").is_file():
        print(f"zkconsumer: error: --fix {args.fix} has no runs.csv", file=sys.stderr)
        return 2
    fix = read_fix(args.fix) if args.fix is not None else None
    try:
        vplan = ValidationPlan.load(args.plan) if args.plan is not None else None
        cal_path = args.calibration or (vplan.calibration if vplan else None)
        cal = Calibration.load(cal_path) if cal_path is not None else None
    except (OSError, ValueError) as exc:
        print(f"zkconsumer: error: {exc}", file=sys.stderr)
        return 2
    rows = load_rows(args.real, fix)
    draws = args.draws
    if vplan is not None:
        rows = [r for r in rows if vplan.covers(r)]
        draws = vplan.draws
    checks = validate(rows, draws, cal, vplan)
    if vplan is not None and vplan.formation:
        checks += formation_checks(formation_rows(args.real, vplan),
                                   cal if cal is not None else Calibration(), draws)
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(checks, args.out / "checks.csv")
    if vplan is not None:
        with open(args.out / "unscored.csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, ["protocol", "scenario", "members", "seed", "reason"])
            w.writeheader()
            w.writerows(unscored(vplan, rows, args.real))
    text = markdown(checks, str(args.plan) if args.plan else
                    "results/splitbrain/validation-plan.md", draws)
    (args.out / "validation.md").write_text(text)
    write_provenance(args.out, prov)
    print(text)
    return 0

