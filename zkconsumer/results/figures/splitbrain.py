"""Generated blocks of docs/split-brain-at-scale.md, from ``results/splitbrain/``.

- ``splitbrain-real``: the real runs (every ``real-*/sweep.csv``), one line per run;
- ``splitbrain-validation``: the simulator against those runs (``validation/checks.csv``);
- ``splitbrain-validation-3`` to ``-5``: the changed simulator against new held-out runs
  (``validation-N/checks.csv``, ``validation-N/unscored.csv``);
- ``splitbrain-giveup``: simulated probability that some member gives up in a storm, vs N and
  ``rebalance.max.retries`` (``sim-storm-r*/``), with a plot;
- ``splitbrain-zombie``: simulated double-owned partition-seconds vs N and the cut-off fraction
  (``sim-zombie-f*/``), log-log plot.
"""

from __future__ import annotations

import csv
import json
import logging
import re
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from zkconsumer.results.ancestry import Fix, read_fix
from zkconsumer.results.exclusions import sweep_rows
from zkconsumer.results.plotting import pyplot, save_svg
from zkconsumer.results.provenance import read_provenance, short_revision
from zkconsumer.results.registry import Context, figure
from zkconsumer.tables import fmt

log = logging.getLogger(__name__)

AREA = "splitbrain"
BROKER = ("eager-range", "cooperative-sticky")
FIX_FOLDER = "fix-leader-watch"   # which real runs predate the leader-mode watch fix
PRE_FIX_MARK = "†"


def rows_of(folder: Path) -> list[dict[str, str]]:
    return sweep_rows(folder)


def _meta(folder: Path) -> dict[str, Any]:
    path = folder / "meta.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def num(v: str | None) -> float | None:
    return None if v in (None, "") else float(v)


def decimal(v: float | None, digits: int = 1) -> str:
    """A number with ``digits`` decimals and thousands separators, "—" for none."""
    return fmt(None if v is None else float(v), digits, thousands=True)


def provenance_lines(folders: list[Path]) -> list[str]:
    return [f"- `{d.name}`: {read_provenance(d).conditions()}: `{read_provenance(d).command}`"
            for d in folders if (d / "meta.json").is_file()]


def fix_of(ctx: Context) -> Fix | None:
    folder = ctx.results / AREA / FIX_FOLDER
    return read_fix(folder) if (folder / "meta.json").is_file() else None


def _fix_note(fix: Fix, pre: list[str]) -> list[str]:
    """The sentence under the real table that names the rows measured without the fix."""
    which = "; ".join(pre) if pre else "none"
    return ["", f"{PRE_FIX_MARK} measured before the leader-mode fix {fix.commit[:10]} "
                f"(\"{fix.subject}\"): a row is pre-fix when its protocol is one the fix "
                f"changes ({', '.join(fix.protocols)}) and its revision does not descend from "
                f"that commit (`git merge-base --is-ancestor`, stored in "
                f"`results/{AREA}/{FIX_FOLDER}/runs.csv`). Pre-fix rows: {which}. "
                "Rows of other protocols at those revisions are unaffected by it."]


@figure("splitbrain-real", source="results/splitbrain/real-*")
def real_runs(ctx: Context) -> str:
    folders = sorted((ctx.results / AREA).glob("real-*"))
    rows = [(d.name, r) for d in folders for r in rows_of(d)]
    if not rows:
        return "No real runs committed yet."
    revision = {d.name: short_revision(str(_meta(d).get("revision", "?"))) for d in folders}
    fix = fix_of(ctx)
    lines = ["| scenario | protocol | N | P | seed | double-owned part·s | zombie deliveries | "
             "delivered twice | offsets back | zombies stopped s | conflicts | rollbacks | "
             "max attempts | stale decisions | given up (members) | unowned part·s | "
             "stable s | verify | repaired | lost | revision |", "|" + "---|" * 21]
    na: dict[tuple[str, str, str, str], str] = {}
    pre = []
    for run, r in sorted(rows, key=lambda x: (x[1]["scenario"], x[1]["protocol"],
                                              int(x[1]["members"]), _meta_date(ctx, x[0]))):
        if r["applicable"] != "true" or r["reason"]:
            na[(r["protocol"], r["scenario"], r["members"], r["seed"])] = \
                f"{r['reason']} (`{run}`)"
            continue
        rev = revision[run]
        if fix is not None and fix.predates(run, r["protocol"]):
            rev += f" {PRE_FIX_MARK}"
            pre.append(f"{r['protocol']} {r['scenario']} N = {r['members']} (`{run}`)")
        gu = f"{r['rebalances_given_up']} ({r['gave_up_members']})"
        verify = {"true": "ok", "false": "FAILED"}.get(r["verify_ok"], "—")
        lines.append(
            f"| {r['scenario']} | {r['protocol']} | {r['members']} | {r['partitions']} | "
            f"{r['seed']} | {decimal(num(r['double_owned_partition_s']))} | "
            f"{r['zombie_deliveries']} | {r['delivered_twice']} | {r['offsets_went_back']} | "
            f"{decimal(num(r['zombie_stop_s']))} | {r['conflicts']} | {r['rollbacks']} | "
            f"{r['attempts_max']} | {r['stale_decisions']} | {gu} | "
            f"{decimal(num(r['unowned_partition_s']))} | {decimal(num(r['time_to_stable_s']))} | "
            f"{verify} | {'yes' if r['repaired'] == 'true' else 'no'} | {r['lost']} | {rev} |")
    if fix is not None:
        lines += _fix_note(fix, pre)
    if na:
        lines += ["", "Not applicable or failed:", ""]
        lines += [f"- {p} / {s} / N = {n} / seed {seed}: {why}"
                  for (p, s, n, seed), why in sorted(na.items())]
    lines += ["", "Runs (raw data, command, revision, machine and load in each folder's "
                  "`meta.json`):", "", *provenance_lines(folders)]
    return "\n".join(lines)


