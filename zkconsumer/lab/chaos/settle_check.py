"""Why a settle seen during the chaos lacked one live owner per partition (pure, after the run).

The settle watch (``settle.py``) keeps a picture once the owners have not changed for the quiet
time with no fault open; a rebalance whose members are backing off between attempts can hold
the owners still that long. Each member's record file says whether it was inside a rebalance
at that moment: its last rebalance event before the settle was a start (``rebalance_started``,
the original's ``REBALANCE_RELEASE`` of every attempt) or a failed attempt, not a success. A
settle without one live owner per partition is therefore either *mid-rebalance* (some member
was inside one: the picture was not final) or *other*, which would be a finding.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

STARTS = frozenset({"rebalance_started", "attempt_failed"})
ENDS = frozenset({"rebalance_succeeded", "rebalance_failed"})


Events = list[tuple[float, bool]]


def rebalance_events(lines: Iterable[bytes]) -> tuple[Events, float | None]:
    """(time, inside a rebalance after it) for every rebalance event of one member's file, and
    the time of its last timed line (a member whose file ends before a settle was gone)."""
    out = []
    last: float | None = None
    for raw in lines:
        if not raw.endswith(b"\n") or b'"ts"' not in raw:
            continue
        rec = json.loads(raw)
        last = float(rec["ts"])
        if rec.get("e") in STARTS or rec.get("e") in ENDS:
            out.append((last, rec["e"] in STARTS))
    return out, last


def inside_at(events: Sequence[tuple[float, bool]], ts: float) -> bool:
    """Whether the member was inside a rebalance at ``ts`` (its last event before says so)."""
    state = False
    for at, inside in events:
        if at > ts:
            break
        state = inside
    return state


def classify(settles: Sequence[dict[str, Any]],
             members: dict[str, tuple[Events, float | None]]) -> dict[str, Any]:
    """Good, mid-rebalance and other settles, and for each that was not good the members that
    were inside a rebalance (of those whose file goes on past the settle)."""
    out: dict[str, Any] = {"settles": len(settles), "good": 0, "mid_rebalance": 0, "other": 0,
                           "not_good": []}
    for s in settles:
        if s["good"]:
            out["good"] += 1
            continue
        inside = sorted(m for m, (ev, last) in members.items()
                        if last is not None and last >= s["ts"] and inside_at(ev, s["ts"]))
        out["mid_rebalance" if inside else "other"] += 1
        out["not_good"].append({"ts": s["ts"], "why": s["why"], "inside_rebalance": inside})
    return out


def check_run(run_dir: Path) -> dict[str, Any]:
    """:func:`classify` for a run directory (``settles.jsonl`` and ``members/``): the settles
    seen while the chaos ran (the one after it, which the run waited for, is left out)."""
    path = run_dir / "settles.jsonl"
    settles = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] \
        if path.is_file() else []
    settles = [s for s in settles if not s.get("after_chaos")]
    members = {}
    for f in sorted((run_dir / "members").glob("*.records.jsonl")):
        with open(f, "rb") as fh:
            members[f.name.split(".")[0]] = rebalance_events(fh)
    return classify(settles, members)
