"""The servers of a chaos run: the ensemble, the broker, and the thread that restarts ZooKeeper
servers after a leader kill."""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

log = logging.getLogger(__name__)


@contextlib.contextmanager
def ensemble_of(ensemble: Any) -> Iterator[Any]:
    """Start the ensemble; at the end SIGKILL its servers at once rather than stopping them one
    by one (seconds each): their data is thrown away, and nobody is connected any more."""
    ensemble.start()
    try:
        yield ensemble
    finally:
        for sid in ensemble.client_ports:
            with contextlib.suppress(Exception):
                ensemble.kill(sid)
        ensemble.close()


@contextlib.contextmanager
def broker_of(broker: Any) -> Iterator[Any]:
    """The embedded broker, SIGKILLed at the end: its data lives in memory and goes anyway."""
    broker.start()
    try:
        yield broker
    finally:
        broker.kill()   # a clean stop waits seconds for the broker's connections to drain
        broker.close()


class Restarter:
    """One long-lived thread that starts ZooKeeper servers again.

    Long-lived because the embedded servers die with the thread that started them (Linux's
    parent-death signal follows the forking thread): a server started from a short-lived thread
    would be killed as soon as that thread ended, leaving the ensemble one server short.
    """

    def __init__(self) -> None:
        self._jobs: queue.Queue[Callable[[], object] | None] = queue.Queue()
        self._idle = threading.Event()
        self._idle.set()
        self._thread = threading.Thread(target=self._run, name="chaos-zk-restarter",
                                        daemon=True)
        self._thread.start()

    def submit(self, job: Callable[[], object]) -> None:
        self._idle.clear()
        self._jobs.put(job)

    def wait_idle(self, timeout: float) -> bool:
        return self._idle.wait(timeout)

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join(90)

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                job()
            except Exception:
                log.exception("restarting a ZooKeeper server failed")
            if self._jobs.empty():
                self._idle.set()
