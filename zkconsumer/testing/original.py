"""Group members in processes of their own, original or zkconsumer, behind one interface.

:class:`OriginalMember` runs the original Scala ``kafka.consumer.ZookeeperConsumerConnector``
through the member driver of a Kafka 0.10.2 directory (``bin/zk-consumer-member.sh``, see
``../shared/kafka-0.10.2/README.md``); :class:`ZkconsumerMember` runs this project's connector
through :mod:`zkconsumer.testing.member_driver`, which takes the same ``key=value`` arguments and
prints the same lines. A test or the lab can therefore mix both kinds in one group, SIGKILL or
SIGSTOP either, and compare what each decided line by line:

    READY streams=<n>
    REBALANCE_RELEASE Map(<topic> -> ArrayBuffer(<p>, ..), ..)
    REBALANCE_ASSIGN <consumer id> Map(<topic> -> Map(<partition> -> <thread id>, ..), ..)
    MSG stream=<i> topic=<t> partition=<p> offset=<o> key=<k|null> value=<v>
    SHUTDOWN

A member leaves cleanly (commit, then its session closes) ``seconds`` after it is ready: the
original driver knows no other clean exit, so both kinds use that one. :func:`run_tool` runs one
of the original's tools (``ConsumerOffsetChecker``, ``ExportZkOffsets``, ...) from the same
directory.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from zkconsumer.errors import ServerError
from zkconsumer.testing._process import ManagedProcess, tail
from zkconsumer.testing.kafka import check_kafka_home

log = logging.getLogger(__name__)

DRIVER = "bin/zk-consumer-member.sh"
START_TIMEOUT_S = 60.0

Assignment = dict[str, dict[int, str]]
_PAIR = re.compile(r"([^\s(),]+) -> Map\(([^)]*)\)")
_MSG = re.compile(r"^MSG stream=(\d+) topic=(\S+) partition=(\d+) offset=(\d+) key=(\S*) "
                  r"value=(.*)$")


@dataclass(frozen=True)
class Delivered:
    """One message a member handed to its application (a ``MSG`` line)."""

    stream: int
    topic: str
    partition: int
    offset: int
    value: str


def parse_assignment(text: str) -> Assignment:
    """``Map(t -> Map(0 -> g_c1-0, ..), ..)`` (a Scala map's text) as topic -> partition -> thread.

    A topic whose inner map is empty is kept (the member subscribes to it and owns none of it).
    """
    body = text.strip()
    if not (body.startswith("Map(") and body.endswith(")")):
        raise ValueError(f"not a Scala Map: {text!r}")
    result: Assignment = {}
    for topic, inner in _PAIR.findall(body):
        parts: dict[int, str] = {}
        for item in filter(None, (x.strip() for x in inner.split(","))):
            partition, arrow, thread = item.partition(" -> ")
            if not arrow:
                raise ValueError(f"bad partition entry {item!r} in {text!r}")
            parts[int(partition)] = thread
        result[topic] = parts
    return result


def format_assignment(assignment: Mapping[str, Mapping[int, str]]) -> str:
    """The inverse of :func:`parse_assignment`, in the original driver's layout (sorted)."""
    topics = ", ".join(
        f"{t} -> Map({', '.join(f'{p} -> {th}' for p, th in sorted(parts.items()))})"
        for t, parts in sorted(assignment.items()))
    return f"Map({topics})"


def format_release(owned: Mapping[str, object]) -> str:
    topics = ", ".join(f"{t} -> ArrayBuffer({', '.join(str(p) for p in sorted(ps))})"  # type: ignore[attr-defined]
                       for t, ps in sorted(owned.items()))
    return f"Map({topics})"


def parse_message(line: str) -> Delivered:
    m = _MSG.match(line)
    if m is None:
        raise ValueError(f"not a MSG line: {line!r}")
    return Delivered(int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4)), m.group(6))


