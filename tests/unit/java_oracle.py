"""The JVM's answer for a topic filter: tests/jregex/RegexOracle.java, compiled once, one JVM.

The oracle runs ``new kafka.consumer.Whitelist(raw)`` / ``Blacklist`` from the original's jar
(a Kafka 0.10.2 directory, from the ``kafka_build`` fixture) and
``Pattern.compile(regex).matcher(topic).matches()``; a question is one line, an answer one line,
so a whole corpus or a Hypothesis run uses a single JVM.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tests" / "jregex" / "RegexOracle.java"


def kafka_classpath(home: Path) -> str:
    """The jars of a Kafka directory: the shared build names them in ``bin/env.sh``; a binary
    distribution has them all under ``libs/``."""
    if not (home / "bin" / "env.sh").is_file():
        return str(home / "libs" / "*")
    out = subprocess.run(["bash", "-c", f"source {home}/bin/env.sh && echo $KAFKA_CP"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _hex(s: str) -> str:
    return s.encode("utf-16-be", "surrogatepass").hex()


def _unhex(h: str) -> str:
    return bytes.fromhex(h).decode("utf-16-be", "surrogatepass")


@dataclass(frozen=True)
class Answer:
    """Rejected (``error`` set) or accepted with the normalised regex and per-topic verdicts."""

    error: str | None
    regex: str | None = None
    matches: tuple[bool, ...] = ()
    whitelist: tuple[bool, ...] = ()
    blacklist: tuple[bool, ...] = ()


class JavaOracle:
    def __init__(self, kafka_home: Path) -> None:
        if shutil.which("javac") is None:
            raise RuntimeError("javac (Java 17) is required for the regex oracle")
        self._dir = tempfile.TemporaryDirectory(prefix="regex-oracle-")
        cp = kafka_classpath(kafka_home)
        subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", self._dir.name, str(SOURCE)],
                       check=True, capture_output=True)
        self._proc = subprocess.Popen(
            ["java", "-Xss16m", "-Xshare:auto", "-cp", f"{self._dir.name}:{cp}", "RegexOracle"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            encoding="ascii")

    def ask(self, raw: str, topics: list[str]) -> Answer:
        assert self._proc.stdin and self._proc.stdout
        self._proc.stdin.write(_hex(raw) + "\t" + ",".join("x" + _hex(t) for t in topics) + "\n")
        self._proc.stdin.flush()
        fields = self._proc.stdout.readline().rstrip("\n").split("\t")
        if fields[0] == "E":
            return Answer(_unhex(fields[1]))
        if fields[0] != "C":
            raise RuntimeError(f"oracle failed on {raw!r}: {fields}")

        def bits(s: str) -> tuple[bool, ...]:
            return tuple(c == "1" for c in s)
        return Answer(None, _unhex(fields[1]), bits(fields[2]), bits(fields[3]), bits(fields[4]))

    def close(self) -> None:
        if self._proc.stdin:
            self._proc.stdin.close()
        self._proc.wait(timeout=30)
        self._dir.cleanup()