def _meta_date(ctx: Context, run: str) -> str:
    return str(_meta(ctx.results / AREA / run).get("date", ""))


@figure("splitbrain-validation", source="results/splitbrain/validation")
def validation(ctx: Context) -> str:
    """The first scoring (validation-plan.md), its plan's cells listed here."""
    folder = ctx.results / AREA / "validation"
    return _validation_block(folder, lambda cells: _unscored(ctx, cells))


@figure("splitbrain-validation-3", source="results/splitbrain/validation-3")
def validation_3(ctx: Context) -> str:
    """The scoring of validation-plan-3.json's new runs; its unscored cells come with it."""
    return _planned_validation(ctx.results / AREA / "validation-3")


@figure("splitbrain-validation-4", source="results/splitbrain/validation-4")
def validation_4(ctx: Context) -> str:
    """The scoring of validation-plan-4.json: the legacy storm under a budget of 2."""
    return _planned_validation(ctx.results / AREA / "validation-4")


@figure("splitbrain-validation-5", source="results/splitbrain/validation-5")
def validation_5(ctx: Context) -> str:
    """The scoring of validation-plan-5.json: the first formation model, budget 1."""
    return _planned_validation(ctx.results / AREA / "validation-5")


def _planned_validation(folder: Path) -> str:
    def missing(_: set[tuple[str, ...]]) -> list[str]:
        path = folder / "unscored.csv"
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh))
        if not rows:
            return ["Every cell of the plan is scored."]
        return ["Cells of the plan without a score:", "",
                *(f"- {r['protocol']} {r['scenario']} N = {r['members']} seed {r['seed']}: "
                  f"{r['reason']}" for r in rows)]
    return _validation_block(folder, missing)


def _validation_block(folder: Path, unscored: Any) -> str:
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
             "| protocol | scenario | N | seed | metric | real | sim (median of 5 draws) | "
             "rule | ok | run |", "|---|---|---|---|---|---|---|---|---|---|"]
    for c in sorted(checks, key=lambda c: (c["scenario"], c["protocol"], int(c["members"]),
                                           int(c["seed"] or 0), c["metric"])):
        lines.append(f"| {c['protocol']} | {c['scenario']} | {c['members']} | "
                     f"{c['seed'] or 'all'} | {c['metric']} | "
                     f"{decimal(num(c['real']), 2)} | {decimal(num(c['sim']), 2)} | "
                     f"{c['rule']} | {'yes' if c['ok'] == 'True' else '**no**'} | "
                     f"{'`' + c['run'] + '`' if c.get('run') else '—'} |")
    return "\n".join(lines + ["", *unscored(set(cells)), "", *provenance_lines([folder])])


# The cells results/splitbrain/validation-plan.md names (scenario, N, protocols), seed 1.
PLAN_CELLS = [(sc, n, p) for sc, sizes, protocols in (
    ("zombie", (100, 200), ("zk-range", "zk-leader-range")),
    ("storm", (100, 200), ("zk-range", "zk-leader-range", *BROKER)),
    ("stale-view", (50, 100), ("zk-range", "zk-leader-range", *BROKER)))
    for n in sizes for p in protocols]


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


def by_cell(rows: list[dict[str, str]], metric: str) -> dict[tuple[str, int], list[float]]:
    out: dict[tuple[str, int], list[float]] = defaultdict(list)
    for r in rows:
        v = num(r.get(metric))
        if r["applicable"] == "true" and v is not None:
            out[(r["protocol"], int(r["members"]))].append(v)
    return out


def unsettled(rows: list[dict[str, str]]) -> set[tuple[str, int]]:
    """(protocol, N) cells with a simulated run that had not settled when the simulated
    horizon ended (its metrics were counted until then, or not computed)."""
    return {(r["protocol"], int(r["members"])) for r in rows
            if r["mode"] == "sim" and r["applicable"] == "true" and r.get("settled") == "false"}


