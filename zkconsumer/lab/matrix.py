"""The loop every lab experiment shares: run each cell, turn a failure into a result, go on.

A compare experiment and a split-brain scenario both run a list of cells (protocol x event x
repeat) against one set of servers. A cell that raises is recorded as ``failed`` with its error
and traceback and the next one starts, every result names the broker it ran against, and the
caller sees the results so far after each cell (so an interrupted experiment keeps what it
measured).
"""

from __future__ import annotations

import logging
import threading
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from zkconsumer.lab.progress import Progress
from zkconsumer.lab.runs import RunResult
from zkconsumer.results.portable import portable_command

log = logging.getLogger(__name__)

Cell = TypeVar("Cell")


def run_matrix(cells: Sequence[Cell], *, label: Callable[[Cell], str],
               run: Callable[[int, Cell], RunResult],
               failed: Callable[[Cell, str, str], RunResult], broker: str,
               progress: Progress,
               on_result: Callable[[list[RunResult]], None] | None = None,
               parallel: int = 1) -> list[RunResult]:
    """``run(i, cell)`` for each cell; ``failed(cell, reason, traceback)`` if it raises.

    ``parallel`` > 1 runs that many cells at once (each on its own topic and group): a quick
    look, since the runs then share the machine and their timings disturb each other. Results
    come back in cell order either way.
    """
    if parallel < 1:
        raise ValueError(f"parallel must be >= 1, got {parallel}")
    done: dict[int, RunResult] = {}
    lock = threading.Lock()

    def one(i: int, cell: Cell) -> None:
        name = label(cell)
        if parallel == 1:
            progress.update(f"{name}: running", done=i)
        try:
            result = run(i, cell)
        except Exception as exc:
            log.exception("run %s failed", name)
            progress.note(f"run {name} FAILED: {exc!r} (the other runs go on)")
            # Committed with the run: the traceback's file names without this machine's folders.
            result = failed(cell, repr(exc), portable_command(traceback.format_exc()))
        result.details.setdefault("broker", broker)
        with lock:
            done[i] = result
            if parallel > 1:
                progress.update(f"{name}: done", done=len(done))
            if on_result is not None:
                on_result([done[k] for k in sorted(done)])

    if parallel == 1:
        for i, cell in enumerate(cells):
            one(i, cell)
    else:
        with ThreadPoolExecutor(parallel, thread_name_prefix="lab-cell") as pool:
            for future in [pool.submit(one, i, cell) for i, cell in enumerate(cells)]:
                future.result()
    progress.update("done", done=len(cells))
    return [done[i] for i in range(len(cells))]
