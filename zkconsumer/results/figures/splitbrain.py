"""Generated blocks of docs/split-brain-at-scale.md, from ``results/splitbrain/``.

- ``splitbrain-real``: the real runs (every ``real-*/sweep.csv``), one line per run that ran its
  scenario; the others are counted under it and listed in docs/validation-split-brain.md;
- ``splitbrain-giveup``, ``splitbrain-giveup-here``: simulated share of seeds in which some
  member gives up in a storm, vs N and ``rebalance.max.retries`` (``sim-storm-r*/``,
  ``sim-here-storm-r*/``), with a plot; the second beside the real runs that formed;
- ``splitbrain-zombie``: simulated double-owned partition-seconds vs N and the cut-off fraction
  (``sim-zombie-f*/``), log-log plot.

The scorings of the simulator against the real runs are in :mod:`.splitbrain_validation`, the
formation table in :mod:`.splitbrain_formation`, the findings in :mod:`.splitbrain_findings`.
"""

from __future__ import annotations

import json
import logging
import re
import shlex
import statistics
from collections import defaultdict
from enum import Enum
from pathlib import Path
from typing import Any

from zkconsumer.results.ancestry import Fix, read_fix
from zkconsumer.results.exclusions import PREFIX, formation_verdict, sweep_rows
from zkconsumer.results.figures.placement import placement_line
from zkconsumer.results.figures.splitbrain_text import sizes as sizes_text
from zkconsumer.results.figures.splitbrain_text import wilson
from zkconsumer.results.plotting import pyplot, save_svg
from zkconsumer.results.portable import current_command
from zkconsumer.results.registry import Context, figure
from zkconsumer.scenarios.protocols import BROKER as BROKER_FAMILY
from zkconsumer.scenarios.protocols import SPLIT_BRAIN, ZOOKEEPER, of_family
from zkconsumer.tables import fmt

log = logging.getLogger(__name__)

AREA = "splitbrain"
# The split-brain runs' protocols by family (the protocol table's split-brain entries).
BROKER = of_family(SPLIT_BRAIN, BROKER_FAMILY)
ZOOKEEPER_PROTOCOLS = of_family(SPLIT_BRAIN, ZOOKEEPER)
FIX_FOLDER = "fix-leader-watch"   # which real runs predate the leader-mode watch fix
FORMATION_FOLDER = "fix-formation-check"  # which real runs predate the job's formation check
PRE_FIX_MARK = "†"


def rows_of(folder: Path) -> list[dict[str, str]]:
    return sweep_rows(folder)


def meta(folder: Path) -> dict[str, Any]:
    path = folder / "meta.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def num(v: str | None) -> float | None:
    return None if v in (None, "") else float(v)


def decimal(v: float | None, digits: int = 1) -> str:
    """A number with ``digits`` decimals and thousands separators, "—" for none."""
    return fmt(None if v is None else float(v), digits, thousands=True)


def folders_line(folders: list[Path]) -> str:
    """Where a table's runs are: the folders only; each folder's ``meta.json`` holds the full
    command, revision, machine and load."""
    names = ", ".join(f"`{d.name}`" for d in folders)
    return (f"Results: {names} under `results/{AREA}/` (each folder's `meta.json` holds its "
            "full command, revision, machine and load).")


def reproduce(folder: Path, placeholders: dict[str, str]) -> str:
    """The command of ``folder``'s run with ``--out DIR`` and each option of ``placeholders``
    given its placeholder (the value the table's folders differ in)."""
    words = shlex.split(current_command(str(meta(folder).get("command", ""))))
    for i in range(len(words) - 1):
        if words[i] == "--out":
            words[i + 1] = "DIR"
        elif words[i] in placeholders:
            words[i + 1] = placeholders[words[i]]
    return f"Reproduce: `{' '.join(words)}`."


def fix_of(ctx: Context, folder: str = FIX_FOLDER) -> Fix | None:
    """The stored ancestry of the real runs against a commit (``results.ancestry``)."""
    path = ctx.results / AREA / folder
    return read_fix(path) if (path / "meta.json").is_file() else None


class RowKind(Enum):
    """What a real sweep row measured: its scenario, or why not."""

    SHOWN = "ran its scenario"
    NOT_APPLICABLE = "not applicable"
    NOT_FORMED = "the group did not form"
    EXCLUDED = "excluded"
    FAILED = "failed"


