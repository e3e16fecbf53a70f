"""The auto-commit thread: ``kafka-consumer-autocommit-<consumer id>``.

The original (spec detailed §5.6): ``auto.commit.enable`` runs a scheduler with initial delay =
period = ``auto.commit.interval.ms`` whose failures are logged (``exception during autoCommit``)
and do not stop it. Whichever offset store is configured, the connector's ``commit_offsets`` is
what it calls. A commit the store refuses on purpose (:class:`OffsetCommitRefused`: the leader
mode's fenced commit of a member whose session expired) is expected there and logged as one
warning line, without the traceback an unexpected failure gets.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from zkconsumer.events import EventBus
from zkconsumer.offsets.store import OffsetCommitRefused

log = logging.getLogger(__name__)


def autocommit_failure_line(consumer_id: str, exc: BaseException) -> str | None:
    """The one warning line for an expected refusal of an auto-commit; None for any other
    failure (logged with its traceback)."""
    if isinstance(exc, OffsetCommitRefused):
        return (f"[{consumer_id}] autoCommit refused for group {exc.group!r}, partitions "
                f"{exc.partitions}: {exc.reason} (expected after a session expiry)")
    return None


class AutoCommitter:
    """The ``kafka-consumer-autocommit`` task: commit every ``auto.commit.interval.ms``."""

    def __init__(self, name: str, interval_ms: int, commit: Callable[[], object],
                 events: EventBus) -> None:
        self._interval_s = interval_ms / 1000.0
        self._commit = commit
        self._events = events
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("auto-commit thread %s did not stop within %.1f s",
                            self._thread.name, timeout)

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                self._commit()
            except Exception as exc:
                if self._stop.is_set():
                    break
                line = autocommit_failure_line(self._events.consumer_id, exc)
                if line is not None:
                    log.warning("%s", line)
                else:
                    log.exception("[%s] exception during autoCommit", self._events.consumer_id)
                self._events.emit("error", where="auto_commit", error=repr(exc))
