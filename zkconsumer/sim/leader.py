"""The leader-elected ZooKeeper group (``coordination.mode=leader``): one decider, one record.

Reproduces ``zkconsumer/coordination`` member by member, on the same :class:`ZkServer` timing
as the legacy model:

* only the leader holds the membership child watch; a change notifies it alone. It re-arms
  (getChildren), reads only the registrations it has not cached (one per joiner; every one
  after taking over), computes the assignment and publishes it with one multi;
* every member holds a data watch on the assignment znode: a publication notifies all of them
  (``N`` notifications), each reads the record once (re-arming the watch);
* a member whose part changed releases what moved away (one multi: last commits + owner
  deletions), claims what arrived (an exists of the owners znode, then one multi, all or
  nothing; if an owner znode still exists it reads that znode, sets an exists watch on it and
  tries again when it is deleted), reads the offsets of what it claimed and starts one fetcher
  per partition, each looking its leader up alone. ``range`` (eager) stops all of a changed
  member's fetchers and starts the kept ones again after its release (looked up again);
  ``cooperative-sticky`` stops only the released ones; an unchanged member stops nothing;
* election: candidates are ordered by join time; each watches its predecessor only, so a
  departed leader wakes one member, which takes over (reads every registration once).

Every request is named by its operation (:mod:`zkconsumer.sim.leader_costs`, which says which
call of the connector sends it). So a join costs ``O(N)`` requests (``N + 1`` record reads and
notifications) instead of the legacy ``O(N²)``, and there are no owner conflicts: a claim waits
for the release instead.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from zkconsumer.sim import leader_costs as lc
from zkconsumer.sim.assignment import full_assignment, sticky_target
from zkconsumer.sim.config import SimConfig
from zkconsumer.sim.engine import Cpu, Engine
from zkconsumer.sim.group import SimulatedGroup
from zkconsumer.sim.legacy import (
    leave_stop_s,
    producer_schedule,
    stop_on_schedule,
    traffic_close_s,
)
from zkconsumer.sim.tally import OwnershipLedger, Tally
from zkconsumer.sim.zkmodel import ZkServer, member_cpus

log = logging.getLogger(__name__)

TOPICS = 1
STRATEGIES = {"zk-leader-range": "range", "zk-leader-sticky": "sticky",
              "zk-leader-cooperative-sticky": "cooperative-sticky"}


@dataclass(eq=False)
class LeaderMember:
    mid: str
    cpu: Cpu
    owned: set[int] = field(default_factory=set)
    gone: bool = False
    busy: bool = False      # applying a record
    pending: bool = False   # a newer record arrived meanwhile
    waiting_on: int | None = None
    attempts: int = 0
    watching: bool = False  # its data watch on the record is set (fires once, re-set by a read)


class LeaderGroup(SimulatedGroup):
    """Members, candidates (join order), the published record and its owner-deletion watches."""

    def __init__(self, cfg: SimConfig, engine: Engine, rng: random.Random, tally: Tally,
                 ledger: OwnershipLedger) -> None:
        super().__init__(cfg, engine, rng, tally, ledger)
        self.zk = ZkServer(engine, cfg.calibration, rng, tally, ledger,
                           client_cpu_scale=cfg.client_cpu_scale)
        self.zk.on_notify = self._membership_notified
        self.strategy = STRATEGIES[cfg.protocol]
        self.members: dict[str, LeaderMember] = {}
        self.candidates: list[str] = []          # sequence order: the first one leads
        self.record: dict[str, set[int]] = {}
        self.generation = 0
        self.cached: set[str] = set()            # registrations the leader has read
        self.leader_busy = False
        self.leader_pending = False
        self._owner_watchers: dict[int, list[str]] = {}
        self._pending_claims: dict[str, list[int]] = {}
        self._cpus = member_cpus(cfg, engine, self.zk)
        self._schedule = producer_schedule(cfg, self.cal)

    @property
    def leader(self) -> str | None:
        return self.candidates[0] if self.candidates else None

    def _new_member(self, mid: str) -> LeaderMember:
        m = LeaderMember(mid, self._cpus[len(self.members) % len(self._cpus)])
        self.members[mid] = m
        self.ledger.add_member(mid)
        return m

    def _target(self, members: list[str]) -> dict[str, set[int]]:
        if self.strategy == "range":
            return {m: set(ps) for m, ps in
                    full_assignment(members, self.cfg.partitions, "range").items()}
        return sticky_target(self.record, members, self.cfg.partitions)

    # --- set-up: a stable group with a published record ------------------------------------------

    def setup(self, ids: list[str]) -> None:
        first = min(self.cfg.first_candidate_rank, len(ids) - 1) if ids else 0
        for mid in ids:
            self._new_member(mid)
            self.zk.registrations[mid] = None
        self.candidates = [ids[first], *ids[:first], *ids[first + 1:]] if ids else []
        self.cached = set(ids)
        self.record = self._target(list(ids))
        self.generation = 1
        if ids:
            self.zk.arm_watch(self.candidates[0])  # only the leader watches membership
        for mid in ids:
            self.members[mid].watching = True
        for mid, parts in self.record.items():
            self.members[mid].owned = set(parts)
            for p in parts:
                self.ledger.set_owner(p, mid)

    # --- events ---------------------------------------------------------------------------------

    def join(self, mid: str) -> None:
        m = self._new_member(mid)
        self.ledger.begin()
        m.busy = True
        # register (a write), stand as a candidate (a write), list the candidates and watch the
        # predecessor (two reads), read the record with a watch (one read; not listed yet).
        self.engine.after(self.cal.zk_connect_ms / 1000.0 * self.zk.jitter(), self._write,
                          m, lc.REGISTER, lambda: self.zk.register(mid),
                          lambda _: self._write(m, lc.STAND, lambda: self.candidates.append(mid),
                                                lambda _: self._reads(
                                                    m, lc.joiner_first_pass(),
                                                    lambda: self._joined(m))))

    def _joined(self, m: LeaderMember) -> None:
        """The joiner's last read was the record, with its watch: it acts on what it read (its
        part, if the leader already published one); only a publication after that read
        notifies it (a watch is set by the read). A notification that came while it was
        still applying is kept as ``pending`` and read again once it is done (:meth:`_done`),
        so a publication is never missed, however fast watches are delivered."""
        m.watching = True
        self._apply(m, dict(self.record))

    def leave(self, mid: str) -> None:
        """``shutdown``: stop fetchers, release owners (one multi), delete the registration."""
        m = self.members[mid]
        m.gone = True
        self.ledger.begin()
        stop = self._fetcher_stop(m, leaving=True)
        if self._schedule is None and (self.cal.leave_wake_ms > 0
                                       or self.cal.leave_shutdown_ms > 0):  # measured
            # the same lab member and connector shutdown as the legacy mode's leave
            stop = leave_stop_s(self.rng, self.cal, len(m.owned), self.cfg.partitions,
                                self.cfg.messages_per_s, stop, self.zk.jitter())
        owned, m.owned = sorted(m.owned), set()

        def unregister(_: Any = None) -> None:
            def apply() -> None:
                self.ledger.member_died(mid)
                self._drop_candidate(mid)
                self.zk.unregister(mid)
            self._write(m, lc.UNREGISTER, apply, lambda _: self.ledger.end())
        if owned:
            self.engine.after(stop, self._write, m, lc.RELEASE,
                              lambda: self._delete_owners(owned), unregister)
        else:
            self.engine.after(stop, unregister)

    def crash(self, mid: str, expiry_s: float) -> None:
        m = self.members[mid]
        m.gone = True
        self.ledger.member_died(mid)
        self.ledger.begin()

        def expire() -> None:
            self._delete_owners(sorted(self.ledger.owned_by(mid)))
            self._drop_candidate(mid)
            self.zk.unregister(mid)
        self.engine.after(expiry_s, self.zk.commit, expire, lambda _: self.ledger.end())

    def _drop_candidate(self, mid: str) -> None:
        was_leader = self.leader == mid
        if mid in self.candidates:
            index = self.candidates.index(mid)
            self.candidates.remove(mid)
            # Only the successor's predecessor watch fires.
            if index < len(self.candidates):
                successor = self.candidates[index]
                self._notify(successor, lambda: self._predecessor_gone(successor, was_leader))

    # --- the leader -------------------------------------------------------------------------------

    def _notify(self, mid: str, fn: Callable[[], None]) -> None:
        self.ledger.begin()
        delay = self.cal.watch_delivery_ms / 1000.0 * self.zk.jitter()

        def deliver() -> None:
            self.tally.watch_notifications += 1
            self.tally.woken.add(mid)
            fn()
            self.ledger.end()
        self.engine.after(delay, deliver)

    def _predecessor_gone(self, mid: str, was_leader: bool) -> None:
        m = self.members[mid]
        if m.gone:
            return
        # List the candidates (and watch the new predecessor if there is one).
        self.ledger.begin()

        def listed() -> None:
            if self.leader == mid:
                self.cached = set()  # a new leader reads every registration once
                self._lead(m)
            self.ledger.end()
        self._reads(m, lc.election_check(leads=self.leader == mid), listed)

    def _membership_notified(self, mid: str) -> None:
        m = self.members.get(mid)
        if m is None or m.gone or self.leader != mid:
            return
        self.tally.woken.add(mid)
        self._lead(m)

    def _lead(self, m: LeaderMember) -> None:
        if self.leader_busy:
            self.leader_pending = True
            return
        self.leader_busy = True
        self.ledger.begin()
        # exists + getChildren of ids (re-arming the watch as ZkClient does, the watch set the
        # legacy mode shares), then one getData per registration not cached.
        self._read(m, lc.MEMBERSHIP_EXISTS, lambda: None, lambda _: self._read(
            m, lc.MEMBERSHIP_CHILDREN, lambda: self.zk.arm_watch(m.mid),
            lambda _: self._read_new(m)))

    def _read_new(self, m: LeaderMember) -> None:
        view = list(self.zk.view().members)
        new = [mid for mid in view if mid not in self.cached]
        self.tally.registration_reads += len(new)
        # A new leader (nothing cached) also watches the topic and reads its partitions once.
        ops = lc.leader_reads(len(new), TOPICS, taking_over=not self.cached)
        plan_s = self.cal.plan_us_per_member * len(view) / 1e6
        self._reads(m, ops, lambda: m.cpu.run(plan_s, self._publish, m, view))

    def _publish(self, m: LeaderMember, view: list[str]) -> None:
        self.cached = {mid for mid in view if mid in self.zk.registrations}
        self.tally.leader_computations += 1
        target = self._target(view)

        def apply() -> None:
            self.record = target
            self.generation += 1
            for mid in list(self.members):
                member = self.members[mid]
                if not member.gone and member.watching:
                    member.watching = False
                    self._notify(mid, lambda mm=member: self._record_notified(mm))
        self._write(m, lc.PUBLISH, apply, lambda _: self._published(m))

    def _published(self, m: LeaderMember) -> None:
        self.leader_busy = False
        if self.leader_pending and not m.gone:
            self.leader_pending = False
            self.ledger.end()
            self._lead(m)
            return
        self.ledger.end()

    # --- members ------------------------------------------------------------------------------

    def _record_notified(self, m: LeaderMember) -> None:
        if m.busy:
            m.pending = True
            return
        m.busy = True
        self.ledger.begin()
        self._read(m, lc.RECORD_READ, self._watched_read(m), lambda rec: self._apply(m, rec))

    def _watched_read(self, m: LeaderMember) -> Callable[[], dict[str, set[int]]]:
        """The server side of a record read that sets the member's watch again."""
        def serve() -> dict[str, set[int]]:
            m.watching = True
            return dict(self.record)
        return serve

    def _apply(self, m: LeaderMember, record: dict[str, set[int]]) -> None:
        if m.gone:
            self._done(m)
            return
        target = set(record.get(m.mid, set()))
        release = sorted(m.owned - target)
        claim = sorted(target - m.owned)
        if not release and not claim:
            self._done(m)
            return
        self._count_attempt(m)
        self.ledger.rebalancing(m.mid, True)  # ``rebalance_started``: something moves
        self.tally.phase(m.mid, "attempt", self.engine.now)
        # Eager assignors stop every fetcher of a changed member; cooperative only the released.
        eager = self.strategy != "cooperative-sticky"
        stop = self._fetcher_stop(m) if m.owned and (eager or release) else 0.0
        if stop:
            self.tally.phase(m.mid, "stopped", self.engine.now + stop)
        m.owned -= set(release)
        # ... and starts again the ones it keeps once it released (``HandoverExecutor.apply``)
        restarted = len(m.owned) if eager else 0

        def released(_: Any = None) -> None:
            if restarted:
                self.tally.phase(m.mid, "fetching", self.engine.now)
                self._lookups(m, restarted)
            self._claim(m, claim)
        if release:
            self.engine.after(stop, self._write, m, lc.RELEASE,
                              lambda: self._delete_owners(release), released)
        else:
            self.engine.after(stop, released)

    def _claim(self, m: LeaderMember, claim: list[int]) -> None:
        if not claim:
            self._done(m)
            return

        def apply() -> int | None:
            blocked = next((p for p in claim if self.ledger.owner[p] not in (None, m.mid)), None)
            if blocked is None:
                for p in claim:
                    self.ledger.set_owner(p, m.mid)
            return blocked

        def after(blocked: int | None) -> None:
            if blocked is None:
                m.owned |= set(claim)
                self.tally.phase(m.mid, "fetching", self.engine.now)
                # the offsets read, then the claimed partitions' fetchers started (lookups)
                ops = lc.combined(lc.claimed(len(claim)),
                                  lc.fetchers_started(len(claim), self.cfg.brokers))
                self._reads(m, ops, lambda: self._done(m))
                return
            # ``claim`` reads the owner znode in the way, ``_wait_for`` then watches it
            self._read(m, lc.BLOCKED_OWNER_READ, lambda: None,
                       lambda _: self._watch_owner(m, claim, blocked))
        # ``ensure_parents`` checks the owners znode, then the claim multi
        self._reads(m, lc.claim_prefix(TOPICS), lambda: self._write(m, lc.CLAIM_MULTI, apply,
                                                                    after))

    def _watch_owner(self, m: LeaderMember, claim: list[int], blocked: int) -> None:
        """An exists watch on the owner znode still there; retry when it is deleted, or at
        once if it is gone already (the exists found nothing to watch)."""
        def watch() -> Any:
            if self.ledger.owner[blocked] in (None, m.mid):
                return False
            self._owner_watchers.setdefault(blocked, []).append(m.mid)
            return True

        def watched(set_: Any) -> None:
            if set_:
                m.waiting_on = blocked
                self._pending_claims[m.mid] = claim
                self.ledger.end()  # resumed by the deletion's notification
            else:
                self._claim(m, claim)
        self._read(m, lc.OWNER_WATCH, watch, watched)

    def _lookups(self, m: LeaderMember, partitions: int) -> None:
        """The leader lookups of fetchers started again: on their own finder threads, beside
        what the coordinator does next."""
        self.ledger.begin()
        self._reads(m, lc.fetchers_started(partitions, self.cfg.brokers), self.ledger.end)

    # --- requests, named by operation (leader_costs) -----------------------------------------

    def _reads(self, m: LeaderMember, ops: lc.Ops, done: Callable[[], None]) -> None:
        """Reads back to back as one step (``ZkServer.bulk_read``)."""
        self.tally.operations(ops)
        self.zk.bulk_read(m.cpu, lc.reads(ops), done)

    def _read(self, m: LeaderMember, ops: lc.Ops, serve: Callable[[], Any],
              done: Callable[[Any], None]) -> None:
        """One read whose ``serve`` sees the server's state when it is served."""
        self.tally.operations(ops)
        self.zk.read(m.cpu, serve, done)

    def _write(self, m: LeaderMember, ops: lc.Ops, apply: Callable[[], Any],
               done: Callable[[Any], None]) -> None:
        self.tally.operations(ops)
        self.zk.write(m.cpu, apply, done)

    def _delete_owners(self, partitions: list[int]) -> None:
        """Owner znodes go; whoever waits on one is notified (its exists watch)."""
        for p in partitions:
            self.ledger.set_owner(p, None)
            for mid in self._owner_watchers.pop(p, []):
                member = self.members[mid]
                self._notify(mid, lambda mm=member: self._owner_released(mm))

    def _owner_released(self, m: LeaderMember) -> None:
        """The connector's pass after the deletion applies the (unchanged) record again: one
        more attempt, as its ``attempt_started`` records count it (no read: the record's
        watch is still set, so the record last read is current)."""
        claim = self._pending_claims.pop(m.mid, None)
        m.waiting_on = None
        if m.gone or claim is None:
            return
        self.ledger.begin()
        self._count_attempt(m)
        self._claim(m, claim)

    def _count_attempt(self, m: LeaderMember) -> None:
        m.attempts += 1
        self.tally.attempts_total += 1
        self.tally.max_attempts = max(self.tally.max_attempts, m.attempts)

    def _done(self, m: LeaderMember) -> None:
        m.busy = False
        self.ledger.rebalancing(m.mid, False)  # the handover, if any, succeeded
        if m.pending and not m.gone:
            m.pending = False
            m.busy = True
            self._read(m, lc.RECORD_READ, self._watched_read(m),
                       lambda rec: self._apply(m, rec))
            return
        self.ledger.end()

    def _fetcher_stop(self, m: LeaderMember, leaving: bool = False) -> float:
        if m.owned and not leaving:
            self.tally.paused.add(m.mid)
        if self._schedule is not None and m.owned:  # one fetcher per partition: the last ends it
            return stop_on_schedule(self.cfg, self.cal, self._schedule, m.mid,
                                    tuple(sorted(m.owned)), self.engine.now, leaving=leaving,
                                    per_partition=True)
        close = traffic_close_s(self.cal, len(m.owned), self.cfg.partitions,
                                self.cfg.messages_per_s)
        if close is not None:  # a fetch in flight, as in the legacy mode
            return close * self.zk.jitter()
        return self.rng.uniform(self.cal.fetcher_stop_min_ms, self.cal.fetcher_stop_max_ms) / 1000.0
