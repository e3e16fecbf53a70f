"""Original members in a chaos group: the Scala ``ZookeeperConsumerConnector`` of Kafka 0.10.2.

An original member is the member driver of a 0.10.2 build (``bin/zk-consumer-member.sh``, see
:mod:`zkconsumer.testing.original`) in a JVM of its own, behind its own fault proxies like a
zkconsumer member (its ``zk=`` connect string lists them). The runner reads the JVM's output
as it comes and writes the member's record file in the zkconsumer chaos member's format, each
line stamped with the time it was read, so the accounting and the duplicate causes read both
kinds alike:

- ``MSG ... value=k007:12`` is a delivered record ``{"t": "d", ...}``; the driver prints and
  flushes it right after the stream's iterator returned it;
- ``REBALANCE_RELEASE`` (the listener's ``beforeReleasingPartitions``, called on every attempt)
  is ``rebalance_started``, ``REBALANCE_ASSIGN`` is ``rebalance_succeeded``;
- ``READY`` and ``SHUTDOWN`` are the ``ready`` and ``stopped`` lifecycle lines;
- the ZooKeeper client's state changes in its log (``zookeeper state changed (Disconnected)``,
  ``(Expired)``, ``(SyncConnected)``) are ``session_state`` events, as the zkconsumer member
  reports its own.

The original commits by its auto-commit thread (every ``AUTO_COMMIT_INTERVAL_MS``) and before it
releases partitions; it commits the offset after the last record its iterator returned. The
driver knows one clean leave only, ``seconds=`` after ready: on SIGTERM the JVM exits without
committing and without closing its session (its registration stays until the session expires),
so a scheduled leave is a lifetime given at start, and SIGTERM is no leave.
"""

from __future__ import annotations

import logging
import math
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from zkconsumer.lab.chaos.consumer import ChaosMemberSpec, MemberFile, parse_value
from zkconsumer.lab.chaos.members import MemberLink
from zkconsumer.orphans import die_with_parent
from zkconsumer.testing.original import DRIVER, parse_message

log = logging.getLogger(__name__)

AUTO_COMMIT_INTERVAL_MS = 250   # as often as the zkconsumer chaos member commits
NO_LEAVE_S = 10 ** 6            # the lifetime of a member the schedule never lets leave
_STATE = re.compile(r"zookeeper state changed \((\w+)\)")
# ZkClient's states as the zkconsumer member's session_state events name them.
SESSION_STATES = {"Disconnected": "SUSPENDED", "Expired": "LOST", "SyncConnected": "CONNECTED"}


def translate(line: str, ts: float) -> dict[str, Any] | None:
    """One stdout line of the driver as a record-file line (None: nothing to keep)."""
    if line.startswith("MSG "):
        try:
            msg = parse_message(line)
        except ValueError:
            return None
        parsed = parse_value(msg.value.encode())
        key, seq = parsed if parsed is not None else (None, None)
        return {"t": "d", "k": key, "s": seq, "p": msg.partition, "o": msg.offset}
    if line.startswith("REBALANCE_RELEASE"):
        return {"t": "e", "e": "rebalance_started", "ts": ts}
    if line.startswith("REBALANCE_ASSIGN"):
        return {"t": "e", "e": "rebalance_succeeded", "ts": ts}
    if line.startswith("READY"):
        return {"t": "lc", "w": "ready", "ts": ts}
    if line == "SHUTDOWN":
        return {"t": "lc", "w": "stopped", "ts": ts}
    if line.startswith("FATAL") or line.startswith("LISTENER_ERROR"):
        return {"t": "e", "e": "error", "ts": ts, "error": line[:300]}
    return None