def row_kind(row: dict[str, str]) -> RowKind:
    if row["applicable"] != "true":
        return RowKind.NOT_APPLICABLE
    if not row["reason"]:
        return RowKind.SHOWN
    if row["reason"].startswith(PREFIX):
        return RowKind.EXCLUDED
    return RowKind.NOT_FORMED if formation_verdict(row) is False else RowKind.FAILED


def real_rows(ctx: Context) -> list[tuple[str, dict[str, str]]]:
    """(folder name, row) of every real run, in folder order."""
    return [(d.name, r) for d in sorted((ctx.results / AREA).glob("real-*")) for r in rows_of(d)]


def legacy_storms(ctx: Context) -> list[dict[str, Any]]:
    """The legacy (``zk-range``) storms whose group was started together by a job that
    checked formation (its revision contains the check, :data:`FORMATION_FOLDER`): per run,
    ``run``, ``budget``, ``members``, ``seed``, ``formed`` (True, False, or None for a run that
    failed otherwise or was excluded) and the row itself. Before the check a group that lost
    members was declared formed, so earlier runs say nothing about formation."""
    check = fix_of(ctx, FORMATION_FOLDER)
    out = []
    for run, r in real_rows(ctx):
        if (r["protocol"], r["scenario"]) != ("zk-range", "storm"):
            continue
        if check is None or check.predates(run, "zk-range"):
            continue
        if "--formation one-at-a-time" in str(meta(ctx.results / AREA / run).get("command")):
            continue
        out.append({"run": run, "budget": int(r["rebalance_max_retries"]),
                    "members": int(r["members"]), "seed": int(r["seed"]),
                    "formed": formation_verdict(r), "row": r})
    return out


@figure("splitbrain-real", source="results/splitbrain/real-*")
def real_runs(ctx: Context) -> str:
    rows = real_rows(ctx)
    if not rows:
        return "No real runs committed yet."
    fix = fix_of(ctx)
    date = {run: str(meta(ctx.results / AREA / run).get("date", "")) for run, _ in rows}
    shown = [(run, r) for run, r in rows if row_kind(r) is RowKind.SHOWN]
    parts = sorted({r["partitions"] for _, r in shown})
    lines = [f"P = {', '.join(parts)} in every run; `retries` is the run's "
             "`rebalance.max.retries` (the storm's budget, `--max-retries`; 10 for the other "
             "scenarios); `run` is the results folder.", "",
             "| scenario | protocol | retries | N | seed | double-owned part·s | "
             "zombie deliveries | delivered twice | offsets back | zombies stopped s | "
             "conflicts | rollbacks | max attempts | stale decisions | given up (members) | "
             "unowned part·s | stable s | verify | repaired | lost | run |", "|" + "---|" * 21]
    for run, r in sorted(shown, key=lambda x: (
            x[1]["scenario"], x[1]["protocol"], int(x[1]["rebalance_max_retries"]),
            int(x[1]["members"]), int(x[1]["seed"]), date[x[0]])):
        mark = f" {PRE_FIX_MARK}" if fix is not None and fix.predates(run, r["protocol"]) \
            else ""
        verify = {"true": "ok", "false": "FAILED"}.get(r["verify_ok"], "—")
        lines.append(
            f"| {r['scenario']} | {r['protocol']} | {r['rebalance_max_retries']} | "
            f"{r['members']} | {r['seed']} | {decimal(num(r['double_owned_partition_s']))} | "
            f"{r['zombie_deliveries']} | {r['delivered_twice']} | {r['offsets_went_back']} | "
            f"{decimal(num(r['zombie_stop_s']))} | {r['conflicts']} | {r['rollbacks']} | "
            f"{r['attempts_max']} | {r['stale_decisions']} | "
            f"{r['rebalances_given_up']} ({r['gave_up_members']}) | "
            f"{decimal(num(r['unowned_partition_s']))} | "
            f"{decimal(num(r['time_to_stable_s']))} | {verify} | "
            f"{'yes' if r['repaired'] == 'true' else 'no'} | {r['lost']} | `{run}`{mark} |")
    if fix is not None:
        lines += ["", f"{PRE_FIX_MARK} measured before the leader-mode fix {fix.commit[:10]} "
                      f"(\"{fix.subject}\"); which runs predate it, and how that is decided: "
                      "[validation-split-brain.md](validation-split-brain.md)."]
    shown_folders = sorted({ctx.results / AREA / run for run, _ in shown})
    lines += ["", not_shown(rows), "", placement_line(*shown_folders), "",
              folders_line(sorted({ctx.results / AREA / run for run, _ in rows})),
              "Reproduce a row: `zkconsumer spark split-brain --mode real --members N "
              "--partitions 64 --protocols PROTOCOL --scenarios SCENARIO --first-seed SEED "
              "--seeds 1 --max-retries RETRIES --tasks 2 --out DIR` (the other options as in "
              "the run's `meta.json`)."]
    return "\n".join(lines)


