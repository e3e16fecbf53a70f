"""One join and one leave at each group size, counted by ZooKeeper operation kind on the wire.

For each kind of member (``original``: the Scala connector of Kafka 0.10.2 in its own JVM;
``zkconsumer``: this project's connector in its own Python process; both through the same member
driver protocol and the same settings), one group on one topic grows through the sizes. At each
size N, once the group has settled, ``repeats`` times:

* **join**: one more member starts (N -> N+1); the window runs from its start until the group
  has settled;
* **leave**: that member leaves cleanly ``hold_s`` after it became ready (N+1 -> N); the window
  runs from the end of the join's until the group has settled again.

Every member talks to ZooKeeper through one :class:`~zkconsumer.lab.herdops.tap.ZkTap`, so each
window's operations are counted by kind, per member, from the bytes the server received and
sent (pings left out). The broker (Apache Kafka 0.10.2 by default) talks to ZooKeeper directly
and counts nothing.

Settled: the registrations are exactly the group's members, every partition has an owner znode
naming a thread of one of them, every member's last decision is that assignment, and no member
sent a request or got a notification for ``quiet_s`` (longer than the rebalance backoff, so a
member waiting out a backoff is not taken for a settled one).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from zkconsumer.identity import consumer_id_of
from zkconsumer.lab.herdops.count import connection_members, converge_time, count_window
from zkconsumer.lab.herdops.tap import TapRecord, ZkTap
from zkconsumer.testing.original import MemberProcess, OriginalMember, ZkconsumerMember
from zkconsumer.zk import paths
from zkconsumer.zk.client import started_client

log = logging.getLogger(__name__)

KINDS = ("original", "zkconsumer")
EVENTS = ("join", "leave")


# Receives every window's records: (kind, N, event, repeat, records, connection -> member,
# group, topic).
TraceWriter = Callable[[str, int, str, int, list[TapRecord], dict[int, str], str, str], None]


class HerdOpsError(RuntimeError):
    """The group did not settle, or a member failed; the message says which and where."""


@dataclass(frozen=True)
class HerdOpsSpec:
    """What to measure. ``props`` are ConsumerConfig keys every member gets, either kind."""

    kinds: tuple[str, ...] = KINDS
    sizes: tuple[int, ...] = (4, 8, 16, 32)
    repeats: int = 3
    partitions: int = 8
    props: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_PROPS))
    quiet_s: float = 3.0
    hold_s: int = 15
    settle_timeout_s: float = 240.0

    def validate(self) -> None:
        bad = [k for k in self.kinds if k not in KINDS]
        if bad or not self.kinds:
            raise ValueError(f"kinds must be among {KINDS}, got {self.kinds}")
        if not self.sizes or any(n < 1 for n in self.sizes) or list(self.sizes) != sorted(
                set(self.sizes)):
            raise ValueError(f"sizes must be increasing and >= 1, got {self.sizes}")
        if self.repeats < 1 or self.partitions < 1:
            raise ValueError(f"repeats ({self.repeats}) and partitions ({self.partitions}) "
                             "must be >= 1")
        backoff = float(self.props.get("rebalance.backoff.ms", 2000)) / 1000
        if self.quiet_s <= backoff:
            raise ValueError(f"quiet_s ({self.quiet_s}) must exceed the rebalance backoff "
                             f"({backoff} s): a member in its backoff is quiet, not settled")


# The member driver's defaults (auto.offset.reset=smallest, consumer.timeout.ms=500, a 6 s
# session) stay; the retries are raised so that growing the group by many members at once
# converges on either kind instead of giving up after four attempts.
DEFAULT_PROPS = {"rebalance.backoff.ms": "2000", "rebalance.max.retries": "20",
                 "zookeeper.session.timeout.ms": "6000"}


@dataclass
class RunRow:
    """One measured event: the counts of its window and what it took."""

    kind: str
    members: int
    event: str
    repeat: int
    status: str
    counts: dict[str, object]
    converge_s: float | None
    window_s: float
    joiner: str  # its consumer id; ``by_member`` names it "joiner"
    error: str = ""

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "members": self.members, "event": self.event,
                "repeat": self.repeat, "status": self.status, "converge_s": self.converge_s,
                "window_s": round(self.window_s, 3), "joiner": self.joiner,
                "error": self.error, **self.counts}


class _Group:
    """The members of one kind's group, all through the tap."""

    def __init__(self, kind: str, spec: HerdOpsSpec, tap: ZkTap, zk: KazooClient,
                 kafka_home: Path, topic: str) -> None:
        self.kind = kind
        self.spec = spec
        self.tap = tap
        self.zk = zk
        self.kafka_home = kafka_home
        self.topic = topic
        self.group = f"{topic}-{kind}"
        self.members: dict[str, MemberProcess] = {}
        self._next = 0
        self.trace: TraceWriter | None = None

    def commit_start_offsets(self) -> None:
        """Offset 0 committed for every partition before anybody joins. Without it, each
        member's first rebalance after its fetchers resolved ``auto.offset.reset`` writes the
        offsets it started from (the original's ``commitOffsetToZooKeeper`` writes whenever the
        position differs from the one it read, -1 for none): operations of the group's first
        windows that have nothing to do with the membership change measured."""
        for p in range(self.spec.partitions):
            self.zk.create(paths.offset(self.group, self.topic, p), b"0", makepath=True)

    def new_member(self, seconds: int) -> MemberProcess:
        cid = f"m{self._next:03d}"
        self._next += 1
        props = {**self.spec.props, "consumer.id": cid}
        kwargs: dict[str, object] = {"topic": self.topic, "streams": 1, "seconds": seconds,
                                     "props": props}
        if self.kind == "original":
            member: MemberProcess = OriginalMember(self.kafka_home, self.tap.address, self.group,
                                                   **kwargs)
        else:
            member = ZkconsumerMember(self.tap.address, self.group, **kwargs)  # type: ignore[arg-type]
        self.members[f"{self.group}_{cid}"] = member
        return member.start()

    def live(self) -> dict[str, MemberProcess]:
        return {cid: m for cid, m in self.members.items() if m.alive()}

    def agreed(self) -> str:
        """'' when the group agrees on one assignment of every partition, else what is off."""
        live = self.live()
        try:
            ids = set(self.zk.get_children(paths.consumer_ids(self.group)))
        except NoNodeError:
            ids = set()
        if ids != set(live):
            return f"registrations {sorted(ids)} != live members {sorted(live)}"
        owners = {}
        for p in range(self.spec.partitions):
            try:
                owners[p] = self.zk.get(paths.owner(self.group, self.topic, p))[0].decode()
            except NoNodeError:
                return f"partition {p} has no owner"
        if any(consumer_id_of(th) not in live for th in owners.values()):
            return f"owners {owners} name a member that is gone"
        for cid, m in live.items():
            decided = m.assignment()
            if decided is None or decided.get(self.topic, {}) != owners:
                return f"{cid} decided {decided}, owners are {owners}"
        return ""

    def wait_settled(self, what: str) -> float:
        """Poll until settled; the time of the window's last activity."""
        deadline = time.monotonic() + self.spec.settle_timeout_s
        why = ""
        while time.monotonic() < deadline:
            for cid, m in self.members.items():
                if any(line.startswith("FATAL") for line in m.lines()):
                    raise HerdOpsError(f"{self.kind} member {cid} failed during {what}")
            why = self.agreed()
            last = self.tap.last_activity()
            if not why and time.monotonic() - last >= self.spec.quiet_s:
                return last
            time.sleep(0.2)
        raise HerdOpsError(f"{self.kind} group {self.group} did not settle after {what} "
                           f"within {self.spec.settle_timeout_s:.0f} s: {why or 'not quiet'}")

    def close(self) -> None:
        for m in self.members.values():
            m.close()


