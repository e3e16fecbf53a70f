"""docs/herd-operations.md: ZooKeeper operations by kind per join and leave, the original 0.10.2
members against zkconsumer members, from ``results/lab/herd-ops-0.10.2.2/<kind>/runs.json``
(written by ``zkconsumer experiment herd-ops``, counted on the wire by the recording proxy)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure
from zkconsumer.tables import fmt, median

SOURCE = "results/lab/herd-ops-0.10.2.2"
KINDS = ("original", "zkconsumer")
EVENTS = ("join", "leave")
# Request kinds in table order; a kind no run sent is left out.
OPS = ("getChildren", "getData", "exists", "create", "delete", "setData", "multi", "sync",
       "connect", "closeSession")
WATCHED = ("getChildren", "getData", "exists")
ERRORS = {"create:-110": "create answered NodeExists", "create:-101": "create answered NoNode",
          "getData:-101": "getData answered NoNode", "exists:-101": "exists answered NoNode",
          "delete:-101": "delete answered NoNode", "setData:-101": "setData answered NoNode"}


def load(results: Path) -> dict[str, list[dict[str, Any]]]:
    """kind -> its runs (only the ``ok`` ones), empty when the kind was not measured."""
    out: dict[str, list[dict[str, Any]]] = {}
    for kind in KINDS:
        path = results / "lab" / "herd-ops-0.10.2.2" / kind / "runs.json"
        runs = json.loads(path.read_text()) if path.is_file() else []
        out[kind] = [r for r in runs if r.get("status") == "ok"]
    return out


def _cells(runs: list[dict[str, Any]], event: str, n: int) -> list[dict[str, Any]]:
    return [r for r in runs if r["event"] == event and r["members"] == n]


def value_range(values: list[int]) -> str:
    """``7`` when every run counted the same, else ``min–max``; ``-`` without runs."""
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return str(lo) if lo == hi else f"{lo}–{hi}"


def _count(run: dict[str, Any], section: str, key: str) -> int:
    if key == "*":
        return sum(run["total"][section].values())
    return int(run["total"][section].get(key, 0))


def sizes(data: dict[str, list[dict[str, Any]]]) -> list[int]:
    return sorted({r["members"] for runs in data.values() for r in runs})


def event_rows(data: dict[str, list[dict[str, Any]]], event: str) -> list[list[str]]:
    """Rows (what, then per N: original, zkconsumer) of one event's table."""
    ns = sizes(data)
    every = [r for runs in data.values() for r in runs if r["event"] == event]
    seen = {k for r in every for k in r["total"]["ops"]}
    errors = sorted({k for r in every for k in r["total"]["errors"]})
    notes = sorted({k for r in every for k in r["total"]["notifications"]})
    lines: list[tuple[str, str, str]] = [(op, "ops", op) for op in OPS if op in seen]
    lines += [(op, "ops", op) for op in sorted(seen - set(OPS))]
    lines.append(("**all requests**", "ops", "*"))
    lines += [(f"{op} with a watch", "watches", op) for op in WATCHED
              if any(r["total"]["watches"].get(op) for r in every)]
    lines.append(("**watches set**", "watches", "*"))
    lines += [(ERRORS.get(e, e), "errors", e) for e in errors]
    lines += [(f"notification {e}", "notifications", e) for e in notes]
    lines.append(("**notifications**", "notifications", "*"))
    rows = []
    for label, section, key in lines:
        row = [label]
        for n in ns:
            for kind in KINDS:
                row.append(value_range([_count(r, section, key)
                                        for r in _cells(data[kind], event, n)]))
        rows.append(row)
    conv = ["time to converge, s: median (min–max)"]
    for n in ns:
        for kind in KINDS:
            vals = [r["converge_s"] for r in _cells(data[kind], event, n)
                    if r.get("converge_s") is not None]
            mid = median(vals)
            conv.append(f"{mid:.2f} ({min(vals):.2f}–{max(vals):.2f})"
                        if vals and mid is not None else "-")
    rows.append(conv)
    return rows


def _header(data: dict[str, list[dict[str, Any]]], event: str) -> list[str]:
    head = ["per " + event]
    for n in sizes(data):
        for kind in KINDS:
            runs = len(_cells(data[kind], event, n))
            head.append(f"N={n} {'orig' if kind == 'original' else 'zkc'} (n={runs})")
    return head


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|---|" + "--:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def difference_rows(data: dict[str, list[dict[str, Any]]]) -> list[list[str]]:
    """Per event and N, each kind whose counts differ: zkconsumer's median minus the
    original's, and both ranges."""
    rows = []
    for event in EVENTS:
        for n in sizes(data):
            orig, zkc = (_cells(data[k], event, n) for k in KINDS)
            if not orig or not zkc:
                continue
            for section in ("ops", "watches", "errors", "notifications"):
                keys = sorted({k for r in orig + zkc for k in r["total"][section]})
                for key in keys:
                    o = [_count(r, section, key) for r in orig]
                    z = [_count(r, section, key) for r in zkc]
                    if o == z or (min(o) == max(o) == min(z) == max(z)):
                        continue
                    mo, mz = median(o), median(z)
                    diff = (mz or 0) - (mo or 0)
                    rows.append([event, str(n), f"{section}: {key}", value_range(o),
                                 value_range(z), fmt(diff, 0)])
    return rows


