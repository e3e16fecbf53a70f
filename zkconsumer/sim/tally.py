"""What a run counts, and the ownership ledger that decides when the group is stable again.

"Stable" is the definition the real runs use: every partition owned by exactly one *live*
member, and nobody still working on the event (no member rebalancing or backing off, no
notification or protocol message in flight). The ledger holds one owner per partition, so
"exactly one" is structural; what it tracks is liveness and the busy count, and the last time
the condition became true. For the broker protocols the owner is the member fetching the
partition.

For the legacy protocol (``by_fetch``) the owner is whoever holds the owner znode, which is
not what the real runs observe: they see fetchers (``zkconsumer.lab.intervals.stable_since``),
and call the group stable from the earliest instant after which every partition is fetched by
exactly one live member, and every live member fetches when there are at least as many
partitions as members, until the end; members that own nothing may still be reading the group
then. The ledger then keeps what each member fetches (:meth:`OwnershipLedger.fetch`) and
computes exactly that, ignoring the busy count; the simulation still runs to its end, so a
later change of fetchers moves the instant as it would in a real run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from zkconsumer.sim.engine import Engine
from zkconsumer.sim.leader_costs import combined
from zkconsumer.sim.sampling import Window, within

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MemberPhases:
    """A ZooKeeper-family member's first attempt after the event (at time 0), in seconds: what
    ``spark rebalance-phases`` reads off a real member's records. In the leader mode the
    attempt is the member's application of a new record and its plan is the leader's, so
    ``read_s`` is None there."""

    member: str
    attempt_s: float  # the attempt's start after the event
    stop_s: float  # the attempt's start to its fetchers stopped
    read_s: float | None  # fetchers stopped to its plan decided: the release, the reads, the plan
    claim_s: float | None  # fetchers stopped to fetching again (None: not within the run)


@dataclass(frozen=True)
class JoinerPhases:
    """A member with nothing to stop (a joiner): its first attempt and its first plan after
    the event (at time 0), in seconds. Whether a legacy join races is decided by when this
    plan comes against the old owner's stop, so ``spark rebalance-phases`` sets the two side
    by side for real members and the model's."""

    member: str
    attempt_s: float  # the attempt's start after the event
    plan_s: float  # its plan decided, after the event


