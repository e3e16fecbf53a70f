"""Generated blocks of docs/validation-split-brain.md, from ``results/splitbrain/``.

- ``splitbrain-scoring-first``: the simulator against the first real runs (``validation/``);
- ``splitbrain-scoring-large-groups`` (plan 3: zombie and stale view at N = 50 to 200, the
  leader storm at N = 200), ``splitbrain-scoring-storm-budget-2`` (plan 4) and
  ``splitbrain-scoring-formation-budget-1`` (plan 5): the changed simulator against new
  held-out runs (``validation-N/checks.csv``, ``validation-N/unscored.csv``);
- ``splitbrain-exclusions``: the real rows that did not run their scenario, the runs whose
  group did not form as one line per cell;
- ``splitbrain-ancestry``: which real runs predate the leader-mode fix and the job's formation
  check, as stored by ``zkconsumer.results.ancestry``.
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from zkconsumer.results.figures.splitbrain import (
    AREA,
    FIX_FOLDER,
    FORMATION_FOLDER,
    PRE_FIX_MARK,
    RowKind,
    decimal,
    fix_of,
    folders_line,
    num,
    real_rows,
    reproduce,
    row_kind,
    rows_of,
)
from zkconsumer.results.registry import Context, figure
from zkconsumer.scenarios.protocols import PROTOCOL_TABLE, SPLIT_BRAIN

NOT_FORMED = re.compile(r"the group did not form: (?P<exited>\d+) of (?P<n>\d+) initial members "
                        r"exited before it was stable \(rebalance\.max\.retries = (?P<b>\d+)\)")
RUN_SUFFIX = re.compile(r" \((?:`)?(?P<run>real-[\w.-]+)(?:`)?\)$")


def exited(reason: str) -> tuple[int, int] | None:
    """(initial members that exited, budget) of a "did not form" reason; None for another."""
    m = NOT_FORMED.search(reason)
    return (int(m["exited"]), int(m["b"])) if m else None


def seeds_text(seeds: list[int]) -> str:
    return ", ".join(map(str, sorted(seeds)))


def compact_reasons(rows: list[dict[str, str]]) -> list[str]:
    """Unscored plan cells, one line per (protocol, scenario, N, reason): the runs whose group
    did not form merged into one line with their seeds and how many initial members exited."""
    groups: dict[tuple[str, ...], list[tuple[int, str]]] = defaultdict(list)
    for r in rows:
        reason = r["reason"]
        got = exited(reason)
        run = RUN_SUFFIX.search(reason)
        if got is not None and run is not None and reason.count("did not form") == 1:
            counted = " (counted in runs_formed only)" if reason.startswith("counted in") else ""
            key = (r["protocol"], r["scenario"], r["members"],
                   f"the group did not form{counted}", run["run"])
        else:
            key = (r["protocol"], r["scenario"], r["members"], reason, "")
        groups[key].append((int(r["seed"] or 0), reason))
    out = []
    for (p, sc, n, why, run), items in sorted(groups.items(), key=lambda x: (
            x[0][0], x[0][1], int(x[0][2]), x[0][3])):
        if run:
            ex = sorted(exited(reason)[0] for _, reason in items)  # type: ignore[index]
            spread = f"{ex[0]}" if ex[0] == ex[-1] else f"{ex[0]}–{ex[-1]}"
            out.append(f"- {p} {sc} N = {n}, seeds {seeds_text([s for s, _ in items])} "
                       f"(`{run}`): {why}; {spread} of {n} initial members exited")
        else:
            out += [f"- {p} {sc} N = {n} seed {s}: {reason}" for s, reason in items]
    return out


@figure("splitbrain-scoring-first", source="results/splitbrain/validation")
def first_split_brain_scoring(ctx: Context) -> str:
    """The first scoring (validation-plan.md), its plan's cells listed here."""
    folder = ctx.results / AREA / "validation"
    return _validation_block(folder, lambda cells: _unscored(ctx, cells))


@figure("splitbrain-scoring-large-groups", source="results/splitbrain/validation-3")
def large_group_zombie_stale_view_and_leader_storm_scoring(ctx: Context) -> str:
    """The scoring of validation-plan-3.json's new runs; its unscored cells come with it."""
    return _planned_validation(ctx.results / AREA / "validation-3")