def join_timing(window: dict[str, Any]) -> dict[str, float | int | None]:
    """From one join window's trace: ms from the joiner's registration until every old member
    had released (its first owner delete), until the joiner's first claim (None: it claimed
    nothing), and how many of the joiner's claims met an owner znode (NodeExists)."""
    ops = window["ops"]
    reg = next((o for o in ops if o[2] == "create" and "/ids/" in o[3] and not o[5]), None)
    if reg is None:
        return {"released_ms": None, "claim_ms": None, "met_owner": 0}
    joiner, t0 = reg[1], reg[0]
    first_delete: dict[str, float] = {}
    for o in ops:
        if o[2] == "delete" and "/owners/" in o[3] and o[1] != joiner:
            first_delete.setdefault(o[1], o[0])
    claims = [o for o in ops if o[1] == joiner and o[2] == "create" and "/owners/" in o[3]]
    return {"released_ms": max(first_delete.values()) - t0 if first_delete else None,
            "claim_ms": claims[0][0] - t0 if claims else None,
            "met_owner": sum(1 for o in claims if o[5] == -110)}


def timing_rows(results: Path) -> list[list[str]]:
    """Per kind and N: the join's race between the old members' releases and the joiner's first
    claim, medians and ranges over the runs."""
    rows = []
    for kind in KINDS:
        path = results / "lab" / "herd-ops-0.10.2.2" / kind / "traces.jsonl.gz"
        if not path.is_file():
            continue
        with gzip.open(path, "rt") as f:
            windows = [json.loads(line) for line in f if line.strip()]
        for n in sorted({w["members"] for w in windows}):
            got = [join_timing(w) for w in windows if w["members"] == n and w["event"] == "join"]
            rel = [g["released_ms"] for g in got if g["released_ms"] is not None]
            claim = [g["claim_ms"] for g in got if g["claim_ms"] is not None]
            rows.append([kind, str(n), str(len(got)), _ms(rel), _ms(claim) if claim else
                         "none claimed", str(sum(int(g["met_owner"] or 0) for g in got))])
    return rows


def _ms(values: list[Any]) -> str:
    if not values:
        return "-"
    return f"{fmt(median(values), 0)} ({fmt(min(values), 0)}–{fmt(max(values), 0)})"


def member_rows(data: dict[str, list[dict[str, Any]]]) -> list[list[str]]:
    """Per event and N: the joiner's (leaver's) requests and one old member's, each kind."""
    rows = []
    for event in EVENTS:
        for n in sizes(data):
            row = [event, str(n)]
            for who in ("joiner", "old"):
                for kind in KINDS:
                    vals = []
                    for run in _cells(data[kind], event, n):
                        members = run["by_member"]
                        picked = [c for m, c in members.items()
                                  if (m == "joiner") == (who == "joiner")]
                        vals += [sum(c["ops"].values()) for c in picked]
                    row.append(value_range(vals))
            rows.append(row)
    return rows


def _provenance(results: Path) -> str:
    lines = []
    for kind in KINDS:
        folder = results / "lab" / "herd-ops-0.10.2.2" / kind
        if (folder / "meta.json").is_file():
            prov = read_provenance(folder)
            lines.append(f"- {kind}: measured {prov.conditions()}. Command: `{prov.command}`.")
    return "\n".join(lines)


_MISSING = ("_No results yet: run `zkconsumer experiment herd-ops --kinds original,zkconsumer "
            "--out results/lab/herd-ops-0.10.2.2/<kind>`._")


@figure("herd-ops/join", source=SOURCE)
def render_join(ctx: Context) -> str:
    data = load(ctx.results)
    if not any(data.values()):
        return _MISSING
    return _table(_header(data, "join"), event_rows(data, "join"))


@figure("herd-ops/leave", source=SOURCE)
def render_leave(ctx: Context) -> str:
    data = load(ctx.results)
    if not any(data.values()):
        return _MISSING
    return _table(_header(data, "leave"), event_rows(data, "leave"))


@figure("herd-ops/differences", source=SOURCE)
def render_differences(ctx: Context) -> str:
    data = load(ctx.results)
    if not all(data.values()):
        return _MISSING
    rows = difference_rows(data)
    if not rows:
        return "_Every kind counted the same in every cell._"
    return _table(["event", "N", "kind", "original", "zkconsumer", "zkconsumer − original "
                   "(medians)"], rows)


@figure("herd-ops/per-member", source=SOURCE)
def render_per_member(ctx: Context) -> str:
    data = load(ctx.results)
    if not any(data.values()):
        return _MISSING
    return _table(["event", "N", "joiner/leaver, orig", "joiner/leaver, zkc", "each old member, "
                   "orig", "each old member, zkc"], member_rows(data))


@figure("herd-ops/join-race", source=SOURCE)
def render_join_race(ctx: Context) -> str:
    rows = timing_rows(ctx.results)
    if not rows:
        return _MISSING
    return _table(["members", "N", "joins", "every old member released, ms after the "
                   "registration: median (min–max)", "joiner's first claim, ms after its "
                   "registration", "joiner's claims that met an owner znode"], rows)


@figure("herd-ops/provenance", source=SOURCE)
def render_provenance(ctx: Context) -> str:
    return _provenance(ctx.results) or _MISSING
