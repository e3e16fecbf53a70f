"""What the members' files say was consumed, compared with what the broker acknowledged.

Pure functions over parsed lines, so the figures of a run can be recomputed from its directory.
A line cut short by a SIGKILL (no trailing newline) is ignored: that record was not durable, so
its offset was not committed either, and someone else must have delivered it.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


@dataclass
class MemberLog:
    """One member's file, parsed."""

    name: str
    deliveries: list[tuple[str, int]] = field(default_factory=list)
    events: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    ready: bool = False
    stopped: bool = False


def parse_member_lines(name: str, lines: Iterable[bytes]) -> MemberLog:
    out = MemberLog(name)
    for raw in lines:
        if not raw.endswith(b"\n"):
            continue  # cut short by a kill
        try:
            rec: dict[str, Any] = json.loads(raw)
        except ValueError:
            log.warning("%s: unreadable line %r", name, raw[:200])
            continue
        kind = rec.get("t")
        if kind == "d":
            if rec.get("k") is not None and rec.get("s") is not None:
                out.deliveries.append((str(rec["k"]), int(rec["s"])))
        elif kind == "e":
            out.events[str(rec["e"])] += 1
            if rec["e"] in ("rebalance_failed", "error"):
                out.errors.append(str(rec.get("error")))
        elif kind == "lc":
            out.ready |= rec.get("w") == "ready"
            out.stopped |= rec.get("w") == "stopped"
    return out


def read_member_file(path: Path) -> MemberLog:
    with open(path, "rb") as fh:
        return parse_member_lines(path.name.split(".")[0], fh.readlines())


def read_members(directory: Path) -> list[MemberLog]:
    return [read_member_file(p) for p in sorted(directory.glob("*.records.jsonl"))]


@dataclass(frozen=True)
class Consumption:
    produced: int
    consumed_unique: int
    lost: int
    duplicates: int
    unexpected: int          # consumed but never acknowledged (a failed or unknown produce)
    lost_sample: tuple[tuple[str, int], ...]

    def as_dict(self) -> dict[str, Any]:
        return {"produced": self.produced, "consumed_unique": self.consumed_unique,
                "lost": self.lost, "duplicates": self.duplicates,
                "unexpected": self.unexpected,
                "lost_sample": [f"{k}:{s}" for k, s in self.lost_sample]}


def consumption(produced: Iterable[tuple[str, int]], delivered: Iterable[tuple[str, int]]
                ) -> Consumption:
    """``duplicates``: deliveries beyond the first of each record, across all members."""
    want = set(produced)
    counts = Counter(delivered)
    got = set(counts)
    lost = sorted(want - got)
    return Consumption(
        produced=len(want), consumed_unique=len(want & got), lost=len(lost),
        duplicates=sum(c - 1 for c in counts.values()), unexpected=len(got - want),
        lost_sample=tuple(lost[:20]))


def all_deliveries(members: Iterable[MemberLog]) -> list[tuple[str, int]]:
    return [d for m in members for d in m.deliveries]


def event_totals(members: Iterable[MemberLog]) -> Counter[str]:
    total: Counter[str] = Counter()
    for m in members:
        total.update(m.events)
    return total