@figure("splitbrain-scoring-storm-budget-2", source="results/splitbrain/validation-4")
def legacy_storm_under_budget_2_scoring(ctx: Context) -> str:
    """The scoring of validation-plan-4.json: the legacy storm under a budget of 2."""
    return _planned_validation(ctx.results / AREA / "validation-4")


@figure("splitbrain-scoring-formation-budget-1", source="results/splitbrain/validation-5")
def formation_under_budget_1_scoring(ctx: Context) -> str:
    """The scoring of validation-plan-5.json: the first formation model, budget 1."""
    return _planned_validation(ctx.results / AREA / "validation-5")


def _planned_validation(folder: Path) -> str:
    def missing(_: set[tuple[str, ...]]) -> list[str]:
        with open(folder / "unscored.csv", newline="") as fh:
            rows = list(csv.DictReader(fh))
        if not rows:
            return ["Every cell of the plan is scored."]
        return ["Cells of the plan without a score:", "", *compact_reasons(rows)]
    return _validation_block(folder, missing)


def _validation_block(folder: Path, unscored: Callable[[set[tuple[str, ...]]], list[str]]
                      ) -> str:
    path = folder / "checks.csv"
    if not path.is_file():
        return "No validation committed yet."
    with open(path, newline="") as fh:
        checks = list(csv.DictReader(fh))
    cells: dict[tuple[str, ...], bool] = {}
    for c in checks:
        key = (c["protocol"], c["scenario"], c["members"], c["seed"])
        cells[key] = cells.get(key, True) and c["ok"] == "True"
    legacy = {k: ok for k, ok in cells.items() if k[0] == "zk-range"}
    lines = [f"**{sum(cells.values())} of {len(cells)} cells** "
             f"({sum(c['ok'] == 'True' for c in checks)} of {len(checks)} metric checks) "
             "within the tolerances fixed in advance. Of them, the legacy (`zk-range`) cells, "
             "the only ones whose metrics the model computes from timing rather than from a "
             f"protocol's guarantee: **{sum(legacy.values())} of {len(legacy)}**.", "",
             "| protocol | scenario | N | seed | metric | real | simulated (median of 5 draws) "
             "| rule | ok | run |", "|---|---|---|---|---|---|---|---|---|---|"]
    for c in sorted(checks, key=lambda c: (c["scenario"], c["protocol"], int(c["members"]),
                                           int(c["seed"] or 0), c["metric"])):
        lines.append(f"| {c['protocol']} | {c['scenario']} | {c['members']} | "
                     f"{c['seed'] or 'all'} | {c['metric']} | "
                     f"{decimal(num(c['real']), 2)} | {decimal(num(c['sim']), 2)} | "
                     f"{c['rule']} | {'yes' if c['ok'] == 'True' else '**no**'} | "
                     f"{'`' + c['run'] + '`' if c.get('run') else '—'} |")
    return "\n".join(lines + ["", *unscored(set(cells)), "", folders_line([folder]),
                              reproduce(folder, {})])


# The cells results/splitbrain/validation-plan.md names (scenario, N, protocols), seed 1.
# Every split-brain protocol the scenario applies to (the protocol table says which).
PLAN_CELLS = [(sc, n, p) for sc, sizes in (
    ("zombie", (100, 200)), ("storm", (100, 200)), ("stale-view", (50, 100)))
    for n in sizes for p in SPLIT_BRAIN if sc in PROTOCOL_TABLE[p].split_brain]


def _unscored(ctx: Context, scored: set[tuple[str, ...]]) -> list[str]:
    """The plan's cells without a score, each with the reason a real run recorded (or "not
    run")."""
    done = {(sc, int(n), p) for p, sc, n, _seed in scored}
    failed = {}
    for d in sorted((ctx.results / AREA).glob("real-*")):
        for r in rows_of(d):
            if r["reason"] and r["applicable"] == "true":
                failed[(r["scenario"], int(r["members"]), r["protocol"])] = \
                    f"{r['reason']} (`{d.name}`)"
    missing = [c for c in PLAN_CELLS if c not in done]
    if not missing:
        return ["Every cell of the plan is scored."]
    return [f"Cells of the plan without a score ({len(missing)} of {len(PLAN_CELLS)}):", "",
            *(f"- {p} {sc} N = {n}: {failed.get((sc, n, p), 'not run')}"
              for sc, n, p in missing)]


