"""The original Kafka 0.10.2.2 from ../shared/kafka-0.10.2: its consumer member and its tools.

(Its broker is ``zkconsumer.testing.KafkaBroker``, run against a ZooKeeper of the test's own: the
0.10.2 controller takes over every topic it sees.) ``OriginalMember`` runs
``bin/zk-consumer-member.sh`` (a real ``ZookeeperConsumerConnector``) and parses its
machine-readable stdout; ``run_tool`` runs one of the original's tools.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from zkconsumer.testing import original
from zkconsumer.testing.original import Assignment

KAFKA = Path(__file__).resolve().parents[3] / "shared" / "kafka-0.10.2"


class OriginalMember(original.OriginalMember):
    """:class:`zkconsumer.testing.original.OriginalMember`, started at once, with this module's
    keyword spelling (``topic_filter=``, ``rebalance_max_retries="2"``)."""

    def __init__(self, zk_connect: str, group: str, *, topic: str | None = None,
                 topic_filter: str | None = None, streams: int = 1, seconds: int = 120,
                 **config: str) -> None:
        super().__init__(KAFKA, zk_connect, group, topic=topic, filter=topic_filter,
                         streams=streams, seconds=seconds,
                         props={k.replace("_", "."): v for k, v in config.items()})
        self.start()

    @property
    def consumer_id(self) -> str | None:  # type: ignore[override]
        last = self.last_assignment()
        return last[0] if last else None

    def last_assignment(self) -> tuple[str, Assignment] | None:
        """The last ``REBALANCE_ASSIGN <id> Map(t -> Map(p -> thread))`` line, parsed."""
        for line in reversed(self.lines()):
            if line.startswith("REBALANCE_ASSIGN "):
                _, cid, rest = line.split(" ", 2)
                return cid, original.parse_assignment(rest)
        return None

    def count(self, needle: str) -> int:
        """Lines of its stdout and its log holding ``needle``."""
        try:
            log_lines = self.stderr_path.read_text(errors="replace").splitlines()
        except OSError:
            log_lines = []
        return sum(needle in line for line in self.lines() + log_lines)

    def stop(self) -> None:
        self.close()


def run_tool(cls: str, *args: str, timeout: float = 120) -> str:
    """``bin/kafka-run-class.sh CLASS ARGS``: the tool's stdout (stderr is its log)."""
    done = subprocess.run(["bash", str(KAFKA / "bin" / "kafka-run-class.sh"), cls, *args],
                          capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{cls} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout
