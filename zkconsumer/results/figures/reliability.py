"""docs/reliability.md: the chaos soak's figures, from its compact report and duplicate causes.

A chaos result folder (``experiment chaos --out`` or ``experiment chaos-causes``) holds
``report.json`` (the run's report without the members' files), ``duplicate-causes.json``,
``duplicate-episodes.csv`` and ``meta.json``.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path
from typing import Any

from zkconsumer.lab.chaos.causes import CAUSES
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure

SOAK = "reliability/soak-3600-seed16"
KINDS = ("join", "leave", "kill", "expire", "pause", "zk-leader-kill")

CAUSE_MEANING = {
    "kill": "delivered by a member SIGKILLed before its next commit",
    "expire": "delivered by a member cut off from ZooKeeper until its session expired",
    "pause": "delivered by a member cut off from ZooKeeper for less than a session",
    "zk-leader-kill": "delivered by a member whose connection dropped when the ZooKeeper "
                      "leader was killed",
    "leave": "delivered by a member that then left cleanly",
    "rebalance": "delivered before a rebalance, re-delivered because the offsets committed at "
                 "the release did not stick (not sent, or overwritten by the late commit of a "
                 "member back from an expiry)",
    "disconnect": "delivered by a member that lost its connection with no fault scheduled",
    "unexplained": "none of the above",
}


def _load(folder: Path) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, str]]]:
    report = json.loads((folder / "report.json").read_text())
    causes = json.loads((folder / "duplicate-causes.json").read_text())
    with open(folder / "duplicate-episodes.csv", newline="") as fh:
        episodes = list(csv.DictReader(fh))
    return report, causes, episodes


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f} %" if whole else "—"


def _yes(value: object) -> str:
    return "yes" if value else "**no**"


def duplicates_per_episode(episodes: list[dict[str, str]]) -> str:
    """How many records one interruption left to be delivered again, per cause: a run of
    duplicates shows as many per episode, a cause with no episode is said to have none."""
    by_cause: dict[str, list[int]] = {}
    for e in episodes:
        by_cause.setdefault(e["cause"], []).append(int(e["duplicates"]))
    parts = []
    for cause in CAUSES:
        sizes = sorted(by_cause.get(cause, []))
        if not sizes:
            if cause in ("kill", "expire", "pause", "zk-leader-kill"):
                parts.append(f"{cause}: no episode")
            continue
        med = sizes[len(sizes) // 2] if len(sizes) % 2 else (
            (sizes[len(sizes) // 2 - 1] + sizes[len(sizes) // 2]) / 2)
        if len(sizes) == 1:
            parts.append(f"{cause}: {sizes[0]} (one episode)")
        else:
            parts.append(f"{cause}: median {med:g}, range {sizes[0]}–{sizes[-1]} "
                         f"({len(sizes)} episodes)")
    return "Duplicates per episode, by cause: " + "; ".join(parts) + "."


def chaos_block(folder: Path, source: str) -> str:
    """The run's verdict, its figures and its duplicates by cause."""
    report, causes, episodes = _load(folder)
    meta = read_provenance(folder)
    produced = int(report["produced"])
    dup = int(report["duplicates"])
    executed = report.get("actions_executed", {})
    lines = [
        f"`results/{source}/` (one run; broker {meta.broker}; revision, date and load in its "
        f"`meta.json`); reproduce: `{meta.command}`.",
        "",
        "| verdict (exit status 0) | lost | verify | stray znodes | settled | drained |",
        "|---|---|---|---|---|---|",
        f"| {'ok' if report.get('ok') else '**failed**'} | {report['lost']} | "
        f"{'ok' if report['verify_ok'] else '**failed**'} | {report['stray_znodes']} | "
        f"{_yes(report['settled'])} | {_yes(report['drained'])} |",
        "",
        "| chaos | actions executed (" + "/".join(KINDS) + ") | produced | delivered once or "
        "more | duplicates | rebalances | failed rebalances | failed attempts | member "
        "incarnations | broker re-registrations |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| {report['duration_s']:g} s, {report['members']} members, {report['partitions']} "
        f"partitions, {report['session_timeout_ms'] / 1000:g} s sessions, seed {report['seed']}"
        f" | {'/'.join(str(executed.get(k, 0)) for k in KINDS)} | {produced:,} | "
        f"{int(report['consumed_unique']):,} | {dup:,} ({_pct(dup, produced)}) | "
        f"{report['rebalances']:,} | {report['failed_rebalances']} | "
        f"{report['failed_attempts']:,} | {report['member_incarnations']:,} | "
        f"{report['broker_reregistrations']} |",
        "",
    ]
    per_cause = Counter(e["cause"] for e in episodes)
    lines += ["| cause of the duplicate | duplicates | share | episodes | what it means |",
              "|---|---:|---:|---:|---|"]
    for cause in CAUSES:
        n = int(causes["by_cause"].get(cause, 0))
        if n or cause in ("kill", "expire", "pause", "zk-leader-kill", "rebalance"):
            lines.append(f"| {cause} | {n:,} | {_pct(n, dup)} | {per_cause.get(cause, 0)} | "
                         f"{CAUSE_MEANING[cause]} |")
    lines.append(f"| total | {int(causes['duplicates']):,} | | {len(episodes)} | |")
    lines += ["", duplicates_per_episode(episodes)]
    context: Counter[str] = Counter()
    context_dups: Counter[str] = Counter()
    for e in episodes:
        if e["cause"] == "rebalance":
            context[e["fault_kind"] or "none"] += 1
            context_dups[e["fault_kind"] or "none"] += int(e["duplicates"])
    if context:
        lines += ["", "Rebalance duplicates by the last scheduled action in the 10 s before "
                  "their rebalance (`end of expire`: a member's traffic flowing again after "
                  "its session expired), duplicates (episodes): "
                  + ", ".join(f"{k} {context_dups[k]:,} ({v})" for k, v in
                              sorted(context.items(), key=lambda kv: -context_dups[kv[0]]))
                  + "."]
    start = causes["start"]
    lines += ["", f"The schedule's time 0 was placed from the members' own clocks within "
              f"{start['high'] - start['low']:.1f} s (joined members' first lines, killed "
              f"members' last lines); every episode is listed in "
              f"`results/{source}/duplicate-episodes.csv`."]
    if report.get("action_errors") or report.get("member_errors"):
        errors = list(report.get("action_errors", [])) + list(report.get("member_errors", []))
        lines += ["", f"Errors reported by the run ({len(errors)}): "
                  + "; ".join(f"`{e}`" for e in errors[:5]) + ("; ..." if len(errors) > 5
                                                             else "") + "."]
    if report.get("actions_skipped"):
        skipped = report["actions_skipped"]
        lines += ["", f"Actions skipped because their member had exited on its own "
                  f"({len(skipped)}): " + "; ".join(f"`{e}`" for e in skipped[:5])
                  + ("; ..." if len(skipped) > 5 else "") + "."]
    if report.get("verify_violations"):
        lines += ["", "Verify violations: " + "; ".join(
            f"`{json.dumps(v, sort_keys=True)}`" for v in report["verify_violations"][:5])]
    if report.get("stray_paths"):
        lines += ["", "Stray znodes: " + ", ".join(f"`{p}`" for p in report["stray_paths"][:10])]
    return "\n".join(lines) + "\n"


@figure(SOAK, source=SOAK)
def soak(ctx: Context) -> str:
    folder = ctx.results / SOAK
    if not (folder / "report.json").exists():
        return (f"The run has not been committed yet (`results/{SOAK}/` holds its plan only).\n")
    return chaos_block(folder, SOAK)
