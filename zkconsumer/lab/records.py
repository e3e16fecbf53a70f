"""What members observe, written as JSON lines and read back: the lab's only source of truth.

Every member incarnation (a member restarted in a rolling bounce is a new incarnation of the
same logical member) appends to its own file. A file, rather than a queue, because a crashed
member is SIGKILLed: every line it wrote before the kill is already in the kernel and survives,
and the same code serves members in threads and in processes.

One line per record, short keys because deliveries are numerous::

    {"k": "d",  "ts": ..., "m": "m03", "i": 0, "p": 5, "o": 17, "v": 342}   delivery (v = seq)
    {"k": "tl", "ts": ..., "m": "m03", "i": 0, "w": "fetching", "ps": [4, 5]} timeline
    {"k": "co", "ts": ..., "m": "m03", "i": 0, "w": "owner_conflict"}         coordination
    {"k": "rq", "ts": ..., "m": "m03", "i": 0, "c": {"JoinGroup": 3, ...}}    cumulative counts
    {"k": "lc", "ts": ..., "m": "m03", "i": 0, "w": "ready"}                  lifecycle
    {"k": "dc", "ts": ..., "m": "m03", "i": 0, "h": "9f0c...", "ids": [...], "pc": {"t": 8}}
                                                                              decision

A decision (``dc``) is what a self-coordinating member computed in one rebalance attempt: ``h``
is :func:`decision_digest` of the view it decided from (the group's consumer thread ids per
topic, the partitions per topic) and the global assignment it computed; ``ids`` are the consumer
ids it saw and ``pc`` the partition count per topic, kept for reading the run afterwards.
"""

from __future__ import annotations

import enum
import hashlib
import json
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


class Timeline(str, enum.Enum):
    """Per-partition transitions a member reports.

    ``assigned``: the group gave it the partition (owner znode claimed / on_assign).
    ``fetching``: its fetchers were started for it. ``revoked``: it stopped fetching and gave it
    up (fetchers stopped before an eager release / on_revoke / on_lost).
    """

    ASSIGNED = "assigned"
    FETCHING = "fetching"
    REVOKED = "revoked"


class Lifecycle(str, enum.Enum):
    STARTING = "starting"
    STOPPING = "stopping"     # a clean leave was requested
    STOPPED = "stopped"       # the client was shut down / closed
    KILLED = "killed"         # written by the runner: SIGKILL, nothing was shut down
    ERROR = "error"


class Coord(str, enum.Enum):
    """Coordination events counted per run."""

    REBALANCE_STARTED = "rebalance_started"
    ATTEMPT = "attempt"
    CONFLICT = "owner_conflict"
    ROLLBACK = "rollback"
    REBALANCE_FAILED = "rebalance_failed"
    REBALANCE_SUCCEEDED = "rebalance_succeeded"
    LOST = "assignment_lost"
    WATCH_FIRED = "watch_fired"   # a ZooKeeper watch notification reached the member
    # a KIP-848 member in the group with nothing assigned: librdkafka calls no rebalance
    # callback for an empty assignment, so its statistics say when it got there
    JOINED = "joined"


@dataclass(frozen=True)
class Delivery:
    ts: float
    member: str
    incarnation: int
    partition: int
    offset: int
    seq: int | None


@dataclass(frozen=True)
class TimelineEntry:
    ts: float
    member: str
    incarnation: int
    what: Timeline
    partitions: tuple[int, ...]


@dataclass(frozen=True)
class CoordEvent:
    ts: float
    member: str
    incarnation: int
    what: str


@dataclass(frozen=True)
class RequestSample:
    ts: float
    member: str
    incarnation: int
    counts: dict[str, int]


@dataclass(frozen=True)
class LifecycleEntry:
    ts: float
    member: str
    incarnation: int
    what: Lifecycle
    detail: str = ""


@dataclass(frozen=True)
class Decision:
    """One rebalance decision of a self-coordinating member (see the module docstring)."""

    ts: float
    member: str
    incarnation: int
    digest: str
    consumers: tuple[str, ...] = ()
    partition_counts: tuple[tuple[str, int], ...] = ()


def decision_digest(partitions_for_topic: Mapping[str, Sequence[int]],
                    threads_per_topic: Mapping[str, Sequence[str]],
                    assignment: Mapping[Any, str]) -> str:
    """A short stable hash of (view, resulting global assignment): equal iff both are equal.

    ``assignment`` maps partitions (anything with a stable ``str``, e.g. ``TopicPartition`` or
    ``(topic, partition)``) to the owning thread id.
    """
    canon = {
        "partitions": {t: sorted(int(p) for p in ps)
                       for t, ps in sorted(partitions_for_topic.items())},
        "threads": {t: sorted(ts) for t, ts in sorted(threads_per_topic.items())},
        "assignment": sorted([str(tp), tid] for tp, tid in assignment.items()),
    }
    text = json.dumps(canon, sort_keys=True, separators=(",", ":"))
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


