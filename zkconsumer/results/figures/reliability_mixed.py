"""docs/reliability.md, the mixed soak: original 0.10.2 members (JVMs) and zkconsumer members in
one group through the same chaos, on the 0.10.2 broker.

The folder holds what any chaos folder holds (:mod:`.reliability`) and ``settles.jsonl``, the
settles seen while the chaos ran; the report names every member's kind and
``duplicate-causes.json`` counts deliveries and duplicates by cause per kind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from zkconsumer.identity import consumer_id_of
from zkconsumer.lab.chaos.causes import CAUSES
from zkconsumer.lab.chaos.spec import ChaosSpec
from zkconsumer.results.figures.reliability import chaos_block
from zkconsumer.results.registry import Context, figure

MIXED = "reliability/soak-3600-mixed-16"
SHOWN_CAUSES = ("kill", "expire", "pause", "zk-leader-kill", "leave", "rebalance")


def settles_of(folder: Path) -> list[dict[str, Any]]:
    """The settles seen while the chaos ran (not the one the run waited for after it)."""
    path = folder / "settles.jsonl"
    if not path.is_file():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [s for s in rows if not s.get("after_chaos")]


def owned_by_kind(settles: list[dict[str, Any]], kinds: dict[str, str]) -> dict[str, int]:
    """Partition-settles owned by each kind: over every settle, the partitions whose owner
    thread (``<group>_<member>-<n>``) belongs to a member of that kind."""
    out: dict[str, int] = {}
    for s in settles:
        for owner in s["owners"].values():
            member = consumer_id_of(owner).rsplit("_", 1)[-1] if owner else ""
            kind = kinds.get(member, "none")
            out[kind] = out.get(kind, 0) + 1
    return out


def kind_table(report: dict[str, Any], causes: dict[str, Any],
               settles: list[dict[str, Any]]) -> list[str]:
    kinds = dict(report.get("member_kinds", {}))
    by_kind = causes.get("by_kind", {})
    owned = owned_by_kind(settles, kinds)
    total_owned = sum(owned.values())
    lines = ["| member kind | members started | deliveries | duplicates (their first "
             "delivery did not stick) | " + " | ".join(SHOWN_CAUSES) + " | other causes | "
             "partitions owned at the settles |",
             "|---|---:|---:|---:|" + "---:|" * len(SHOWN_CAUSES) + "---:|---:|"]
    for kind in sorted(by_kind):
        k = by_kind[kind]
        other = sum(int(k["by_cause"].get(c, 0)) for c in CAUSES if c not in SHOWN_CAUSES)
        share = (f"{100.0 * owned.get(kind, 0) / total_owned:.1f} %" if total_owned else "—")
        lines.append(f"| {kind} | {k['members']} | {int(k['deliveries']):,} | "
                     f"{int(k['duplicates']):,} | "
                     + " | ".join(f"{int(k['by_cause'].get(c, 0)):,}" for c in SHOWN_CAUSES)
                     + f" | {other:,} | {share} |")
    return lines


def mixed_block(folder: Path, source: str) -> str:
    report = json.loads((folder / "report.json").read_text())
    causes = json.loads((folder / "duplicate-causes.json").read_text())
    settles = settles_of(folder)
    good = sum(1 for s in settles if s["good"])
    lines = [chaos_block(folder, source).rstrip("\n"), "",
             f"Member kinds: {report['original_members']} of every {report['members']} "
             "members are original 0.10.2 members (JVMs), the rest zkconsumer members. Lost "
             f"records, all kinds together: {report['lost']} (a record is lost for the group, "
             "not for a kind).", ""]
    lines += kind_table(report, causes, settles)
    quiet = ChaosSpec().quiet_s
    lines += ["", f"Settles seen while the chaos ran (no fault open, the registered members "
              f"the live ones, owners unchanged for {quiet:g} s): {len(settles):,}; with "
              f"every partition owned by exactly one live member: {good:,} of "
              f"{len(settles):,}."]
    check_path = folder / "settles.json"
    if check_path.is_file() and good < len(settles):
        check = json.loads(check_path.read_text())
        inside = sorted({m for s in check["not_good"] for m in s["inside_rebalance"]})
        kinds = report.get("member_kinds", {})
        lines[-1] += (
            f" The other {check['mid_rebalance'] + check['other']} were pictures of a "
            f"rebalance still under way rather than settles: in {check['mid_rebalance']} of "
            f"them some live member was between the start of a rebalance and its success "
            f"(its record file says so: "
            + ", ".join(f"{m} ({kinds.get(m, '?')})" for m in inside)
            + f"), their partitions without an owner while it backed off between attempts; "
            f"{check['other']} without such a member (`settles.json`). No partition has two "
            f"owner znodes at any time: the owner is one znode.")
    exited: dict[str, int] = {}
    for e in report.get("member_errors", []):
        if "exited on its own" in e:
            kind = dict(report.get("member_kinds", {})).get(e.split(" ", 1)[0], "?")
            exited[kind] = exited.get(kind, 0) + 1
    if exited:
        lines += ["", "Members that exited on their own, by kind: " + ", ".join(
            f"{k} {n}" for k, n in sorted(exited.items())) + (
                " (the schedule's later actions on them are listed as skipped above)"
                if "actions_skipped" in report else
                " (the schedule's later actions on them are the run's `KeyError` action "
                "errors: the runner of that revision did not yet skip them)") + "."]
    if report.get("early_leaves"):
        lines += ["", f"Original members whose lifetime ended before their scheduled leave "
                  f"(they left cleanly a little early): {len(report['early_leaves'])}."]
    return "\n".join(lines) + "\n"


@figure(MIXED, source=MIXED)
def soak_mixed(ctx: Context) -> str:
    folder = ctx.results / MIXED
    if not (folder / "report.json").exists():
        return f"The run has not been committed yet (`results/{MIXED}/` holds its plan only).\n"
    return mixed_block(folder, MIXED)
