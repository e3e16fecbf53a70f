"""docs/findings.md (c), on the original: formation and the storm with original 0.10.2 members.

Reads every ``results/lab/formation-original-*/runs.json`` (``zkconsumer experiment
formation``): rows of original JVM members and, in the same sweeps, zkconsumer member
processes, judged by the split-brain job's rules (:mod:`zkconsumer.lab.formation.verdict`).
The claim compares the original's budget-1 formation with the project's figure for zkconsumer
members in threads (the findings page's run set, :func:`.findings_outcome.storm_runs`).
"""

from __future__ import annotations

import json
from pathlib import Path
from statistics import mean
from typing import Any

from zkconsumer.lab.formation.verdict import cells
from zkconsumer.results.figures.findings_outcome import budget_cells, pooled, storm_runs
from zkconsumer.results.figures.findings_text import Share
from zkconsumer.results.figures.splitbrain_text import sizes as sizes_text
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure
from zkconsumer.tables import median

AREA = "lab"
PREFIX = "formation-original-"
KIND_LABEL = {"original": "original 0.10.2 (a JVM per member)",
              "zkconsumer": "zkconsumer (a process per member)"}


def folders(ctx: Context) -> list[Path]:
    return sorted(p for p in (ctx.results / AREA).glob(PREFIX + "*")
                  if (p / "runs.json").is_file())


def formation_rows(ctx: Context) -> list[dict[str, Any]]:
    return [r for f in folders(ctx) for r in json.loads((f / "runs.json").read_text())["runs"]]


# The budget-1 share falls with the group's size for both kinds (the table), so the pooled
# share of every size is also given for the larger groups alone.
LARGE_N = 10


def formed_share(rows: list[dict[str, Any]], kind: str, budget: int,
                 min_members: int = 0) -> Share | None:
    return pooled([c.formed for k, c in cells(rows)
                   if k == kind and c.budget == budget and c.members >= min_members])


def holds(original: Share | None, threads: Share | None) -> str:
    """Whether the project's budget-1 "did not form" figure holds for the original, by the
    95 % Wilson intervals: it holds when the original formed in a minority of runs (its interval
    below one half); it does not when the original formed more often than zkconsumer members in
    threads (its interval above theirs); otherwise these runs cannot tell."""
    if original is None or threads is None:
        return "cannot be judged yet (no budget-1 run of the original)"
    if original.interval[1] < 0.5:
        return "hold for the original: it too formed in a minority of the runs"
    if original.interval[0] > threads.interval[1]:
        return ("do not hold for the original as measured here: its groups formed more often "
                "than zkconsumer members in threads did")
    return "can neither be confirmed nor refuted for the original by these runs"


def _time_to_stable(rows: list[dict[str, Any]], kind: str) -> str:
    mid = median(float(r["formation_s"]) for r in rows
                 if r["kind"] == kind and r["formed"] and r.get("formation_s") is not None)
    return f"{mid:.0f} s" if mid is not None else "—"


def _mb(rows: list[dict[str, Any]], kind: str) -> str:
    values = [float(r["rss_mb_mean"]) for r in rows
              if r["kind"] == kind and r.get("rss_mb_mean") is not None]
    return f"{mean(values):.0f} MB" if values else "—"


@figure("findings-outcome-original", source="results/lab/formation-original-*")
def outcome_original(ctx: Context) -> str:
    rows = formation_rows(ctx)
    if not rows:
        return "No formation run of the original has been committed yet.\n"
    threads = pooled([c.formed for c in budget_cells(storm_runs(ctx)) if c.budget == 1])
    original = formed_share(rows, "original", 1)
    own = formed_share(rows, "zkconsumer", 1)
    metas = [read_provenance(f) for f in folders(ctx)]
    sizes = sorted({int(r["members"]) for r in rows})
    brokers = ", ".join(sorted({m.broker for m in metas}))
    parts = [f"**On the original.** Groups started together (P = 64, {sizes_text(sizes)}, on "
             f"{brokers}, one process per member): "
             f"under `rebalance.max.retries` = 1 original 0.10.2 members formed a group in "
             f"{original.text() if original else 'no run'}"]
    if own is not None:
        parts.append(f", zkconsumer member processes in the same sweeps in {own.text()}")
    parts.append(f"; zkconsumer members in threads (the figure above) in "
                 f"{threads.text() if threads else 'no run'}. The \"did not form\" figures "
                 f"{holds(original, threads)}.")
    large = formed_share(rows, "original", 1, LARGE_N)
    if large is not None and any(int(r["members"]) < LARGE_N for r in rows):
        parts.append(f" Groups of {LARGE_N} or more alone: the original formed in "
                     f"{large.text()}; there the figures {holds(large, threads)}.")
    lines = ["".join(parts), "",
             "| members | `rebalance.max.retries` | N | formed (95 % Wilson) | some member gave "
             "up in the storm, of those formed | left stuck, of those formed |",
             "|---|---|---|---|---|---|"]
    for kind, c in cells(rows):
        lines.append(f"| {KIND_LABEL.get(kind, kind)} | {c.budget} | {c.members} | "
                     f"{c.formed.cell()} | {c.gave_up.cell() if c.gave_up else '—'} | "
                     f"{c.stuck.cell() if c.stuck else '—'} |")
    no_verdict = [r for r in rows if r["formed"] is None]
    lines += ["", f"Memory per member (resident set once the group formed, mean over the "
              f"runs): original {_mb(rows, 'original')} (a JVM with `-Xmx512m`), zkconsumer "
              f"{_mb(rows, 'zkconsumer')} (a Python process). Runs without a formation verdict "
              f"(they failed otherwise): {len(no_verdict)} of {len(rows)}. Load average while "
              f"they ran: {min(float(r['loadavg']) for r in rows):.0f}–"
              f"{max(float(r['loadavg']) for r in rows):.0f} on 2 cores (other work shared "
              f"the machine). Raw data: "
              + ", ".join(f"`results/{AREA}/{f.name}/`" for f in folders(ctx))
              + "; reproduce: " + "; ".join(f"`{m.command}`" for m in metas) + "."]
    lines[-1] += (f" Median time from the start to a stable group, formed runs: original "
                  f"{_time_to_stable(rows, 'original')}, zkconsumer "
                  f"{_time_to_stable(rows, 'zkconsumer')} (a "
                  f"JVM boots for seconds on a loaded machine).")
    return "\n".join(lines) + "\n"
