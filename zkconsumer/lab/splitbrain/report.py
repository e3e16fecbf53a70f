"""``results.json`` and ``summary.md`` of a split-brain experiment.

``results.json`` has the lab's shape (``{"runs": [...], "spec": {...}}``, every run a
``RunResult`` with ``scenario`` and ``params``), so the lab's readers load it. The summary has
one table per scenario with the columns that tell that scenario's story, medians over repeats,
and names the broker every run used.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zkconsumer.lab.runs import RunResult, RunStatus
from zkconsumer.lab.splitbrain.spec import SplitBrainSpec
from zkconsumer.results.portable import portable_command
from zkconsumer.tables import fmt, median

COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "stale-view": (
        ("time_to_stable_s", "stable s"), ("conflicting_decisions", "conflicting decisions"),
        ("conflicts", "owner conflicts"), ("rollbacks", "rollbacks"),
        ("failed_rebalances", "gave up"), ("rebalance_attempts", "attempts"),
        ("watch_notifications", "watches"),
        ("partition_seconds_unavailable", "part·s no owner"), ("duplicates", "dups"),
        ("lost", "lost")),
    "zombie": (
        ("stable_after_resume_s", "stable s after resume"),
        ("double_owned_intervals", "double-owned"),
        ("double_owned_s", "double-owned s"), ("zombie_overlap_deliveries",
                                              "zombie deliveries while double-owned"),
        ("delivered_by_two", "msgs delivered by two"), ("duplicates", "dups"),
        ("zombie_stopped_s", "zombie stopped fetching s"),
        ("late_commits_accepted", "late commits accepted"),
        ("late_commits_rejected", "late commits rejected"),
        ("offset_regressions", "committed offset went back"),
        ("partition_seconds_unavailable", "part·s no owner"), ("lost", "lost")),
    "failover": (
        ("time_to_stable_s", "stable s"), ("members_disconnected", "members disconnected"),
        ("sessions_lost", "sessions lost"), ("exactly_one_owner", "exactly-one owner"),
        ("double_owned_intervals", "double-owned"), ("rebalance_attempts", "attempts"),
        ("partition_seconds_unavailable", "part·s no owner"), ("duplicates", "dups"),
        ("lost", "lost")),
}


def write_results(results: Sequence[RunResult], path: Path, spec: SplitBrainSpec) -> None:
    doc = {"runs": [r.to_json() for r in results], "spec": spec.to_json()}
    path.write_text(json.dumps(doc, indent=2, default=str) + "\n", encoding="utf-8")


def _cell_value(values: list[Any]) -> Any:
    """The median, or for yes/no metrics how many said yes (``"k/n"``)."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return f"{sum(present)}/{len(present)}"
    return median(present)


def summary_table(results: Sequence[RunResult], scenario: str) -> str:
    cols = COLUMNS[scenario]
    head = ["protocol", "run", "n", *[c[1] for c in cols]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes = []
    cells: dict[tuple[str, str], list[RunResult]] = {}
    for r in results:
        cells.setdefault((r.protocol, r.event), []).append(r)
    for (protocol, event), runs in cells.items():
        ok = [r for r in runs if r.status == RunStatus.OK.value]
        n = f"{len(ok)}/{len(runs)}"
        if not ok:
            lines.append("| " + " | ".join([protocol, event, n, f"**{runs[0].status}**"]
                                           + [""] * (len(cols) - 1)) + " |")
            notes.append(f"- {protocol}/{event}: {runs[0].status}: {runs[0].reason}")
            continue
        row = [fmt(_cell_value([r.metrics.get(k) for r in ok]), 2) for k, _ in cols]
        lines.append("| " + " | ".join([protocol, event, n, *row]) + " |")
        for r in runs:
            if r.reason:
                notes.append(f"- {protocol}/{event}/r{r.repeat}: {r.reason}")
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def _story(results: Sequence[RunResult], scenario: str) -> list[str]:
    """A few sentences per run that the table cannot say (who lagged, the zombie's numbers)."""
    out = []
    for r in results:
        if r.status != RunStatus.OK.value:
            continue
        d, m = r.details, r.metrics
        if scenario == "zombie":
            out.append(
                f"- {r.protocol}/r{r.repeat}: {d.get('zombie')} paused {d.get('pause_s')} s "
                f"(session {r.params.get('session_timeout_ms')} ms); others fetched its "
                f"partitions {d.get('takeover_s')} s into the pause; double-owned for "
                f"{m.get('double_owned_s')} partition-seconds, {m.get('delivered_by_two')} "
                f"message(s) delivered by two members, {m.get('offset_regressions')} "
                f"committed offset(s) moved backwards; the zombie reported "
                f"{json.dumps((d.get('zombie_view') or {}).get('events'))}, late commits "
                f"rejected with {list((d.get('zombie_view') or {}).get('rejections') or [])}.")
        elif scenario == "stale-view":
            rounds = d.get("decision_rounds") or []
            split = [x for x in rounds if x["dissenters"]]
            if d.get("family") != "zookeeper":
                out.append(
                    f"- {r.protocol}/r{r.repeat}: {', '.join(d.get('lagging', []))} lagged by "
                    f"{d.get('delay_ms'):.0f} ms on the broker connection; "
                    f"{', '.join(d.get('newcomers', []))} joined; one group leader computes "
                    f"the assignment, so there are no owners to conflict over.")
                continue
            out.append(
                f"- {r.protocol}/r{r.repeat}: {', '.join(d.get('lagging', []))} lagged by "
                f"{d.get('delay_ms'):.0f} ms; {', '.join(d.get('newcomers', []))} joined; "
                f"{len(split)} of {len(rounds)} decision round(s) split "
                f"({', '.join(str(x['distinct_views']) for x in split) or 'no'} distinct "
                f"views; dissenters {', '.join(x for s in split for x in s['dissenters'])}"
                f"{'' if split else 'none'})"
                + (f"; {', '.join(d['exited_members'])} gave up after rebalance.max.retries "
                   f"and exited" if d.get("exited_members") else "") + ".")
        elif scenario == "failover":
            out.append(
                f"- {r.protocol}/{r.event}/r{r.repeat}: server {d.get('killed_server')} (leader) "
                f"killed, server {d.get('new_leader')} led {d.get('new_leader_s')} s later; "
                f"members saw {json.dumps(d.get('sessions_seen'))}.")
    return out


def write_summary(results: Sequence[RunResult], path: Path, spec: SplitBrainSpec,
                  command: str | None = None) -> None:
    s = spec.scenario
    parts = [f"# Split brain: {s}", "",
             f"{spec.members} members before the fault, {spec.partitions} partitions, session "
             f"timeout {spec.timing.session_timeout_ms} ms, rebalance.backoff.ms "
             f"{spec.timing.rebalance_backoff_ms}, rebalance.max.retries "
             f"{spec.timing.rebalance_max_retries}, {spec.repeat} repeat(s); medians over "
             f"repeats, n = measured/attempted runs.", ""]
    brokers = sorted({str(r.details.get("broker")) for r in results if r.details.get("broker")})
    if brokers:
        parts += [f"Broker: {', '.join(brokers)}.", ""]
    if command:
        parts += ["Reproduce with:", "", f"    {portable_command(command)}", ""]
    parts += [summary_table(results, s), "", *_story(results, s), ""]
    path.write_text("\n".join(parts), encoding="utf-8")
