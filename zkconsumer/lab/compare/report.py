"""``results.json``, ``summary.md`` and per-run timelines, from a list of RunResult.

The summary is a protocol x event table of medians over repeats. A run that could not be
measured shows why instead of numbers: ``unsupported`` (with the broker and version) or
``failed`` (with the error), so a reader never mistakes a missing run for a zero.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zkconsumer.lab.compare.spec import ExperimentSpec
from zkconsumer.lab.runs import METRIC_NAMES, RunResult, RunStatus
from zkconsumer.results.portable import portable_command
from zkconsumer.tables import fmt, median

log = logging.getLogger(__name__)

SHORT = {
    "time_to_stable_s": "stable s",
    "members_paused": "paused",
    "partition_seconds_unavailable": "part·s unavail",
    "coordination_requests": "coord reqs",
    "rebalance_attempts": "attempts",
    "conflicts": "conflicts",
    "duplicates": "dups",
    "lost": "lost",
    "double_owned_intervals": "double-owned",
    "failed_rebalances": "failed",
    "watch_notifications": "watch notif.",
    "conflicting_decisions": "conflicting dec.",
    "group_rebalances": "group rebal.",
    "members_idle": "idle",
}
# The required metrics, then two extras that tell the rolling-bounce and eager stories.
TABLE_METRICS = (*METRIC_NAMES, "group_rebalances", "members_idle")


def write_results(results: Sequence[RunResult], path: Path,
                  spec: ExperimentSpec | None = None) -> None:
    doc: dict[str, Any] = {"runs": [r.to_json() for r in results]}
    if spec is not None:
        doc["spec"] = {"members": spec.members, "partitions": spec.partitions,
                       "protocols": list(spec.protocols), "events": list(spec.events),
                       "repeat": spec.repeat, "processes": spec.processes,
                       "timing": vars(spec.timing)}
    path.write_text(json.dumps(doc, indent=2, default=str) + "\n", encoding="utf-8")


def read_results(path: Path) -> list[RunResult]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return [RunResult.from_json(r) for r in doc["runs"]]


def medians(results: Sequence[RunResult]) -> dict[tuple[str, str], dict[str, Any]]:
    """``(protocol, event) -> {metric: median, "_n": measured runs, "_status": ..., ...}``."""
    cells: dict[tuple[str, str], list[RunResult]] = {}
    for r in results:
        cells.setdefault((r.protocol, r.event), []).append(r)
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for key, runs in cells.items():
        ok = [r for r in runs if r.status == RunStatus.OK.value]
        cell: dict[str, Any] = {m: median([r.metrics.get(m) for r in ok]) for m in TABLE_METRICS}
        cell["_n"] = len(ok)
        cell["_runs"] = len(runs)
        cell["_unstable"] = sum(1 for r in ok if r.metrics.get("time_to_stable_s") is None)
        others = [r for r in runs if r.status != RunStatus.OK.value]
        cell["_status"] = others[0].status if others and not ok else RunStatus.OK.value
        cell["_reason"] = others[0].reason if others else None
        out[key] = cell
    return out


def summary_table(results: Sequence[RunResult]) -> str:
    cells = medians(results)
    protocols = list(dict.fromkeys(r.protocol for r in results))
    events = list(dict.fromkeys(r.event for r in results))
    head = ["protocol", "event", "n"] + [SHORT[m] for m in TABLE_METRICS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes: list[str] = []
    for event in events:
        for protocol in protocols:
            cell = cells.get((protocol, event))
            if cell is None:
                continue
            n = f"{cell['_n']}/{cell['_runs']}"
            if cell["_status"] != RunStatus.OK.value:
                text = f"**{cell['_status']}**"
                row = [protocol, event, n, text] + [""] * (len(TABLE_METRICS) - 1)
                notes.append(f"- {protocol}/{event}: {cell['_status']}: {cell['_reason']}")
            else:
                row = [protocol, event, n] + [fmt(cell[m]) for m in TABLE_METRICS]
                if cell["_unstable"]:
                    notes.append(f"- {protocol}/{event}: {cell['_unstable']} run(s) never "
                                 "became stable before the deadline")
                if cell["_reason"]:
                    notes.append(f"- {protocol}/{event}: some runs failed: {cell['_reason']}")
            lines.append("| " + " | ".join(row) + " |")
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def write_summary(results: Sequence[RunResult], path: Path, spec: ExperimentSpec | None = None,
                  command: str | None = None) -> None:
    parts = ["# Rebalance lab: summary", ""]
    if spec is not None:
        parts += [f"{spec.members} members before each event, {spec.partitions} partitions, "
                  f"session timeout {spec.timing.session_timeout_ms} ms (ZooKeeper and broker "
                  f"groups alike), {spec.repeat} repeat(s), members in "
                  f"{'processes' if spec.processes else 'threads'} (a crashed member always "
                  f"in its own process). "
                  f"{'Medians over repeats' if spec.repeat > 1 else 'One run per cell'}; "
                  f"n = measured/attempted runs.", ""]
    brokers = {r.details.get("broker") for r in results if r.details.get("broker")}
    if brokers:
        parts += [f"Broker: {', '.join(sorted(brokers))}.", ""]
    if command:
        parts += ["Reproduce with:", "", f"    {portable_command(command)}", ""]
    parts += [summary_table(results), "",
              "Columns: seconds from the event until every partition was fetched by exactly "
              "one member (stable s); members that stopped fetching at least one partition "
              "(paused); partition-seconds nobody fetched (part·s unavail); coordination "
              "requests counted by the clients; per-member rebalance attempts; owner "
              "conflicts; redelivered messages; messages never delivered (lost); stretches "
              "with two members fetching one partition; rebalances abandoned or assignments "
              "lost; ZooKeeper watch notifications delivered (watch notif.); members that "
              "decided from a view other than their round's consensus (conflicting dec.; — "
              "for broker groups, where one leader decides); rebalances the group went "
              "through (group rebal.); members that at some "
              "instant fetched nothing at all (idle). See docs/comparison.md for the exact "
              "definitions.", ""]
    path.write_text("\n".join(parts), encoding="utf-8")
