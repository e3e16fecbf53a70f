"""The loop every lab experiment shares: run each cell, turn a failure into a result, go on.

A compare experiment and a split-brain scenario both run a list of cells (protocol x event x
repeat) against one set of servers. A cell that raises is recorded as ``failed`` with its error
and traceback and the next one starts, every result names the broker it ran against, and the
caller sees the results so far after each cell (so an interrupted experiment keeps what it
measured).
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable, Sequence
from typing import TypeVar

from zkconsumer.lab.progress import Progress
from zkconsumer.lab.spec import RunResult

log = logging.getLogger(__name__)

Cell = TypeVar("Cell")


def run_matrix(cells: Sequence[Cell], *, label: Callable[[Cell], str],
               run: Callable[[int, Cell], RunResult],
               failed: Callable[[Cell, str, str], RunResult], broker: str,
               progress: Progress,
               on_result: Callable[[list[RunResult]], None] | None = None) -> list[RunResult]:
    """``run(i, cell)`` for each cell in order; ``failed(cell, reason, traceback)`` if it raises."""
    results: list[RunResult] = []
    for i, cell in enumerate(cells):
        name = label(cell)
        progress.update(f"{name}: running", done=i)
        try:
            result = run(i, cell)
        except Exception as exc:
            log.exception("run %s failed", name)
            progress.note(f"run {name} FAILED: {exc!r} (the other runs go on)")
            result = failed(cell, repr(exc), traceback.format_exc())
        result.details.setdefault("broker", broker)
        results.append(result)
        if on_result is not None:
            on_result(list(results))
    progress.update("done", done=len(cells))
    return results