def not_shown(rows: list[tuple[str, dict[str, str]]]) -> str:
    """One sentence counting the real rows that did not run their scenario, by kind."""
    counts: dict[RowKind, int] = defaultdict(int)
    for _, r in rows:
        counts[row_kind(r)] += 1
    parts = [f"{counts[k]} {what}" for k, what in (
        (RowKind.NOT_FORMED, "legacy storms whose group did not form (counted in the formation "
                             "table below)"),
        (RowKind.NOT_APPLICABLE, "not applicable (zombie for broker groups)"),
        (RowKind.FAILED, "failed otherwise"),
        (RowKind.EXCLUDED, "excluded with a reason")) if counts[k]]
    if not parts:
        return "Every real run ran its scenario."
    return (f"Not in the table ({sum(counts[k] for k in RowKind if k is not RowKind.SHOWN)} "
            f"of {len(rows)} real rows): {'; '.join(parts)}; each listed with its reason in "
            "[validation-split-brain.md](validation-split-brain.md).")


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


def sweep_folders(ctx: Context, prefix: str) -> list[Path]:
    """The simulated sweeps ``prefix*``, in the order of the number their names end with."""
    return sorted((ctx.results / AREA).glob(f"{prefix}*"),
                  key=lambda d: float(re.sub(r"[^\d.]", "", suffix(d, prefix)) or 0))


def gave_up(values: list[float]) -> int:
    """Seeds of a simulated cell in which some member gave up (``p_give_up`` is 0 or 1 per
    seed)."""
    return sum(v > 0 for v in values)


def real_giveups(ctx: Context) -> dict[tuple[int, int], tuple[int, int]]:
    """(budget, N) -> (runs with a give-up, runs) over the legacy storms that formed
    (:func:`legacy_storms`)."""
    out: dict[tuple[int, int], tuple[int, int]] = {}
    for s in legacy_storms(ctx):
        if s["formed"]:
            k, n = out.get((s["budget"], s["members"]), (0, 0))
            out[(s["budget"], s["members"])] = (
                k + ((num(s["row"]["rebalances_given_up"]) or 0) > 0), n + 1)
    return out