def run_herd_ops(spec: HerdOpsSpec, zk_connect: str, kafka_home: Path,
                 create_topic: Callable[[str, int], None],
                 on_row: Callable[[RunRow], None] | None = None,
                 trace: TraceWriter | None = None) -> list[RunRow]:
    """Every kind's sweep on the servers given (ZooKeeper, the broker's Kafka directory)."""
    spec.validate()
    rows: list[RunRow] = []
    with started_client(zk_connect) as zk:
        for kind in spec.kinds:
            topic = f"ops-{uuid.uuid4().hex[:6]}"
            create_topic(topic, spec.partitions)
            with ZkTap(zk_connect) as tap:
                group = _Group(kind, spec, tap, zk, kafka_home, topic)
                group.commit_start_offsets()
                group.trace = trace
                try:
                    _sweep(group, rows, on_row)
                finally:
                    group.close()
    return rows


def _sweep(g: _Group, rows: list[RunRow], on_row: Callable[[RunRow], None] | None) -> None:
    spec = g.spec
    for n in spec.sizes:
        growing = [g.new_member(seconds=36000) for _ in range(n - len(g.live()))]
        for m in growing:
            m.wait_ready(timeout=spec.settle_timeout_s)
        g.wait_settled(f"growing to {n}")
        log.info("%s: group of %d settled", g.kind, n)
        for repeat in range(spec.repeats):
            for row in _join_and_leave(g, n, repeat):
                rows.append(row)
                if on_row is not None:
                    on_row(row)


def _join_and_leave(g: _Group, n: int, repeat: int) -> list[RunRow]:
    spec = g.spec
    t0 = time.monotonic()
    joiner = g.new_member(seconds=spec.hold_s)
    cid = next(c for c, m in g.members.items() if m is joiner)
    joiner.wait_ready(timeout=spec.settle_timeout_s)
    join_end = g.wait_settled(f"the join of {cid} at N={n}") + 1e-6
    if not joiner.alive():
        raise HerdOpsError(f"{cid} left before the join at N={n} settled: raise hold_s "
                           f"({spec.hold_s} s)")
    joiner.wait_shutdown(timeout=spec.hold_s + spec.settle_timeout_s)
    leave_end = g.wait_settled(f"the leave of {cid} at N={n}") + 1e-6
    records = g.tap.records()
    owners = connection_members(records, g.group, g.tap.sessions())
    out = []
    for event, since, until, start in (
            ("join", t0, join_end, paths.consumer_registration(g.group, cid)),
            ("leave", join_end, leave_end, None)):
        window = [r for r in records if since <= r.t < until]
        out.append(_row(g, n, event, repeat, window, owners, start, until - since, cid))
        if g.trace is not None:
            g.trace(g.kind, n, event, repeat, window, owners, g.group, g.topic)
    return out


def _row(g: _Group, n: int, event: str, repeat: int, window: list[TapRecord],
         owners: dict[int, str], start: str | None, window_s: float, cid: str) -> RunRow:
    counts = count_window(window, owners, g.group, [g.topic])
    data = counts.as_dict()
    data["by_member"] = {("joiner" if m == cid else m.replace(f"{g.group}_", "")): c
                         for m, c in data["by_member"].items()}  # type: ignore[attr-defined]
    unreadable = dict(g.tap.unreadable)
    status = "ok" if not unreadable else "unreadable"
    conv = converge_time(window, start)
    return RunRow(g.kind, n, event, repeat, status, data,
                  None if conv is None else round(conv, 4), window_s,
                  cid.replace(f"{g.group}_", ""),
                  error=f"unreadable connections: {unreadable}" if unreadable else "")