@dataclass
class RunRecords:
    """Everything the members of one run wrote, parsed."""

    deliveries: list[Delivery] = field(default_factory=list)
    timeline: list[TimelineEntry] = field(default_factory=list)
    coord: list[CoordEvent] = field(default_factory=list)
    requests: list[RequestSample] = field(default_factory=list)
    lifecycle: list[LifecycleEntry] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)

    def add(self, rec: dict[str, Any]) -> None:
        kind, ts, m, i = rec["k"], float(rec["ts"]), str(rec["m"]), int(rec.get("i", 0))
        if kind == "d":
            self.deliveries.append(Delivery(ts, m, i, int(rec["p"]), int(rec["o"]), rec.get("v")))
        elif kind == "tl":
            self.timeline.append(TimelineEntry(ts, m, i, Timeline(rec["w"]),
                                               tuple(int(p) for p in rec["ps"])))
        elif kind == "co":
            self.coord.append(CoordEvent(ts, m, i, str(rec["w"])))
        elif kind == "rq":
            self.requests.append(RequestSample(ts, m, i, {k: int(v) for k, v in rec["c"].items()}))
        elif kind == "lc":
            self.lifecycle.append(LifecycleEntry(ts, m, i, Lifecycle(rec["w"]),
                                                 str(rec.get("detail", ""))))
        elif kind == "dc":
            self.decisions.append(Decision(
                ts, m, i, str(rec["h"]), tuple(str(x) for x in rec.get("ids") or ()),
                tuple(sorted((str(t), int(n)) for t, n in (rec.get("pc") or {}).items()))))
        else:
            log.warning("unknown record kind %r ignored", kind)

    def highest_delivered(self) -> dict[str, int]:
        """The highest offset delivered per partition (keyed by its number as text)."""
        top: dict[str, int] = {}
        for d in self.deliveries:
            key = str(d.partition)
            if d.offset > top.get(key, -1):
                top[key] = d.offset
        return top

    def extend(self, recs: list[dict[str, Any]]) -> None:
        for rec in recs:
            self.add(rec)

    def sort(self) -> None:
        """Records from several files interleave; metrics want time order."""
        for lst in (self.deliveries, self.timeline, self.coord, self.requests, self.lifecycle,
                    self.decisions):
            lst.sort(key=lambda r: r.ts)


class RecordWriter:
    """Appends records for one member incarnation; thread-safe; every line flushed at once."""

    def __init__(self, path: str | Path, member: str, incarnation: int) -> None:
        self.path = Path(path)
        self.member = member
        self.incarnation = incarnation
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115

    def write(self, kind: str, ts: float | None = None, **fields: Any) -> None:
        rec = {"k": kind, "ts": time.time() if ts is None else ts, "m": self.member,
               "i": self.incarnation, **fields}
        line = json.dumps(rec, separators=(",", ":")) + "\n"
        with self._lock:
            if not self._file.closed:
                self._file.write(line)
                self._file.flush()

    def delivery(self, partition: int, offset: int, seq: int | None) -> None:
        self.write("d", p=partition, o=offset, v=seq)

    def timeline(self, what: Timeline, partitions: list[int] | tuple[int, ...]) -> None:
        if partitions:
            self.write("tl", w=what.value, ps=sorted(partitions))

    def coord(self, what: Coord | str) -> None:
        self.write("co", w=what.value if isinstance(what, Coord) else what)

    def requests(self, counts: dict[str, int]) -> None:
        self.write("rq", c=counts)

    def lifecycle(self, what: Lifecycle, detail: str = "") -> None:
        self.write("lc", w=what.value, detail=detail)

    def decision(self, digest: str, consumers: Sequence[str],
                 partition_counts: Mapping[str, int]) -> None:
        self.write("dc", h=digest, ids=list(consumers), pc=dict(partition_counts))

    def close(self) -> None:
        with self._lock:
            self._file.close()


class RecordTail:
    """Reads every ``*.jsonl`` under a directory incrementally (the runner polls while it waits).

    A line is taken only once complete: a member may be in the middle of writing it.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self._offsets: dict[Path, int] = {}
        self.records = RunRecords()

    def poll(self) -> int:
        """Read what was appended since the last poll; returns the number of new records."""
        new = 0
        for path in sorted(self.directory.glob("*.jsonl")):
            start = self._offsets.get(path, 0)
            with open(path, "rb") as fh:
                fh.seek(start)
                data = fh.read()
            end = data.rfind(b"\n")
            if end < 0:
                continue
            for line in data[: end + 1].splitlines():
                if not line.strip():
                    continue
                try:
                    self.records.add(json.loads(line))
                    new += 1
                except (ValueError, KeyError) as exc:
                    log.warning("%s: unreadable record %r (%s)", path, line[:200], exc)
            self._offsets[path] = start + end + 1
        return new
