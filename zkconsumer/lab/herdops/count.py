"""Per-kind counts of one event's window of tap records (pure).

A connection belongs to the member whose registration it created
(``/consumers/<group>/ids/<group>_<id>``); a member's connection is its session, so a member
counts as one connection. Counted per member and in total:

* ``ops``: requests by kind (``getChildren``, ``getData``, ``exists``, ``create``, ``delete``,
  ``setData``, ``multi``, ``sync``, ``connect``, ``closeSession``, ...), pings left out;
* ``watches``: the reads among them that asked for a watch, by kind;
* ``errors``: requests answered with an error, by ``kind:code`` (-101 no node, -110 node
  exists), which tell a failed claim or a read of a missing znode apart;
* ``notifications``: watch notifications the server sent, by event type.

``patterns`` counts ``(kind, path with the group, topic, ids and partitions replaced, watch,
error)``: which znodes each kind touched, what the explanation of a difference reads.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from zkconsumer.lab.herdops.tap import TapRecord

NO_NODE = -101
NODE_EXISTS = -110
# Request kinds in the order tables show them; any other kind seen follows them.
KIND_ORDER = ("getChildren", "getChildren2", "getData", "exists", "create", "delete",
              "setData", "multi", "sync", "connect", "closeSession", "setWatches",
              "setWatches2")


@dataclass
class Counts:
    """What one member (or everybody) sent and received in a window."""

    ops: Counter[str] = field(default_factory=Counter)
    watches: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    notifications: Counter[str] = field(default_factory=Counter)

    def add(self, record: TapRecord) -> None:
        op = record.op
        if op.op == "ping":
            return
        if op.op == "notification":
            self.notifications[op.event] += 1
            return
        self.ops[op.op] += 1
        if op.watch:
            self.watches[op.op] += 1
        if op.err:
            self.errors[f"{op.op}:{op.err}"] += 1

    def as_dict(self) -> dict[str, dict[str, int]]:
        return {name: dict(sorted(getattr(self, name).items()))
                for name in ("ops", "watches", "errors", "notifications")}

    @property
    def requests(self) -> int:
        return sum(self.ops.values())


def connection_members(records: Iterable[TapRecord], group: str,
                       sessions: Mapping[int, int] | None = None) -> dict[int, str]:
    """connection -> member id (``<group>_<id>``), from the registration each one created; a
    connection that created none belongs to the member whose session it carries (``sessions``:
    connection -> session id), as a reconnection does."""
    prefix = f"/consumers/{group}/ids/"
    owners: dict[int, str] = {}
    for r in records:
        if r.op.op in ("create", "create2") and r.op.path.startswith(prefix):
            owners.setdefault(r.conn, r.op.path[len(prefix):])
    by_session = {sessions[c]: m for c, m in owners.items() if sessions and c in sessions}
    for conn, session in (sessions or {}).items():
        if conn not in owners and session in by_session:
            owners[conn] = by_session[session]
    return owners


def path_pattern(path: str, group: str, topics: Sequence[str]) -> str:
    """``/consumers/g/owners/t/3`` -> ``/consumers/<g>/owners/<t>/<p>``: a class of znodes."""
    out = re.sub(rf"/{re.escape(group)}(?=/|$)", "/<g>", path)
    for topic in topics:
        out = re.sub(rf"/{re.escape(topic)}(?=/|$)", "/<t>", out)
    out = re.sub(r"/ids/[^/]+$", "/ids/<id>", out)
    return re.sub(r"/\d+(?=/|$)", "/<p>", out)


@dataclass
class WindowCounts:
    """One event's window: the total, each member's counts, the znode classes touched."""

    total: Counts
    members: dict[str, Counts]
    patterns: Counter[str]
    first_t: float | None
    last_t: float | None

    def as_dict(self) -> dict[str, object]:
        return {"total": self.total.as_dict(),
                "by_member": {m: c.as_dict() for m, c in sorted(self.members.items())},
                "patterns": dict(sorted(self.patterns.items()))}


def count_window(records: Sequence[TapRecord], owners: Mapping[int, str], group: str,
                 topics: Sequence[str]) -> WindowCounts:
    """Counts of a window's records; a connection nobody registered on counts as ``?<n>``."""
    total = Counts()
    members: dict[str, Counts] = {}
    patterns: Counter[str] = Counter()
    first_t = last_t = None
    for r in records:
        if r.op.op == "ping":
            continue
        member = owners.get(r.conn, f"?{r.conn}")
        members.setdefault(member, Counts()).add(r)
        total.add(r)
        first_t = r.t if first_t is None else first_t
        last_t = r.t
        if r.op.op == "notification":
            patterns[f"notification {r.op.event} {path_pattern(r.op.path, group, topics)}"] += 1
        else:
            watch = " watch" if r.op.watch else ""
            err = f" err={r.op.err}" if r.op.err else ""
            subs = f" [{','.join(r.op.sub_ops)}]" if r.op.sub_ops else ""
            patterns[f"{r.op.op} {path_pattern(r.op.path, group, topics)}{watch}{err}{subs}"] += 1
    return WindowCounts(total, members, patterns, first_t, last_t)


def converge_time(records: Sequence[TapRecord], start_path: str | None) -> float | None:
    """Seconds from the event's first step on the server (the request on ``start_path``, or
    the window's first request when None) to its last request: how long the group took."""
    reqs = [r for r in records if r.op.op not in ("ping", "notification")]
    if not reqs:
        return None
    start = reqs[0].t
    if start_path is not None:
        starts = [r.t for r in reqs if r.op.path == start_path]
        if not starts:
            return None
        start = starts[0]
    return reqs[-1].t - start
