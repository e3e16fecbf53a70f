"""Cells done / total of a Spark job, shown on the driver while the executors work.

The executors count each finished cell in an accumulator; Spark merges a task's counts into the
driver's value when the task ends, so a thread on the driver reads it twice a second and moves
a :class:`zkconsumer.lab.progress.Progress` bar (rich on a terminal, plain lines elsewhere).
Jobs that run their cells from the driver one after another just call ``advance``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import Any, TextIO

from zkconsumer.lab.progress import Progress

log = logging.getLogger(__name__)

POLL_S = 0.5


@contextlib.contextmanager
def executor_cells(sc: Any, total: int, label: str, stream: TextIO | None = None,
                   enabled: bool = True) -> Iterator[Any]:
    """A Spark accumulator for the executors to ``add(1)`` per finished cell, shown as a bar.

    The job must run (an action) inside the ``with`` block: the count is read while it runs.
    """
    counter = sc.accumulator(0)
    bar = Progress(total, enabled=enabled, stream=stream)
    bar.update(f"{label}: started", done=0)
    stop = threading.Event()

    def poll() -> None:
        shown = 0
        while not stop.wait(POLL_S):
            done = counter.value
            if done != shown:
                shown = done
                bar.update(label, done=min(done, total))

    watcher = threading.Thread(target=poll, name="spark-progress", daemon=True)
    watcher.start()
    try:
        yield counter
    finally:
        stop.set()
        watcher.join()
        bar.update(f"{label}: done", done=min(counter.value, total))
        bar.close()