@figure("splitbrain-exclusions", source="results/splitbrain/real-*")
def exclusions(ctx: Context) -> str:
    """Every real row the results table leaves out: the groups that did not form as a table of
    counts per budget and N, the others one line each with their reason."""
    rows = [(run, r, row_kind(r)) for run, r in real_rows(ctx)]
    cells: dict[tuple[int, int], list[tuple[str, int, int]]] = defaultdict(list)
    for run, r, kind in rows:
        if kind is RowKind.NOT_FORMED:
            ex = exited(r["reason"])
            cells[(int(r["rebalance_max_retries"]), int(r["members"]))].append(
                (run, int(r["seed"]), ex[0] if ex else -1))
    lines = []
    if cells:
        lines += [f"Legacy (`zk-range`) storms whose group, started together, did not form "
                  f"({sum(map(len, cells.values()))} runs): some initial member gave up its "
                  "first rebalance and exited, and the job stopped the run before its storm.", "",
                  "| retries | N | runs | initial members that exited | seeds | results folders |",
                  "|---|---|---|---|---|---|"]
        for (budget, n), items in sorted(cells.items()):
            ex = sorted(e for _, _, e in items)
            lines.append(f"| {budget} | {n} | {len(items)} | "
                         f"{ex[0] if ex[0] == ex[-1] else f'{ex[0]}–{ex[-1]}'} of {n} | "
                         f"{seeds_text([s for _, s, _ in items])} | "
                         f"{', '.join(f'`{x}`' for x in sorted({r for r, _, _ in items}))} |")
    others: dict[tuple[str, str, str, str], list[str]] = defaultdict(list)
    for run, r, kind in rows:
        if kind in (RowKind.NOT_APPLICABLE, RowKind.FAILED, RowKind.EXCLUDED):
            others[(r["scenario"], r["members"], r["seed"], f"{r['reason']} (`{run}`)")].append(
                r["protocol"])
    if others:
        lines += ["", "Other real rows not in the results table:", ""]
        lines += [f"- {', '.join(sorted(ps))} / {sc} / N = {n} / seed {seed}: {why}"
                  for (sc, n, seed, why), ps in sorted(others.items())]
    return "\n".join(lines) or "Every real run ran its scenario."


@figure("splitbrain-ancestry", source="results/splitbrain/fix-*")
def ancestry(ctx: Context) -> str:
    """Which real runs each stored ancestry places before its commit, and what that means for
    their rows."""
    out = []
    fix = fix_of(ctx)
    runs = real_rows(ctx)
    if fix is not None:
        pre = sorted({f"{r['protocol']} {r['scenario']} N = {r['members']} (`{run}`)"
                      for run, r in runs if fix.predates(run, r["protocol"])})
        out.append(f"- **{PRE_FIX_MARK} Leader-mode fix {fix.commit[:10]}** (\"{fix.subject}\"): "
                   f"a row is measured before it when its protocol is one the fix changes "
                   f"({', '.join(fix.protocols)}) and its run's revision does not descend from "
                   "that commit. " + (f"Rows before it: {'; '.join(pre)}. They measure the defect, "
                                       "not the model, and no scoring uses them."
                                       if pre else "No row was measured before it."))
    check = fix_of(ctx, FORMATION_FOLDER)
    if check is not None:
        before = sorted({run for run, r in runs
                         if (r["protocol"], r["scenario"]) == ("zk-range", "storm")
                         and check.predates(run, "zk-range")})
        out.append(f"- **Formation check {check.commit[:10]}** (\"{check.subject}\"): before "
                   "it a legacy group that lost initial members while forming was declared "
                   "formed and its storm ran on fewer members. " + (
                       f"The legacy storms of runs before it "
                       f"({', '.join(f'`{x}`' for x in before)}) are therefore not counted in "
                       "the formation table, whatever their row says." if before else
                       "Every legacy storm was run with it."))
    if not out:
        return "No ancestry stored yet."
    commands = "; ".join(
        f"`zkconsumer results ancestry --fix {f.commit[:7]} --protocols "
        f"{','.join(f.protocols)} --out results/{AREA}/{folder} results/{AREA}/real-*`"
        for folder in (FIX_FOLDER, FORMATION_FOLDER) if (f := fix_of(ctx, folder)) is not None)
    return "\n".join([*out, "", "Each is stored in its folder's `runs.csv` by "
                      "`zkconsumer results ancestry` (`git merge-base --is-ancestor`), so the "
                      f"tables need no git history; rerun after adding a real run: {commands}."])