def translate_log(line: str, ts: float, expired: bool) -> dict[str, Any] | None:
    """A log (stderr) line of the JVM as a ``session_state`` event, if it is one; ``expired``:
    whether the session expired since the last connect (the next connect is a new session)."""
    m = _STATE.search(line)
    if m is None or m.group(1) not in SESSION_STATES:
        return None
    state = SESSION_STATES[m.group(1)]
    return {"t": "e", "e": "session_state", "ts": ts, "state": state,
            "new": state == "CONNECTED" and expired}


def lifetime_s(joined_at: float, leave_at: float | None) -> int:
    """``seconds=`` for a member joining at schedule time ``joined_at``: whole seconds to its
    scheduled leave (at least one), or :data:`NO_LEAVE_S` when the schedule has none."""
    if leave_at is None:
        return NO_LEAVE_S
    return max(1, math.ceil(leave_at - joined_at))


def driver_args(spec: ChaosMemberSpec, seconds: int) -> list[str]:
    """The driver's ``key=value`` arguments for a chaos member (the same session, backoff and
    retries as a zkconsumer chaos member; the auto-commit thread does the commits)."""
    return [f"zk={spec.zk_connect}", f"group={spec.group}", f"topic={spec.topic}", "streams=1",
            f"seconds={seconds}", f"consumer.id={spec.name}",
            f"zookeeper.session.timeout.ms={spec.session_timeout_ms}",
            f"zookeeper.connection.timeout.ms={spec.connection_timeout_ms}",
            f"rebalance.backoff.ms={spec.rebalance_backoff_ms}",
            f"rebalance.max.retries={spec.rebalance_max_retries}",
            "auto.commit.enable=true", f"auto.commit.interval.ms={AUTO_COMMIT_INTERVAL_MS}",
            "refresh.leader.backoff.ms=100", "consumer.timeout.ms=200"]


class OriginalChaosMember:
    """An original member process, its link, and the threads that write its record file."""

    kind = "original"

    def __init__(self, spec: ChaosMemberSpec, link: MemberLink, log_path: Path,
                 kafka_home: Path, seconds: int) -> None:
        self.spec = spec
        self.link = link
        self._log_path = log_path
        self._home = kafka_home
        self.seconds = seconds
        self.proc: subprocess.Popen[str] | None = None
        self._threads: list[threading.Thread] = []
        self._expired = False

    @property
    def name(self) -> str:
        return self.spec.name

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [str(self._home / DRIVER), *driver_args(self.spec, self.seconds)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
            errors="replace", start_new_session=True,
            preexec_fn=die_with_parent if sys.platform.startswith("linux") else None)
        out = MemberFile(self.spec.records_path)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        log_file = open(self._log_path, "a", encoding="utf-8")  # noqa: SIM115
        self._threads = [
            threading.Thread(target=self._read_stdout, args=(self.proc.stdout, out),
                             name=f"{self.name}-stdout", daemon=True),
            threading.Thread(target=self._read_log, args=(self.proc.stderr, out, log_file),
                             name=f"{self.name}-log", daemon=True)]
        for th in self._threads:
            th.start()

    def _read_stdout(self, stream: IO[str], out: MemberFile) -> None:
        try:
            for line in stream:
                rec = translate(line.rstrip("\n"), time.time())
                if rec is not None:
                    out.write(rec)
        finally:
            self._threads[1].join(10)
            out.close()

    def _read_log(self, stream: IO[str], out: MemberFile, log_file: IO[str]) -> None:
        with log_file:
            for line in stream:
                log_file.write(line)
                rec = translate_log(line, time.time(), self._expired)
                if rec is not None:
                    self._expired = rec["state"] == "LOST" or (
                        self._expired and rec["state"] != "CONNECTED")
                    out.write(rec)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def terminate(self) -> None:
        """SIGTERM: the JVM exits without a commit and its session stays until it expires (the
        driver's only clean leave is its lifetime); used once the run is over."""
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self._join()

    def wait(self, timeout: float) -> int | None:
        if self.proc is None:
            return None
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self._join()
        return code

    def _join(self) -> None:
        for th in self._threads:
            th.join(10)