@dataclass
class Tally:
    """Counters of one run (the columns of ``SimResult``).

    With a ``clock`` the ZooKeeper counters also keep when each request was issued, so a run
    can count only those before the real counts' window closes (:meth:`zk_until`), and broker
    requests added with :meth:`broker` keep when and by whom, so a run can count them in each
    member's own window (:meth:`broker_in`, :mod:`zkconsumer.sim.sampling`).
    """

    clock: Callable[[], float] | None = None
    zk_log: list[tuple[float, int, int]] = field(default_factory=list)
    _zk_reads: int = 0
    _zk_writes: int = 0
    broker_requests: int = 0  # every broker request, whatever the window
    broker_log: list[tuple[float, str | None, int]] = field(default_factory=list)
    broker_counted: int = 0  # added already counted in their members' windows
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
    # ZooKeeper requests by operation (``ZkRequestCounter``'s names), for models that name
    # them (the leader mode's); the reads and writes above count them all either way
    zk_operations: dict[str, int] = field(default_factory=dict)
    # Each legacy member's first attempt after the event (at time 0), its fetchers stopped
    # and its partitions fetched again: the phases ``spark rebalance-phases`` reads off real
    # members' records, for the model's side of that comparison
    phases: dict[str, dict[str, float]] = field(default_factory=dict)

    def phase(self, member: str, name: str, t: float) -> None:
        """Note ``member`` reaching ``name`` at ``t`` (its first time after the event only)."""
        if t >= 0.0:
            self.phases.setdefault(member, {}).setdefault(name, t)

    def member_phases(self) -> tuple[MemberPhases, ...]:
        """The phases of each member that stopped its fetchers after its first attempt."""
        out = []
        for member, p in sorted(self.phases.items()):
            if "attempt" in p and "stopped" in p and p["stopped"] >= p["attempt"]:
                def since_stop(name: str, p: dict[str, float] = p) -> float | None:
                    t = p.get(name)
                    return None if t is None or t < p["stopped"] else t - p["stopped"]
                out.append(MemberPhases(member, p["attempt"], p["stopped"] - p["attempt"],
                                        since_stop("decided"), since_stop("fetching")))
        return tuple(out)

    def joiner_phases(self) -> tuple[JoinerPhases, ...]:
        """The first attempt and plan of each member that planned without stopping a fetcher
        first (a joiner; a member that stopped nothing because it owned nothing is one too)."""
        return tuple(JoinerPhases(member, p["attempt"], p["decided"])
                     for member, p in sorted(self.phases.items())
                     if "attempt" in p and "decided" in p and "stopped" not in p
                     and p["decided"] >= p["attempt"])

    def operations(self, ops: dict[str, int]) -> None:
        """Name requests counted in ``zk_reads``/``zk_writes`` by their operation."""
        self.zk_operations = combined(self.zk_operations, ops)

    @property
    def zk_reads(self) -> int:
        return self._zk_reads

    @zk_reads.setter
    def zk_reads(self, value: int) -> None:
        if self.clock is not None:
            self.zk_log.append((self.clock(), value - self._zk_reads, 0))
        self._zk_reads = value

    @property
    def zk_writes(self) -> int:
        return self._zk_writes

    @zk_writes.setter
    def zk_writes(self, value: int) -> None:
        if self.clock is not None:
            self.zk_log.append((self.clock(), 0, value - self._zk_writes))
        self._zk_writes = value

    def broker(self, n: int, member: str | None = None) -> None:
        """``n`` broker requests sent now by ``member`` (None: by no one member in particular,
        counted in any window)."""
        self.broker_requests += n
        if self.clock is not None and n:
            self.broker_log.append((self.clock(), member, n))

    def add_counted(self, n: int) -> None:
        """``n`` requests the caller counted in their members' windows itself (heartbeats
        added up at the end of a run)."""
        self.broker_requests += n
        self.broker_counted += n

    def broker_in(self, window: Window) -> int:
        """Broker requests inside their member's (from, to] window, plus those added counted.

        Needs a ``clock`` from before the first request (else nothing was logged)."""
        windows: dict[str, tuple[float, float]] = {}
        total = self.broker_counted
        for at, mid, n in self.broker_log:
            if mid is not None and mid not in windows:
                windows[mid] = window(mid)
            total += n if mid is None or within(windows[mid], at) else 0
        return total

    def zk_until(self, t: float) -> tuple[int, int]:
        """(reads, writes) issued up to time ``t`` (all of them without a clock)."""
        if self.clock is None:
            return self._zk_reads, self._zk_writes
        reads = sum(r for when, r, _ in self.zk_log if when <= t)
        writes = sum(w for when, _, w in self.zk_log if when <= t)
        return reads, writes


class MemberView(NamedTuple):
    """One member as its client process would publish it."""

    live: bool
    held: frozenset[int]  # fetched, in fetch mode; else owned; nothing when dead
    changed: float | None  # its last change since forget_changes (None: none)
    rebalancing: bool  # live and inside a rebalance of its own