UNSETTLED_NOTE = ("\\* some runs of the cell had not settled when the simulated hour ended "
                  "(the legacy group's rebalance, every member reading every registration from "
                  "one server, outlasts it); their metrics count until then. "
                  "—: no run of the cell settled, so the metric was not computed.")


def finish_plot(fig: Any, ax: Any, path: Path, xlabel: str, ylabel: str, title: str,
                log_y: bool, xticks: list[int] | None = None) -> None:
    """The split-brain plots' common frame: N on a log axis (labelled at ``xticks`` when
    given), grid, small legend, SVG."""
    ax.set_xscale("log")
    if xticks:
        ax.set_xticks(xticks, [f"{n:,}" for n in xticks])
        ax.set_xticks([], minor=True)
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6)
    fig.tight_layout()
    save_svg(fig, path)


def suffix(folder: Path, prefix: str) -> str:
    return folder.name.removeprefix(prefix)


def _giveup_block(ctx: Context, prefix: str, svg: str, title: str) -> str:
    folders = sorted((ctx.results / AREA).glob(f"{prefix}*"),
                     key=lambda d: int(re.sub(r"\D", "", d.name.removeprefix(prefix)) or 0))
    if not folders:
        return "No simulated storm committed yet."
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    sizes = sorted({int(r["members"]) for d in folders for r in rows_of(d)})
    header = ["protocol", "retries", *(f"N={n:,}" for n in sizes)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for d in folders:
        retries = suffix(d, prefix)
        probs = by_cell(rows_of(d), "p_give_up")
        for protocol in sorted({p for p, _ in probs}):
            pts = [(n, statistics.fmean(probs[(protocol, n)])) for n in sizes
                   if (protocol, n) in probs]
            late = unsettled(rows_of(d))
            lines.append(f"| {protocol} | {retries} | " + " | ".join(
                f"{statistics.fmean(probs[(protocol, n)]):.2f}"
                f"{'*' if (protocol, n) in late else ''}" if (protocol, n) in probs else "—"
                for n in sizes) + " |")
            if protocol == "zk-range" or retries == "1":
                label = f"{protocol}, retries {retries}" if protocol == "zk-range" else \
                    f"{protocol} (any budget)"
                ax.plot([n for n, _ in pts], [p for _, p in pts],
                        "-o" if protocol == "zk-range" else ":", markersize=3, label=label)
    finish_plot(fig, ax, ctx.figures / svg, "members N", "P(some member gives up)", title,
                log_y=False)
    return "\n".join([f"![P(give up) vs N]({ctx.plot_link(svg)})", "",
                      *lines, "", UNSETTLED_NOTE, "", *provenance_lines(folders)])


@figure("splitbrain-giveup", source="results/splitbrain/sim-storm-r*")
def give_up(ctx: Context) -> str:
    return _giveup_block(ctx, "sim-storm-r", "splitbrain-giveup.svg",
                         "storm: 3 joins + 3 leaves in 2 s, one host per member (simulated)")


@figure("splitbrain-giveup-here", source="results/splitbrain/sim-here-storm-r*")
def give_up_here(ctx: Context) -> str:
    return _giveup_block(ctx, "sim-here-storm-r", "splitbrain-giveup-here.svg",
                         "storm: members in 2 processes on this machine (simulated)")


@figure("splitbrain-zombie", source="results/splitbrain/sim-zombie-f*")
def zombie(ctx: Context) -> str:
    folders = sorted((ctx.results / AREA).glob("sim-zombie-f*"))
    if not folders:
        return "No simulated zombie sweep committed yet."
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    sizes = sorted({int(r["members"]) for d in folders for r in rows_of(d)})
    header = ["protocol", "cut-off fraction", *(f"N={n:,}" for n in sizes)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for d in folders:
        frac = suffix(d, "sim-zombie-f")
        dbl = by_cell(rows_of(d), "double_owned_partition_s")
        for protocol in sorted({p for p, _ in dbl}):
            pts = [(n, statistics.median(dbl[(protocol, n)])) for n in sizes
                   if (protocol, n) in dbl]
            late = unsettled(rows_of(d))
            lines.append(f"| {protocol} | {frac} | " + " | ".join(
                f"{statistics.median(dbl[(protocol, n)]):,.1f}"
                f"{'*' if (protocol, n) in late else ''}" if (protocol, n) in dbl else "—"
                for n in sizes) + " |")
            shown = [(n, v) for n, v in pts if v > 0]
            if shown:
                ax.plot([n for n, _ in shown], [v for _, v in shown], "-o", markersize=3,
                        label=f"{protocol}, fraction {frac}")
    finish_plot(fig, ax, ctx.figures / "splitbrain-zombie.svg", "members N",
                "double-owned partition·s (median)",
                "zombie: cut 2 sessions, P = 64 (simulated; 0 is not drawn)", log_y=True)
    return "\n".join([f"![double-owned vs N]({ctx.plot_link('splitbrain-zombie.svg')})", "",
                      *lines, "", UNSETTLED_NOTE, "", *provenance_lines(folders)])
