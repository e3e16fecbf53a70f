"""Report corrupt or foreign znodes once, not on every rebalance.

Another client may write anything into the znodes a consumer reads: a registration that is not
JSON, an owner znode holding garbage, an offset that is not a number, a topic without
``partitions``. The readers handle each case (skip the member, treat the offset as missing,
ignore the topic) and report it here. A group rebalances often and every member re-reads every
znode on each attempt, so without a memory the same corrupt znode would fill the log; the
reporter logs each (path, content) pair once, and again only if the content changes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

#: Bound on remembered (path, content) pairs: a hostile writer must not exhaust memory.
MAX_REMEMBERED = 4096


class CorruptionReporter:
    """Logs a corrupt znode once per (path, content) and emits a ``corrupt_znode`` event."""

    def __init__(self, name: str = "", emit: Callable[..., Any] | None = None) -> None:
        self._name = name
        self._emit = emit
        self._lock = threading.Lock()
        self._seen: set[tuple[str, bytes | None]] = set()

    def report(self, path: str, data: bytes | None, problem: object, action: str) -> bool:
        """Log ``problem`` (which names the path) and what is done about it; True if new."""
        key = (path, None if data is None else bytes(data[:1024]))
        with self._lock:
            if key in self._seen:
                return False
            if len(self._seen) >= MAX_REMEMBERED:
                self._seen.clear()
            self._seen.add(key)
        prefix = f"[{self._name}] " if self._name else ""
        log.warning("%scorrupt znode %s: %s; %s", prefix, path, problem, action)
        if self._emit is not None:
            try:
                self._emit("corrupt_znode", path=path, problem=str(problem), action=action)
            except Exception:  # a listener's failure must not turn a skip into a crash
                log.debug("corrupt_znode listener failed", exc_info=True)
        return True
