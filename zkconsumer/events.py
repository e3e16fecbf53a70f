"""Structured, timestamped connector events: the replayable record the experiments read.

The original exposed only gauges and timers (Yammer), which cannot be replayed; this follows
``verifiable_consumer.py``'s idea of a small JSON-friendly vocabulary instead. Every event is a
plain ``dict`` with ``ts`` (epoch seconds, float), ``type`` and ``consumer_id`` plus the fields
that :data:`EVENT_TYPES` lists for its type, so it can be written as one JSON line. An event
type missing from the table cannot be emitted (``emit`` raises), and a test reads every
``emit`` call in the package to check that its type and fields are listed here.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

Event = dict[str, Any]
EventListener = Callable[[Event], None]

#: Every event type, with the fields it carries besides ``ts``, ``type`` and ``consumer_id``.
EVENT_TYPES: dict[str, tuple[str, ...]] = {
    # the ZooKeeper session and this member's registration
    "session_state": ("state", "session_id", "new_session"),
    "registered": ("path", "session_id"),
    "group_unprotected": ("path",),  # an ACL was asked for but the group's znode has none
    "corrupt_znode": ("path", "problem", "action"),
    "watch_fired": ("path", "watch", "event"),
    # rebalances (both modes; generation is None in the legacy mode)
    "rebalance_started": ("reasons",),
    "attempt_started": ("attempt", "generation"),
    "assignment_decided": ("generation", "members", "partition_counts", "threads",
                           "assignment"),
    "owner_conflict": ("topic", "partition", "owner", "thread_id"),
    "rollback": ("partitions", "conflicts"),
    "attempt_failed": ("attempt", "error"),
    "rebalance_succeeded": ("attempts", "duration_ms", "assignment", "reasons", "generation"),
    "rebalance_failed": ("attempts", "duration_ms", "error", "reasons"),
    # leader mode
    "leader_elected": (),
    "claim_waiting": ("path", "owner"),
    "commit_fenced": ("offsets", "reason"),
    "fetchers_paused_on_disconnect": ("session_id",),
    "fetchers_resumed": ("partitions",),
    # offsets, fetchers, errors, the end
    "offsets_committed": ("offsets", "storage"),
    "fetchers_started": ("partitions",),
    "fetchers_stopped": ("partitions", "stuck_threads"),
    "fetchers_stopped_on_session_loss": (),
    "fetcher_error": ("thread", "partitions", "error"),
    "error": ("where", "error"),
    "shutdown": ("duration_ms",),
}


class EventBus:
    """Fans events out to listeners; a failing listener is logged and never breaks the caller.

    Listeners run synchronously on the thread that emits (often the rebalancer thread), so a test
    may hold the rebalancer at a precise point by blocking in a listener.
    """

    def __init__(self, consumer_id: str) -> None:
        self.consumer_id = consumer_id
        self._listeners: list[EventListener] = []
        self._lock = threading.Lock()

    def add_listener(self, fn: EventListener) -> None:
        with self._lock:
            self._listeners = [*self._listeners, fn]

    def emit(self, type_: str, **fields: Any) -> Event:
        """Build and deliver one event; ``type_`` must be listed in :data:`EVENT_TYPES`."""
        if type_ not in EVENT_TYPES:
            raise ValueError(f"unknown event type {type_!r}: list it in EVENT_TYPES")
        event: Event = {"ts": time.time(), "type": type_, "consumer_id": self.consumer_id}
        event.update(fields)
        self.forward(event)
        return event

    def forward(self, event: Event) -> None:
        """Deliver an event built elsewhere (e.g. by the fetcher manager)."""
        event.setdefault("consumer_id", self.consumer_id)
        event.setdefault("ts", time.time())
        for fn in self._listeners:
            try:
                fn(event)
            except Exception:
                log.exception("[%s] event listener %r failed on %s event",
                              self.consumer_id, fn, event.get("type"))
