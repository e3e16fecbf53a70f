"""Connector counters: rebalances, ZooKeeper requests by operation, consumption totals.

Plain thread-safe counters rather than Yammer-style meters: the experiments take snapshots and
difference them. ZooKeeper requests are counted per operation as issued (a retried request counts
once per try), with watch-setting reads counted again under ``zk_watches``.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from typing import Any

log = logging.getLogger(__name__)

ZK_OPERATIONS = ("create", "delete", "getData", "getChildren", "exists", "setData")
#: The leader mode's offset commit (a multi: the fence's check and the offset writes), counted
#: under its own name so that commit traffic can be told from coordination, as the legacy
#: commit's ``setData`` and the broker's ``OffsetCommit`` are.
COMMIT_MULTI = "commitMulti"


class ZkRequestCounter:
    """Counts ZooKeeper requests by operation; the session wrapper bumps it on every request."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ops: Counter[str] = Counter()
        self._watches: Counter[str] = Counter()

    def count(self, op: str, watch: bool = False) -> None:
        with self._lock:
            self._ops[op] += 1
            if watch:
                self._watches[op] += 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            ops = {op: self._ops.get(op, 0) for op in ZK_OPERATIONS}
            # Operations outside the legacy six (the leader mode's ``multi``) appear once used.
            ops.update((op, n) for op, n in self._ops.items() if op not in ops)
            watches = {op: self._watches.get(op, 0) for op in ("getData", "getChildren", "exists")}
        return {"requests": ops, "watches": watches, "total": sum(ops.values())}


class RebalanceMetrics:
    """Rebalance counters, updated by the rebalancer thread and read by ``metrics()``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.rebalances = 0
        self.attempts = 0
        self.failed_attempts = 0
        self.failures = 0
        self.owner_conflicts = 0
        self.rollbacks = 0
        self.last_rebalance_ms: float | None = None
        self.total_rebalance_ms = 0.0
        self.commits = 0

    def add(self, **deltas: float) -> None:
        with self._lock:
            for name, delta in deltas.items():
                setattr(self, name, getattr(self, name) + delta)

    def finished(self, duration_ms: float, ok: bool) -> None:
        with self._lock:
            self.rebalances += 1
            self.failures += 0 if ok else 1
            self.last_rebalance_ms = duration_ms
            self.total_rebalance_ms += duration_ms

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "rebalances": self.rebalances,
                "rebalance_attempts": self.attempts,
                "rebalance_failed_attempts": self.failed_attempts,
                "rebalance_failures": self.failures,
                "owner_conflicts": self.owner_conflicts,
                "rollbacks": self.rollbacks,
                "last_rebalance_ms": self.last_rebalance_ms,
                "total_rebalance_ms": self.total_rebalance_ms,
                "offset_commits": self.commits,
            }
