"""Progress of long runs (sweeps, soaks, Spark jobs) on stderr.

On a terminal a ``rich`` bar with the count, elapsed time and ETA is redrawn in place; elsewhere
(CI logs, files) every update is one plain line with the same facts, so logs stay readable.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


def _eta(done: int, total: int, elapsed: float) -> str:
    if done <= 0 or done >= total:
        return "—" if done < total else "0s"
    return f"{elapsed / done * (total - done):.0f}s"


class Progress:
    """``advance`` after each finished item; ``note`` for a message that must stay visible."""

    def __init__(self, total: int, enabled: bool = True, stream: TextIO | None = None) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self._started = time.monotonic()
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._bar: Any = None
        self._task: Any = None
        if self.enabled and self._tty:
            self._start_bar()

    def _start_bar(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import (
            Progress as RichProgress,
        )

        console = Console(file=self.stream, force_terminal=True)
        self._bar = RichProgress(
            BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("eta"),
            TimeRemainingColumn(), TextColumn("{task.description}"), console=console,
            transient=False)
        self._task = self._bar.add_task("", total=self.total)
        self._bar.start()

    def update(self, label: str, done: int | None = None) -> None:
        if done is not None:
            self.done = done
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, description=label)
            return
        elapsed = time.monotonic() - self._started
        self.stream.write(f"{self.done}/{self.total} {elapsed:5.0f}s eta "
                          f"{_eta(self.done, self.total, elapsed)} {label}\n")
        self.stream.flush()

    def advance(self, label: str) -> None:
        self.update(label, self.done + 1)

    def note(self, message: str) -> None:
        """A message that must stay visible (a failed run), above the bar."""
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.console.print(message, markup=False, highlight=False)
        else:
            self.stream.write(message + "\n")
            self.stream.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
