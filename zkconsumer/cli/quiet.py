"""Console logging for narrated commands (the demo): everything goes to a log file, and the
console shows each distinct warning once, then a count of its repeats at the end.

Many members in one process log the same condition (a legacy member that owns nothing warns at
every rebalance); a reader needs to see it once and know how often it happened, not scroll past
a hundred copies.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import TextIO

# Member, thread and group names vary between copies of one message; they do not make it new.
_VARYING = re.compile(r"[A-Za-z0-9_.\-]*[0-9][A-Za-z0-9_.\-]*")
_LIST = re.compile(r"#(?:, #)+")  # "threads a-0, b-0, c-0": one shape however many are listed


def message_shape(record: logging.LogRecord) -> tuple[str, str]:
    """What makes two log lines "the same warning": the logger and the message with every
    token that contains a digit (ids, counts, ports) blanked out."""
    return record.name, _LIST.sub("#", _VARYING.sub("#", record.getMessage()))


class OncePerShape(logging.Handler):
    """Writes the first record of each shape to ``stream``; counts the rest."""

    def __init__(self, stream: TextIO | None = None, level: int = logging.WARNING) -> None:
        super().__init__(level)
        self.stream = stream or sys.stderr
        self.counts: Counter[tuple[str, str]] = Counter()
        self.first: dict[tuple[str, str], str] = {}
        self._guard = threading.Lock()
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        shape = message_shape(record)
        with self._guard:
            self.counts[shape] += 1
            if self.counts[shape] > 1:
                return
            line = self.format(record)
            self.first[shape] = line
        self.stream.write(line + "\n")
        self.stream.flush()

    def repeats(self) -> list[tuple[int, str]]:
        """``(times repeated after the first, first line)`` for every shape seen more than once."""
        with self._guard:
            return [(n - 1, self.first[s]) for s, n in self.counts.items() if n > 1]


def narrate_to(log_file: Path, stream: TextIO | None = None) -> OncePerShape:
    """Route all logging to ``log_file`` (INFO and up) and warnings, once each, to the console."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    to_file = logging.FileHandler(log_file, encoding="utf-8")
    to_file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    to_file.setLevel(logging.INFO)
    console = OncePerShape(stream)
    root.addHandler(to_file)
    root.addHandler(console)
    root.setLevel(logging.INFO)
    logging.getLogger("kazoo").setLevel(logging.WARNING)
    return console