class OwnershipLedger:
    """Partition -> owning member, member liveness, busy count, and the stability clock."""

    def __init__(self, engine: Engine, partitions: int, by_fetch: bool = False) -> None:
        self._engine = engine
        self.partitions = partitions
        self.by_fetch = by_fetch
        self._fetching: dict[str, frozenset[int]] = {}
        # Kept up to date as members fetch, join and die, so that deciding stability is O(1)
        # per change, not O(N) (a 10,000-member herd changes something ~10^5 times):
        self._fetch_count: dict[int, int] = {}  # partition -> live members fetching it
        self._fetch_total = 0  # sum over live members of how many partitions each fetches
        self._covered = 0  # partitions in range(partitions) fetched by at least one live member
        self._live_idle = 0  # live members fetching nothing
        self.owner: list[str | None] = [None] * partitions
        self._by_member: dict[str, set[int]] = {}
        self._live: set[str] = set()
        self._owned_live = 0
        self._busy = 0
        self._unowned_since: dict[int, float] = {}
        self.max_unowned_s = 0.0
        self.stable_at: float | None = None
        # the last instant ownership or fetching changed (None: not since forget_changes),
        # group-wide and per member (what each member's client process would publish)
        self.last_change_at: float | None = None
        self._changed_at: dict[str, float] = {}
        # members inside a rebalance of their own (a ZooKeeper member's records: started, then
        # succeeded or failed), which the lab's settle rule may wait for
        self._rebalancing: set[str] = set()

    # --- membership and ownership ---------------------------------------------------------------

    def add_member(self, member: str) -> None:
        if member not in self._live:
            self._live.add(member)
            self._count_fetches(member, 1)
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
        self._touch(old)
        self._touch(member)
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
        self._touch(member)
        self._count_fetches(member, -1)
        for p in self._by_member.get(member, ()):
            self._owned_live -= 1
            self._unowned_since[p] = self._engine.now
        self._check()

    def _touch(self, member: str | None) -> None:
        self.last_change_at = self._engine.now
        if member is not None:
            self._changed_at[member] = self._engine.now

    def rebalancing(self, member: str, inside: bool) -> None:
        """``member`` began (``inside``) or ended a rebalance, where the real member records
        ``rebalance_started`` and ``rebalance_succeeded`` / ``rebalance_failed``."""
        if inside:
            self._rebalancing.add(member)
        else:
            self._rebalancing.discard(member)

    def live_rebalancing(self) -> int:
        """How many live members are inside a rebalance."""
        return len(self._rebalancing & self._live)

    def member_view(self, member: str) -> MemberView:
        """What ``member``'s client process would publish of it now."""
        live = member in self._live
        if not live:
            held: frozenset[int] = frozenset()
        elif self.by_fetch:
            held = self._fetching.get(member, frozenset())
        else:
            held = frozenset(self._by_member.get(member, ()))
        return MemberView(live, held, self._changed_at.get(member),
                          live and member in self._rebalancing)

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

    def fetch(self, member: str, partitions: Sequence[int]) -> None:
        """``member`` now fetches exactly ``partitions`` (empty: its fetchers stopped)."""
        live = member in self._live
        if self._fetching.get(member, frozenset()) != frozenset(partitions):
            self._touch(member)
        if live:
            self._count_fetches(member, -1)
        self._fetching[member] = frozenset(partitions)
        if live:
            self._count_fetches(member, 1)
        self._check()

    def _count_fetches(self, member: str, sign: int) -> None:
        """Add (``sign`` 1) or remove (-1) a live member's fetches from the running counts."""
        fetching = self._fetching.get(member, frozenset())
        if not fetching:
            self._live_idle += sign
            return
        self._fetch_total += sign * len(fetching)
        count = self._fetch_count
        for p in fetching:
            before = count.get(p, 0)
            count[p] = before + sign
            if 0 <= p < self.partitions and (before == 0 or before + sign == 0):
                self._covered += sign

    def _fetch_stable(self) -> bool:
        """Every partition fetched by exactly one live member; every live member fetches when
        there are at least as many partitions as live members (the real runs' rule).

        ``partitions`` fetches in all covering every partition means each exactly once and
        none outside the range."""
        if self._fetch_total != self.partitions or self._covered != self.partitions:
            return False
        return self.partitions < len(self._live) or self._live_idle == 0

    def _check(self) -> None:
        if self.by_fetch:
            stable = self._fetch_stable()
            if stable and self.stable_at is None:
                self.stable_at = self._engine.now
            elif not stable:
                self.stable_at = None
            return
        stable = self._busy == 0 and self._owned_live == self.partitions
        if stable and self.stable_at is None:
            self.stable_at = self._engine.now
        elif not stable:
            self.stable_at = None

    @property
    def stable(self) -> bool:
        return self.stable_at is not None

    def forget_changes(self) -> None:
        """The group as set up is the observation's starting point (no change yet)."""
        self.last_change_at = None
        self._changed_at.clear()

    def observed_stable(self) -> bool:
        """The real runs' rule, from ownership alone (no rebalance bookkeeping): every
        partition owned (fetched, in fetch mode) by exactly one live member, and every live
        member owning something unless there are fewer partitions than live members."""
        if self.by_fetch:
            return self._fetch_stable()
        if self._owned_live != self.partitions:
            return False
        if self.partitions < len(self._live):
            return True
        owners = {m for m in self.owner if m is not None and m in self._live}
        return len(owners) == len(self._live)

    def unowned(self) -> int:
        """Partitions without a live owner now (``lost`` at the end of a run)."""
        return self.partitions - self._owned_live

    def finish(self) -> None:
        """Close the unowned intervals still open at the end of the run."""
        for since in self._unowned_since.values():
            self.max_unowned_s = max(self.max_unowned_s, self._engine.now - since)
