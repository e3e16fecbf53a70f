"""docs/migration.md: the move of a live legacy group to broker coordination, from
``results/migration/<broker>/runs.json`` (written by ``zkconsumer experiment migrate``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from zkconsumer.results.plotting import pyplot, save_svg
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure
from zkconsumer.tables import fmt, median

SOURCE = "results/migration"
PLAN_ORDER = ("documented", "naive")
PHASE_COLOURS = {"zookeeper": "C0", "dual-commit": "C1", "kafka": "C2", "broker-group": "C3"}


def load_runs(folder: Path) -> list[dict[str, Any]]:
    return list(json.loads((folder / "runs.json").read_text()))


def result_folders(results: Path) -> list[Path]:
    root = results / "migration"
    return sorted(p for p in root.iterdir() if (p / "runs.json").is_file()) if root.is_dir() \
        else []


def measured(runs: list[dict[str, Any]], plan: str) -> list[dict[str, Any]]:
    return [r for r in runs if r.get("plan") == plan and not r.get("error")]


def summary_rows(runs: list[dict[str, Any]]) -> list[list[str]]:
    """Per plan: runs, produced, lost (worst run), duplicates, rewind, unfetched, total time."""
    rows = []
    for plan in PLAN_ORDER:
        ok = measured(runs, plan)
        failed = sum(1 for r in runs if r.get("plan") == plan and r.get("error"))
        if not ok and not failed:
            continue
        unfetched = [sum(p["partition_seconds_unfetched"] for p in r["phases"]) for r in ok]
        seconds = [sum(p["seconds"] for p in r["phases"]) for r in ok]
        rows.append([
            plan, f"{len(ok)}" + (f" (+{failed} not measured)" if failed else ""),
            fmt(median([r["produced"] for r in ok]), 0),
            str(max((r["lost"] for r in ok), default=0)),
            " / ".join(str(r["duplicates"]) for r in ok),
            " / ".join(str(r["rewind"]) for r in ok),
            fmt(median(unfetched), 1), fmt(median(seconds), 1),
        ])
    return rows


def phase_rows(runs: list[dict[str, Any]]) -> list[list[str]]:
    """Per plan and phase: medians over the runs of time, duplicates and unfetched time."""
    rows = []
    for plan in PLAN_ORDER:
        ok = measured(runs, plan)
        if not ok:
            continue
        for i, phase in enumerate(ok[0]["phases"]):
            at = [r["phases"][i] for r in ok]
            rows.append([plan, phase["phase"], f"{phase['how']} to `{phase['protocol']}`",
                         fmt(median([p["seconds"] for p in at]), 1),
                         fmt(median([p["duplicates"] for p in at]), 0),
                         fmt(median([p["partition_seconds_unfetched"] for p in at]), 1),
                         phase["cause"] if any(p["duplicates"] for p in at) else "-"])
    return rows


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _provenance_line(folder: Path) -> str:
    prov = read_provenance(folder)
    return f"Measured {prov.conditions()}. Command: `{prov.command}`."


def _plot(ctx: Context, folder: Path, runs: list[dict[str, Any]]) -> str:
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    plans = [p for p in PLAN_ORDER if measured(runs, p)]
    for y, plan in enumerate(plans):
        ok = measured(runs, plan)
        start = 0.0
        for i, phase in enumerate(ok[0]["phases"]):
            width = median([r["phases"][i]["seconds"] for r in ok]) or 0.0
            unfetched = median([r["phases"][i]["partition_seconds_unfetched"] for r in ok]) or 0.0
            left.barh(y, width, left=start, color=PHASE_COLOURS.get(phase["phase"], "C7"),
                      edgecolor="white", label=phase["phase"])
            left.text(start + width / 2, y, f"{unfetched:.0f}", ha="center", va="center",
                      fontsize=7, color="white")
            start += width
        right.scatter([y] * len(ok), [r["duplicates"] for r in ok], color="C3", zorder=3,
                      label="duplicates" if y == 0 else None)
        right.scatter([y + 0.15] * len(ok), [r["rewind"] for r in ok], color="C7", marker="x",
                      zorder=3, label="rewind at the switch" if y == 0 else None)
    left.set_yticks(range(len(plans)), plans)
    left.set_xlabel("seconds until settled per phase (median; in the bars: unfetched "
                    "partition-s)")
    handles, labels = left.get_legend_handles_labels()
    seen: dict[str, Any] = {}
    for h, lab in zip(handles, labels, strict=True):
        seen.setdefault(lab, h)
    left.legend(seen.values(), seen.keys(), fontsize=7, loc="lower center", ncol=4,
                bbox_to_anchor=(0.5, 1.0), frameon=False)
    right.set_xticks(range(len(plans)), plans)
    right.set_ylabel("messages per run")
    right.legend(fontsize=7)
    fig.suptitle(f"Migration to broker coordination ({folder.name})", fontsize=10)
    fig.tight_layout()
    name = f"migration-{folder.name}.svg"
    save_svg(fig, ctx.figures / name)
    return name


@figure("migration-results", source=SOURCE)
def migration_results(ctx: Context) -> str:
    parts = []
    for folder in result_folders(ctx.results):
        runs = load_runs(folder)
        dwell = max((r.get("dwell_s", 0.0) for r in runs), default=0.0)
        parts.append(f"**{folder.name}** — {_provenance_line(folder)} The group ran "
                     f"{fmt(float(dwell), 1)} s after each step settled.\n")
        parts.append(_table(["plan", "runs", "produced (median)", "lost (worst run)",
                             "duplicates per run", "rewind at the switch per run",
                             "unfetched partition-s (median)", "s to settle, all steps (median)"],
                            summary_rows(runs)))
        parts.append("")
        parts.append(_table(["plan", "phase", "step", "s to settle (median)", "duplicates (median)",
                             "unfetched partition-s (median)", "cause of the duplicates"],
                            phase_rows(runs)))
        parts.append("")
        parts.append(f"![migration on {folder.name}]({ctx.plot_link(_plot(ctx, folder, runs))})")
        parts.append("")
    if not parts:
        return "_No results yet: run `zkconsumer experiment migrate ... --out results/migration/" \
               "<broker>`._"
    return "\n".join(parts).rstrip()
