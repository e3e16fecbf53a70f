"""The original Kafka 0.10.2.2 from ../shared/kafka-0.10.2: its consumer member and its tools.

(Its broker is ``zkconsumer.testing.KafkaBroker``, run against a ZooKeeper of the test's own: the
0.10.2 controller takes over every topic it sees.) ``OriginalMember`` runs
``bin/zk-consumer-member.sh`` (a real ``ZookeeperConsumerConnector``) and parses its
machine-readable stdout; ``run_tool`` runs one of the original's tools.
"""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import threading
from pathlib import Path

KAFKA = Path(__file__).resolve().parents[3] / "shared" / "kafka-0.10.2"


class OriginalMember:
    """A JVM ``ZookeeperConsumerConnector`` member; ``lines`` is its stdout so far."""

    def __init__(self, zk_connect: str, group: str, *, topic: str | None = None,
                 topic_filter: str | None = None, streams: int = 1, seconds: int = 120,
                 **config: str) -> None:
        args = [f"zk={zk_connect}", f"group={group}", f"streams={streams}", f"seconds={seconds}"]
        args.append(f"topic={topic}" if topic is not None else f"filter={topic_filter}")
        args += [f"{k.replace('_', '.')}={v}" for k, v in config.items()]
        self.lines: list[str] = []
        self._proc = subprocess.Popen(
            ["bash", str(KAFKA / "bin" / "zk-consumer-member.sh"), *args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def consumer_id(self) -> str | None:
        last = self.last_assignment()
        return last[0] if last else None

    def last_assignment(self) -> tuple[str, dict[str, dict[int, str]]] | None:
        """The last ``REBALANCE_ASSIGN <id> Map(t -> Map(p -> thread))`` line, parsed."""
        for line in reversed(list(self.lines)):
            if line.startswith("REBALANCE_ASSIGN "):
                _, cid, rest = line.split(" ", 2)
                return cid, _scala_map(rest)
        return None

    def count(self, needle: str) -> int:
        return sum(needle in line for line in list(self.lines))

    def stop(self) -> None:
        """SIGTERM to its process group (the script and its JVM), SIGKILL after 20 s."""
        if self._proc.poll() is None:
            os.killpg(self._proc.pid, signal.SIGTERM)
            try:
                self._proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self._proc.pid, signal.SIGKILL)
                self._proc.wait()


def _scala_map(text: str) -> dict:
    """``Map(t -> Map(0 -> id-0))`` as a dict (topic names and thread ids have no spaces)."""
    out = text.replace("Map()", "{}")
    out = out.replace("Map(", "{").replace(")", "}")
    parts = []
    for token in out.replace("{", " { ").replace("}", " } ").replace(",", " , ").split():
        if token in "{},":
            parts.append(token)
        elif token == "->":
            parts.append(":")
        else:
            parts.append(token if token.isdigit() else repr(token))
    return ast.literal_eval("".join(parts))


def run_tool(cls: str, *args: str, timeout: float = 120) -> str:
    """``bin/kafka-run-class.sh CLASS ARGS``: the tool's stdout (stderr is its log)."""
    done = subprocess.run(["bash", str(KAFKA / "bin" / "kafka-run-class.sh"), cls, *args],
                          capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{cls} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout
