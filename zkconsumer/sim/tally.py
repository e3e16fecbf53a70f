"""What a run counts, and the ownership ledger that decides when the group is stable again.

"Stable" is the definition the real runs use: every partition owned by exactly one *live*
member, and nobody still working on the event (no member rebalancing or backing off, no
notification or protocol message in flight). The ledger holds one owner per partition, so
"exactly one" is structural; what it tracks is liveness and the busy count, and the last time
the condition became true. For the legacy protocol the owner is whoever holds the owner znode;
for the broker protocols, the member fetching the partition.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from zkconsumer.sim.engine import Engine

log = logging.getLogger(__name__)


@dataclass
class Tally:
    """Counters of one run (the columns of ``SimResult``)."""

    zk_reads: int = 0
    zk_writes: int = 0
    broker_requests: int = 0
    watch_notifications: int = 0
    conflicts: int = 0
    rollbacks: int = 0
    attempts_total: int = 0
    max_attempts: int = 0
    failed_rebalances: int = 0
    leader_computations: int = 0
    registration_reads: int = 0
    woken: set[str] = field(default_factory=set)
    paused: set[str] = field(default_factory=set)


class OwnershipLedger:
    """Partition -> owning member, member liveness, busy count, and the stability clock."""

    def __init__(self, engine: Engine, partitions: int) -> None:
        self._engine = engine
        self.partitions = partitions
        self.owner: list[str | None] = [None] * partitions
        self._by_member: dict[str, set[int]] = {}
        self._live: set[str] = set()
        self._owned_live = 0
        self._busy = 0
        self._unowned_since: dict[int, float] = {}
        self.max_unowned_s = 0.0
        self.stable_at: float | None = None

    # --- membership and ownership ---------------------------------------------------------------

    def add_member(self, member: str) -> None:
        self._live.add(member)
        self._by_member.setdefault(member, set())

    def owned_by(self, member: str) -> set[int]:
        return self._by_member.get(member, set())

    def set_owner(self, partition: int, member: str | None) -> None:
        old = self.owner[partition]
        if old == member:
            return
        if old is not None:
            self._by_member[old].discard(partition)
            if old in self._live:
                self._owned_live -= 1
                self._unowned_since[partition] = self._engine.now
        self.owner[partition] = member
        if member is not None:
            self._by_member.setdefault(member, set()).add(partition)
            if member in self._live:
                self._owned_live += 1
                self._close_gap(partition)
        self._check()

    def member_died(self, member: str) -> None:
        """A crash: its partitions are still "owned" (znodes, assignments) but by a dead member."""
        if member not in self._live:
            return
        self._live.discard(member)
        for p in self._by_member.get(member, ()):
            self._owned_live -= 1
            self._unowned_since[p] = self._engine.now
        self._check()

    def _close_gap(self, partition: int) -> None:
        since = self._unowned_since.pop(partition, None)
        if since is not None:
            self.max_unowned_s = max(self.max_unowned_s, self._engine.now - since)

    # --- work in flight ---------------------------------------------------------------------------

    def begin(self) -> None:
        self._busy += 1
        self._check()

    def end(self) -> None:
        self._busy -= 1
        if self._busy < 0:
            raise AssertionError("busy count below zero: a begin/end pair is unbalanced")
        self._check()

    def _check(self) -> None:
        stable = self._busy == 0 and self._owned_live == self.partitions
        if stable and self.stable_at is None:
            self.stable_at = self._engine.now
        elif not stable:
            self.stable_at = None

    @property
    def stable(self) -> bool:
        return self.stable_at is not None

    def unowned(self) -> int:
        """Partitions without a live owner now (``lost`` at the end of a run)."""
        return self.partitions - self._owned_live

    def finish(self) -> None:
        """Close the unowned intervals still open at the end of the run."""
        for since in self._unowned_since.values():
            self.max_unowned_s = max(self.max_unowned_s, self._engine.now - since)
