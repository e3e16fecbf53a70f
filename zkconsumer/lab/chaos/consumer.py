"""One chaos member: a connector in its own process (``python -m zkconsumer.lab.member --chaos``).

At-least-once, with exact accounting. Offsets are committed by hand, and only once every record
taken from the stream so far was written to the member's file: the line is flushed to the
kernel before the next record is taken, so it survives a SIGKILL. A committed offset therefore
never covers a record that is not in some file, and a record that was taken but not yet written
when the process died was not committed either: the next owner gets it again. The consuming
thread commits every ``COMMIT_INTERVAL_S``; a rebalance listener commits before partitions are
given up, under a lock the consuming thread holds from taking a record until it is written.
``auto.commit.enable`` is off: the auto-commit thread (and the connector's own commit before a
release) would commit offsets of records the file may not hold yet.

The file holds one JSON line per record or event::

    {"t": "d", "k": "k007", "s": 12, "p": 3, "o": 41}          a delivered record (key, seq)
    {"t": "e", "e": "rebalance_succeeded", "ts": ...}           a connector event
    {"t": "lc", "w": "ready" | "stopped", "ts": ...}            lifecycle

SIGTERM is a clean leave: commit, shut the connector down, exit (within the leave deadline the
member process is started with, see :mod:`zkconsumer.lab.member`).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

from zkconsumer.lab.member_config import member_properties

log = logging.getLogger(__name__)

COMMIT_INTERVAL_S = 0.25
# Connector events worth keeping (the rest are numerous and unused).
KEPT_EVENTS = frozenset({"rebalance_started", "rebalance_succeeded", "rebalance_failed",
                         "attempt_failed", "owner_conflict", "session_state",
                         "fetchers_stopped_on_session_loss", "error"})


@dataclass(frozen=True)
class ChaosMemberSpec:
    name: str
    group: str
    topic: str
    zk_connect: str
    records_path: str
    session_timeout_ms: int
    rebalance_backoff_ms: int = 500
    rebalance_max_retries: int = 20
    session_lost_policy: str = "legacy"
    # How long a starting member may take to connect (both kinds; by default it would be the
    # session timeout): on a loaded machine a start that cannot connect within a 4 s session
    # timeout exits, which measures the machine, not the group.
    connection_timeout_ms: int = 20000

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ChaosMemberSpec:
        return cls(**json.loads(text))

    def connector_config(self) -> dict[str, object]:
        """Manual commits only: see the module docstring."""
        return member_properties(
            zk_connect=self.zk_connect, group=self.group, consumer_id=self.name,
            session_timeout_ms=self.session_timeout_ms,
            rebalance_backoff_ms=self.rebalance_backoff_ms,
            rebalance_max_retries=self.rebalance_max_retries, consumer_timeout_ms=200,
            extra={"auto.commit.enable": False, "refresh.leader.backoff.ms": 100,
                   "zookeeper.connection.timeout.ms": self.connection_timeout_ms,
                   "zkconsumer.session.lost.policy": self.session_lost_policy})


class MemberFile:
    """Appends JSON lines, each flushed at once; shared by the consuming and event threads."""

    def __init__(self, path: str | Path) -> None:
        self._lock = threading.Lock()
        self._file: TextIO = open(path, "a", encoding="utf-8")  # noqa: SIM115

    def write(self, rec: dict[str, Any]) -> None:
        line = json.dumps(rec, separators=(",", ":")) + "\n"
        with self._lock:
            if not self._file.closed:
                self._file.write(line)
                self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()


def parse_value(value: bytes | None) -> tuple[str, int] | None:
    """``b"k007:12"`` -> ("k007", 12); anything else is not the chaos producer's."""
    if not value:
        return None
    key, sep, seq = value.decode("utf-8", errors="replace").rpartition(":")
    if not sep or not seq.isdigit():
        return None
    return key, int(seq)


class TakeGate:
    """The consuming thread's turn against a commit's, handed over fairly.

    The consuming thread holds :attr:`lock` from taking a record (which moves the offset a
    commit writes) until the record's line is in the file, and its wait for the next record is
    inside that hold. A plain lock would let it take the lock again the instant it let go, so a
    commit waiting on the rebalancer thread could starve for seconds (the rebalance with it,
    and a joiner's claims after it). A commit first closes the gate: the consuming thread
    finishes its current take (at most one ``consumer.timeout.ms``), waits at the gate, and
    the commit has the lock.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._open = threading.Event()
        self._open.set()

    def take_turn(self) -> None:
        """The consuming thread, before each take: wait while a commit has the turn."""
        self._open.wait()

    def commit(self, do: Callable[[], object]) -> None:
        """Run ``do`` once the consuming thread is between takes, and keep it there meanwhile."""
        self._open.clear()
        try:
            with self.lock:
                do()
        finally:
            self._open.set()


class CommitOnRelease:
    """Commit before a rebalance gives the partitions up, so their next owner starts where this
    member stopped instead of at the last periodic commit (fewer duplicates, never a loss).

    Runs on the rebalancer thread once the fetchers are stopped and the queues cleared, through
    the :class:`TakeGate`, so the commit never covers a record that is not in the file and
    waits at most one ``consumer.timeout.ms``.
    """

    def __init__(self, conn: Any, gate: TakeGate) -> None:
        self._conn = conn
        self._gate = gate

    def before_releasing_partitions(self, partitions: object) -> None:
        self._gate.commit(self._conn.commit_offsets)


def run(spec: ChaosMemberSpec, stop: threading.Event) -> None:
    from zkconsumer import ConsumerTimeoutException, ZookeeperConsumerConnector

    out = MemberFile(spec.records_path)

    def on_event(event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind in KEPT_EVENTS:
            rec = {"t": "e", "e": kind, "ts": event.get("ts", time.time())}
            if kind == "session_state":
                rec["state"] = event.get("state")
                rec["new"] = bool(event.get("new_session"))
            elif kind in ("rebalance_failed", "attempt_failed", "error"):
                rec["error"] = str(event.get("error"))[:300]
            out.write(rec)

    conn = ZookeeperConsumerConnector(spec.connector_config())
    conn.add_event_listener(on_event)
    gate = TakeGate()   # its lock held from taking a record until it is in the file
    conn.set_consumer_rebalance_listener(CommitOnRelease(conn, gate))
    try:
        stream = conn.create_message_streams({spec.topic: 1})[spec.topic][0]
        out.write({"t": "lc", "w": "ready", "ts": time.time()})
        it = iter(stream)
        dirty = False
        next_commit = time.monotonic() + COMMIT_INTERVAL_S
        while not stop.is_set():
            gate.take_turn()
            with gate.lock:
                try:
                    m = next(it)
                except ConsumerTimeoutException:
                    m = None
                except StopIteration:
                    break
                if m is not None:
                    parsed = parse_value(m.message)
                    key, seq = parsed if parsed is not None else (None, None)
                    out.write({"t": "d", "k": key, "s": seq, "p": m.partition, "o": m.offset})
                    dirty = True
            if dirty and time.monotonic() >= next_commit:
                # Every record taken from the stream so far is in the file: safe to commit.
                conn.commit_offsets()
                dirty = False
                next_commit = time.monotonic() + COMMIT_INTERVAL_S
        if dirty:
            conn.commit_offsets()
    finally:
        conn.shutdown()
        out.write({"t": "lc", "w": "stopped", "ts": time.time()})
        out.close()