def _giveup_block(ctx: Context, prefix: str, svg: str, title: str,
                  real: dict[tuple[int, int], tuple[int, int]] | None = None) -> str:
    folders = sweep_folders(ctx, prefix)
    if not folders:
        return "No simulated storm committed yet."
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    sizes = sorted({int(r["members"]) for d in folders for r in rows_of(d)})
    header = ["protocol", "retries", *(f"N={n:,}" for n in sizes)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    colour: dict[str, str] = {}  # a budget's real points in the colour of its simulated line
    for d in folders:
        retries = suffix(d, prefix)
        probs = by_cell(rows_of(d), "p_give_up")
        late = unsettled(rows_of(d))
        for protocol in sorted({p for p, _ in probs}):
            cells = {n: probs[(protocol, n)] for n in sizes if (protocol, n) in probs}
            lines.append(f"| {protocol} (simulated) | {retries} | " + " | ".join(
                f"{gave_up(cells[n])}/{len(cells[n])}{'*' if (protocol, n) in late else ''}"
                if n in cells else "—" for n in sizes) + " |")
            if protocol == "zk-range" or retries == "1":
                label = f"{protocol}, retries {retries} (simulated)" \
                    if protocol == "zk-range" else f"{protocol}, any budget (simulated)"
                [line] = ax.plot(list(cells), [gave_up(v) / len(v) for v in cells.values()],
                                 "-o" if protocol == "zk-range" else ":", markersize=3,
                                 label=label)
                if protocol == "zk-range":
                    colour[retries] = line.get_color()
    for budget in sorted({b for b, _ in real or {}}):
        cells_r = {n: kn for (b, n), kn in (real or {}).items() if b == budget}
        lines.append(f"| zk-range (real, runs that formed) | {budget} | " + " | ".join(
            f"{cells_r[n][0]}/{cells_r[n][1]}" if n in cells_r else "—" for n in sizes) + " |")
        pts = sorted(cells_r.items())
        ys = [k / n for _, (k, n) in pts]
        ci = [wilson(k, n) for _, (k, n) in pts]
        ax.errorbar([n for n, _ in pts], ys,
                    yerr=[[max(0.0, y - lo) for y, (lo, _) in zip(ys, ci, strict=True)],
                          [max(0.0, hi - y) for y, (_, hi) in zip(ys, ci, strict=True)]],
                    fmt="s", markersize=5, capsize=2, markerfacecolor="none",
                    color=colour.get(str(budget), "black"),
                    label=f"zk-range, retries {budget} (real runs, 95 % interval)")
    finish_plot(fig, ax, ctx.figures / svg, "members N", "share of runs where some member "
                "gives up", title, log_y=False)
    note = ("Each cell: runs in which some member gave up / runs (simulated: seeds, one run "
            "each).")
    if real:
        outside = sorted({n for _, n in real} - set(sizes))
        note += (" Real rows: the legacy storms started together that formed, from the "
                 "formation table's run set; the others lost members before the storm." +
                 (f" Real runs at sizes this sweep does not have ({sizes_text(outside)}) are "
                  "counted in the findings." if outside else ""))
    return "\n".join([f"![P(give up) vs N]({ctx.plot_link(svg)})", "", *lines, "", note,
                      UNSETTLED_NOTE, "", placement_line(*folders), "", folders_line(folders),
                      reproduce(folders[0], {"--max-retries": "RETRIES"})])


@figure("splitbrain-giveup", source="results/splitbrain/sim-storm-r*")
def give_up(ctx: Context) -> str:
    return _giveup_block(ctx, "sim-storm-r", "splitbrain-giveup.svg",
                         "storm: 3 joins + 3 leaves in 2 s, one host per member (simulated)")


@figure("splitbrain-giveup-here", source="results/splitbrain/sim-here-storm-r*")
def give_up_here(ctx: Context) -> str:
    return _giveup_block(ctx, "sim-here-storm-r", "splitbrain-giveup-here.svg",
                         "storm: members in 2 processes on this machine", real_giveups(ctx))


def median_range(values: list[float]) -> str:
    """A simulated cell over its seeds: "median (min–max)", or "v (all n)" when they agree."""
    lo, hi = min(values), max(values)
    if lo == hi:
        return f"{lo:,.1f} (all {len(values)})"
    return f"{statistics.median(values):,.1f} ({lo:,.1f}–{hi:,.1f})"


@figure("splitbrain-zombie", source="results/splitbrain/sim-zombie-f*")
def zombie(ctx: Context) -> str:
    folders = sweep_folders(ctx, "sim-zombie-f")
    if not folders:
        return "No simulated zombie sweep committed yet."
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    sizes = sorted({int(r["members"]) for d in folders for r in rows_of(d)})
    header = ["protocol", "cut-off fraction", *(f"N={n:,}" for n in sizes)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    seeds = set()
    for d in folders:
        frac = suffix(d, "sim-zombie-f")
        dbl = by_cell(rows_of(d), "double_owned_partition_s")
        late = unsettled(rows_of(d))
        for protocol in sorted({p for p, _ in dbl if p in ZOOKEEPER_PROTOCOLS}):
            cells = {n: dbl[(protocol, n)] for n in sizes if (protocol, n) in dbl}
            seeds |= {len(v) for v in cells.values()}
            lines.append(f"| {protocol} (simulated) | {frac} | " + " | ".join(
                f"{median_range(cells[n])}{'*' if (protocol, n) in late else ''}"
                if n in cells else "—" for n in sizes) + " |")
            shown = [(n, statistics.median(v)) for n, v in cells.items()
                     if statistics.median(v) > 0]
            if shown:
                ax.plot([n for n, _ in shown], [v for _, v in shown], "-o", markersize=3,
                        label=f"{protocol}, fraction {frac} (simulated median)")
    finish_plot(fig, ax, ctx.figures / "splitbrain-zombie.svg", "members N",
                "double-owned partition·s (median of the seeds)",
                "zombie: cut 2 sessions, P = 64 (simulated; 0 is not drawn)", log_y=True)
    n_seeds = " or ".join(map(str, sorted(seeds)))
    return "\n".join([f"![double-owned vs N]({ctx.plot_link('splitbrain-zombie.svg')})", "",
                      *lines, "", f"Each cell: median (lowest–highest) double-owned "
                      f"partition·s over {n_seeds} seeds. {UNSETTLED_NOTE}", "",
                      placement_line(*folders), "", folders_line(folders),
                      reproduce(folders[0], {"--zombie-fraction": "FRACTION"})])