class MemberProcess:
    """One member process speaking the driver protocol; ``kind`` is ``original`` or ``zkconsumer``.

    ``props`` are ``ConsumerConfig`` keys (``consumer.id``, ``partition.assignment.strategy``,
    ``zookeeper.session.timeout.ms``, ...). Exactly one of ``topic`` and ``filter`` is given.
    """

    kind = ""

    def __init__(self, zk_connect: str, group: str, *, topic: str | None = None,
                 filter: str | None = None, streams: int = 1, seconds: int = 600,
                 props: Mapping[str, object] | None = None) -> None:
        if (topic is None) == (filter is None):
            raise ValueError("give exactly one of topic= and filter=")
        if streams < 1 or seconds < 1:
            raise ValueError(f"streams ({streams}) and seconds ({seconds}) must be >= 1")
        self.zk_connect = zk_connect
        self.group = group
        self.props = {k: str(v) for k, v in (props or {}).items()}
        args = [f"zk={zk_connect}", f"group={group}", f"streams={streams}", f"seconds={seconds}"]
        args.append(f"topic={topic}" if topic is not None else f"filter={filter}")
        args += [f"{k}={v}" for k, v in self.props.items()]
        self.args = args
        self._root = Path(tempfile.mkdtemp(prefix=f"zkconsumer-{self.kind}-member-"))
        self.stdout_path = self._root / "stdout"
        self.stderr_path = self._root / "stderr"
        self._proc: ManagedProcess | None = None

    def argv(self) -> list[str]:
        raise NotImplementedError

    @property
    def consumer_id(self) -> str | None:
        """``<group>_<consumer.id>`` when the id was given, else the one its ASSIGN lines name
        (the original makes up ``<group>_<host>-<time>-<uuid>``); None before its first one."""
        cid = self.props.get("consumer.id")
        if cid:
            return f"{self.group}_{cid}"
        for line in reversed(self.lines()):
            if line.startswith("REBALANCE_ASSIGN "):
                return line.split(" ", 2)[1]
        return None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def start(self) -> MemberProcess:
        self._proc = ManagedProcess(f"{self.kind}-member-{self.props.get('consumer.id', '')}",
                                    self.argv(), self.stdout_path, stderr_path=self.stderr_path)
        self._proc.start()
        return self

    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> MemberProcess:
        deadline = time.monotonic() + timeout
        while not self.ready():
            fatal = [line for line in self.lines() if line.startswith("FATAL")]
            if fatal or not self.alive() or time.monotonic() > deadline:
                raise ServerError(
                    f"{self.kind} member {self.consumer_id} did not become ready "
                    f"({fatal[0] if fatal else 'exited' if not self.alive() else 'timed out'}); "
                    f"last lines of {self.stderr_path}:\n{tail(self.stderr_path)}")
            time.sleep(0.05)
        return self

    # --- what it printed ---------------------------------------------------------------------

    def lines(self) -> list[str]:
        try:
            text = self.stdout_path.read_text(errors="replace")
        except OSError:
            return []
        # A line still being written has no newline yet: it is read next time.
        return text.split("\n")[:-1]

    def ready(self) -> bool:
        return any(line.startswith("READY") for line in self.lines())

    def shut_down(self) -> bool:
        return "SHUTDOWN" in self.lines()

    def assignments(self) -> list[Assignment]:
        """Every ``before_starting_fetchers`` decision, oldest first."""
        return [parse_assignment(line.split(" ", 2)[2]) for line in self.lines()
                if line.startswith("REBALANCE_ASSIGN ")]

    def assignment(self) -> Assignment | None:
        decided = self.assignments()
        return decided[-1] if decided else None

    def owned(self) -> dict[tuple[str, int], str]:
        """(topic, partition) -> thread for this member's own threads in its latest decision.

        The decision itself names every thread of the member's topics: the original passes the
        whole topic's assignment to ``beforeStartingFetchers``, and zkconsumer does the same.
        """
        mine = f"{self.consumer_id}-"
        return {(t, p): th for t, parts in (self.assignment() or {}).items()
                for p, th in parts.items() if th.startswith(mine)}

    def messages(self) -> list[Delivered]:
        return [parse_message(line) for line in self.lines() if line.startswith("MSG ")]

    def count(self, needle: str) -> int:
        """Lines of its stdout and of its log (stderr) holding ``needle``: how often it said,
        for instance, ``ConsumerRebalanceFailedException``."""
        try:
            log_lines = self.stderr_path.read_text(errors="replace").splitlines()
        except OSError:
            log_lines = []
        return sum(needle in line for line in self.lines() + log_lines)

    # --- what happens to it ------------------------------------------------------------------

    def alive(self) -> bool:
        return self._proc is not None and self._proc.alive()

    def kill(self) -> None:
        """SIGKILL: no commit, no release; the group notices when the session expires."""
        if self._proc is not None:
            self._proc.kill()

    def pause(self) -> None:
        """SIGSTOP: the process keeps its session until the server expires it."""
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal(signal.SIGCONT)

    def _signal(self, sig: int) -> None:
        if self._proc is None or self._proc.pid is None:
            raise ServerError(f"{self.kind} member {self.consumer_id} is not running")
        os.killpg(self._proc.pid, sig)

    def wait_shutdown(self, timeout: float) -> None:
        """Wait for its clean leave (``seconds`` after ready) and for the process to exit."""
        deadline = time.monotonic() + timeout
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        if self.alive() or not self.shut_down():
            raise ServerError(f"{self.kind} member {self.consumer_id} did not leave cleanly "
                              f"within {timeout:.0f} s; last lines of {self.stderr_path}:\n"
                              f"{tail(self.stderr_path)}")

    def close(self) -> None:
        if self._proc is not None:
            if self.alive():
                self._signal(signal.SIGCONT)
            self._proc.stop(grace=2.0)
        shutil.rmtree(self._root, ignore_errors=True)

    def __enter__(self) -> MemberProcess:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class OriginalMember(MemberProcess):
    """A member of the original Kafka 0.10.2 ZooKeeper consumer (a JVM) from ``kafka_home``."""

    kind = "original"

    def __init__(self, kafka_home: Path | str, zk_connect: str, group: str,
                 **kwargs: object) -> None:
        self.home = check_kafka_home(kafka_home)
        if not (self.home / DRIVER).is_file():
            raise ServerError(f"Kafka directory {str(self.home)!r} has no {DRIVER} (the member "
                              "driver of ../shared/kafka-0.10.2)")
        super().__init__(zk_connect, group, **kwargs)  # type: ignore[arg-type]

    def argv(self) -> list[str]:
        return [str(self.home / DRIVER), *self.args]


class ZkconsumerMember(MemberProcess):
    """A member of this project's connector in a Python process, same arguments and lines."""

    kind = "zkconsumer"

    def argv(self) -> list[str]:
        return [sys.executable, "-m", "zkconsumer.testing.member_driver", *self.args]


def run_tool(kafka_home: Path | str, cls: str, *args: str, timeout: float = 120,
             check: bool = True) -> subprocess.CompletedProcess[str]:
    """``bin/kafka-run-class.sh CLASS ARGS`` of a Kafka directory (its tools print their answer
    on stdout and log on stderr). ``check``: a non-zero exit raises, with the tool's stderr."""
    home = check_kafka_home(kafka_home)
    done = subprocess.run(["bash", str(home / "bin" / "kafka-run-class.sh"), cls, *args],
                          capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise ServerError(f"{cls} from {home} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done
