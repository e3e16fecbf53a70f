"""docs/peers.md: a SIGKILL of one member of a consuming group, pykafka 2.8 beside zkconsumer
(``benchmarks/peer_kill.py`` runs under ``results/peers/kill/``).

Per kind the number of runs and the median and range over them of each figure of
:mod:`zkconsumer.results.peer_kill`, then every run as measured.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from typing import Any

from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure

KILL = "peers/kill"

Figure = tuple[str, str, int]  # (runs.json key, column heading, digits)

# What a member did with a partition after its own owner znode went: after the kill and while
# the members joined alike.
RELEASE_FIGURES: tuple[Figure, ...] = (
    ("delivered_after_release", "records delivered after own owner znode went", 0),
    ("max_release_lag_s", "longest delivery after own owner znode went, s", 2),
    ("fetched_after_release", "fetch requests naming a partition after its owner znode went",
     0),
    ("max_fetch_lag_s", "longest fetching after own owner znode went, s", 2))
FIGURES: tuple[Figure, ...] = (
    ("duplicates", "duplicates after the kill", 0), ("lost", "lost", 0),
    ("double_partitions", "partitions owned twice after the kill", 0),
    ("double_max_s", "longest double ownership after the kill, s", 1),
    ("stable_s", "kill to stable, s", 1), *RELEASE_FIGURES)
FETCH_FIGURES = frozenset({"fetched_after_release", "max_fetch_lag_s"})


def median_range(values: Sequence[float | None], digits: int) -> str:
    """``median (low–high)`` of the values present, ``n/N`` when some are missing."""
    present = [float(v) for v in values if v is not None]
    if not present:
        return "none"
    text = (f"{statistics.median(present):.{digits}f} "
            f"({min(present):.{digits}f}–{max(present):.{digits}f})")
    if len(present) < len(values):
        text += f" [{len(present)} of {len(values)} runs]"
    return text


def figures_head(figures: Sequence[Figure]) -> list[str]:
    return ["| consumer | runs | " + " | ".join(h for _, h, _ in figures) + " |",
            "|---|---:|" + "---:|" * len(figures)]


def figure_cells(values: Sequence[dict[str, Any]], figures: Sequence[Figure],
                 fetch_logged: bool) -> list[str]:
    """Median (range) of each figure over ``values``; fetch figures of a kind whose runs did
    not log their fetch requests are "not logged", not "none"."""
    return [median_range([v.get(k) for v in values], d)
            if fetch_logged or k not in FETCH_FIGURES else "not logged" for k, _, d in figures]


def summary_rows(runs: list[dict[str, Any]]) -> list[str]:
    """One row per kind: n, then median (range) of every figure."""
    lines = figures_head(FIGURES)
    for kind in dict.fromkeys(r["kind"] for r in runs):
        ok = [r for r in runs if r["kind"] == kind and "failed" not in r]
        failed = sum(1 for r in runs if r["kind"] == kind and "failed" in r)
        n = f"{len(ok)}" + (f" (+{failed} failed)" if failed else "")
        cells = figure_cells(ok, FIGURES, any(r.get("fetch_logged") for r in ok))
        lines.append(f"| {kind} | {n} | " + " | ".join(cells) + " |")
    return lines


JOIN_FIGURES: tuple[Figure, ...] = (
    ("join_double_partitions", "partitions owned twice", 0),
    ("join_double_max_s", "longest double ownership, s", 1),
    ("released", "owner znodes that moved away", 0), *RELEASE_FIGURES)


def join_rows(runs: list[dict[str, Any]]) -> list[str]:
    """Before the kill, while the members joined: one row per kind, median (range)."""
    lines = figures_head(JOIN_FIGURES)
    for kind in dict.fromkeys(r["kind"] for r in runs):
        ok = [r for r in runs if r["kind"] == kind and "join" in r]
        if not ok:
            continue
        merged = [{**r["join"], "join_double_partitions": r["join_double_partitions"],
                   "join_double_max_s": r["join_double_max_s"]} for r in ok]
        cells = figure_cells(merged, JOIN_FIGURES, any(r.get("fetch_logged") for r in ok))
        lines.append(f"| {kind} | {len(ok)} | " + " | ".join(cells) + " |")
    return lines


def lag_text(r: dict[str, Any]) -> str:
    lags = [x["lag_s"] for x in r.get("releases", []) if x["lag_s"] is not None]
    late = sum(1 for x in lags if x > 0)
    return f"{late} of {len(r.get('releases', []))}"


def run_rows(runs: list[dict[str, Any]]) -> list[str]:
    """Every run: counts, figures and how many released partitions were delivered after
    their owner znode went."""
    lines = ["| consumer | repeat | acknowledged | delivered | by the killed member | "
             "duplicates after the kill (whole run) | lost | partitions owned twice after the "
             "kill (s each) | while joining (longest, s) | kill to stable, s | "
             "released partitions delivered after their znode went |",
             "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    for r in runs:
        if "failed" in r:
            lines.append(f"| {r['kind']} | {r['repeat']} | failed: {r['failed']} "
                         "| | | | | | | | |")
            continue
        double = ", ".join(f"p{p}: {s:.1f}" for p, s in sorted(
            r["double_by_partition"].items(), key=lambda x: int(x[0]))) or "none"
        stable = "not stable" if r["stable_s"] is None else f"{r['stable_s']:.1f}"
        lines.append(f"| {r['kind']} | {r['repeat']} | {r['acknowledged']:,} | "
                     f"{r['delivered']:,} | {r['killed_delivered']:,} | {r['duplicates']:,} "
                     f"({r['duplicates_total']:,}) | {r['lost']:,} | {double} | "
                     f"{r['join_double_partitions']} ({r['join_double_max_s']:.1f}) | {stable} | "
                     f"{lag_text(r)} |")
    return lines


@figure(KILL, source=KILL)
def kill(ctx: Context) -> str:
    folder = ctx.results / KILL
    if not all((folder / f).exists() for f in ("runs.json", "meta.json")):
        return f"No committed run yet (`results/{KILL}/`).\n"
    meta = read_provenance(folder)
    data = json.loads((folder / "runs.json").read_text())
    s, runs = data["settings"], data["runs"]
    extra = meta.extra
    head = (f"`results/{KILL}/` (revision `{meta.short_revision}`, {meta.date}, broker "
            f"{meta.broker}, {meta.machine.get('cores', '?')} cores, load average "
            f"{meta.load_text()} at the start and {meta.load_text('loadavg_end')} at the end; "
            f"pykafka {extra.get('pykafka', '?')} with kazoo {extra.get('kazoo', '?')}); "
            f"reproduce: `{meta.command}`.")
    text = [head, "",
            f"{s['members']} members on {s['partitions']} partitions, {s['rate']:.0f} records a "
            f"second; the first member SIGKILLed after {s['before']:.0f} s of stable "
            f"consumption; ZooKeeper session timeout {extra.get('session_timeout_ms', '?')} ms "
            f"and auto-commit every {extra.get('auto_commit_interval_ms', '?')} ms for both "
            f"kinds; a member's deliveries of a partition cut into runs at pauses over "
            f"{s['gap']:.0f} s. Median (range) over the runs:", "",
            *summary_rows(runs), "", *run_rows(runs)]
    if any("join" in r for r in runs):
        text += ["", "Before the kill, while the members joined one after the other (the same "
                 "figures, for every owner znode that stopped naming a member), median (range) "
                 "over the runs:", "", *join_rows(runs)]
    return "\n".join(text) + "\n"
