"""A one-line progress bar on stderr (no dependency): rewritten in place on a terminal, one line
per update otherwise (CI logs)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, total: int, enabled: bool = True, stream: TextIO | None = None,
                 width: int = 24) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.width = width
        self._started = time.monotonic()
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def update(self, label: str, done: int | None = None) -> None:
        if done is not None:
            self.done = done
        if not self.enabled:
            return
        filled = int(self.width * self.done / self.total)
        bar = "#" * filled + "-" * (self.width - filled)
        elapsed = time.monotonic() - self._started
        line = f"[{bar}] {self.done}/{self.total} {elapsed:5.0f}s {label}"
        if self._tty:
            self.stream.write("\r\x1b[2K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def advance(self, label: str) -> None:
        self.update(label, self.done + 1)

    def note(self, message: str) -> None:
        """A message that must stay visible (a failed run), above the bar."""
        if not self.enabled:
            return
        if self._tty:
            self.stream.write("\r\x1b[2K")
        self.stream.write(message + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self._tty:
            self.stream.write("\n")
            self.stream.flush()
