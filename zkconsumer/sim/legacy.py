"""The legacy ZooKeeper-coordinated group: every member rebalances itself on every change.

Reproduces ``zkconsumer/rebalance`` (spec detailed §3.4-3.6) member by member:

* a membership change notifies every member's child watch; a member that is idle starts a
  rebalance (re-arm the watch, then ``syncedRebalance``), one that is busy coalesces the
  notification into one more rebalance afterwards (KAFKA-265);
* one attempt: own registration and brokers; close the fetchers (stop them, commit changed
  offsets); release (delete) every owner znode held; read the group (all ``N`` registrations)
  and the topic; compute this member's part; read its offsets; create its owner znodes one by
  one, all of them; a ``NodeExists`` costs a getData and, unless the owner is this member,
  a conflict; any conflict rolls back (deletes) this attempt's creates and fails it;
* a failed attempt closes the (idle) fetchers, sleeps ``rebalance.backoff.ms`` and retries, up
  to ``rebalance.max.retries`` attempts; then the rebalance fails and the member owns nothing
  until the next trigger (KAFKA-4228 never merged);
* a crash is noticed only when the session expires (after the last ping the server heard,
  rounded up to its tick: :mod:`zkconsumer.sim.liveness`); a clean leave deletes owners first.

Requests per step come from :mod:`zkconsumer.sim.costs`. Which members conflict is decided by
timing alone: a member whose view read is short (small ``N``) reaches its claims while a slower
member is still stopping its fetchers and holds the owner znode.
"""

from __future__ import annotations

import enum
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from zkconsumer.sim import costs
from zkconsumer.sim.assignment import range_share, roundrobin_order, roundrobin_share
from zkconsumer.sim.calibration import Calibration
from zkconsumer.sim.config import SimConfig
from zkconsumer.sim.engine import Cpu, Engine
from zkconsumer.sim.group import SimulatedGroup
from zkconsumer.sim.producer_schedule import Schedule, scheduled_stop_s
from zkconsumer.sim.tally import OwnershipLedger, Tally
from zkconsumer.sim.zkmodel import CREATED, GroupView, ZkServer, member_cpus

log = logging.getLogger(__name__)

TOPICS = 1


def traffic_close_s(cal: Calibration, owned: int, partitions: int,
                    messages_per_s: float) -> float | None:
    """A fetcher stop that waits for a fetch in flight: ``fetcher_close_traffic_ms`` (in
    seconds, before any jitter) when the member's partitions carry traffic and it was
    measured; None otherwise (the stop is the poll's remainder and the idle close)."""
    if cal.fetcher_close_traffic_ms > 0 and member_rate(owned, partitions, messages_per_s) > 0:
        return cal.fetcher_close_traffic_ms / 1000.0
    return None


def member_rate(owned: int, partitions: int, messages_per_s: float) -> float:
    """The member's share of the topic's message rate (``owned`` of ``partitions``)."""
    return messages_per_s * owned / partitions if partitions else 0.0


def fetcher_stop_s(rng: random.Random, cal: Calibration, owned: int, partitions: int,
                   messages_per_s: float, jitter: float = 1.0) -> float:
    """How long stopping a member's fetcher threads takes (``stop_connections``).

    The fetcher thread checks its stop flag only when ``consume(1, POLL_S)`` returns: on its
    first message, or after the poll (100 ms). A stop lands at a random point of that wait,
    then the client closes (``fetcher_stop_min_ms``). With traffic the wait also ends at the
    member's next message: Poisson at its share of the topic's rate, so the rest of the wait is
    the shorter of the poll's remainder and an exponential draw (drawn only when there is
    traffic, so an idle group's random stream is unchanged). With traffic and the measured
    ``fetcher_close_traffic_ms``, that is the stop (times ``jitter``): the whole poll a leave
    under traffic waits, which keeps a group's stops together as the real ones end
    (``Calibration.fetcher_close_traffic_ms`` says why it is not the poll's rest).
    """
    close = traffic_close_s(cal, owned, partitions, messages_per_s)
    if close is not None:
        return close * jitter
    rate = member_rate(owned, partitions, messages_per_s)
    close_s = cal.fetcher_stop_min_ms / 1000.0
    wait_s = rng.uniform(0.0, (cal.fetcher_stop_max_ms - cal.fetcher_stop_min_ms) / 1000.0)
    if rate > 0:
        wait_s = min(wait_s, rng.expovariate(rate))
    return close_s + wait_s


def leave_stop_s(rng: random.Random, cal: Calibration, owned: int, partitions: int,
                 messages_per_s: float, fetcher_s: float, jitter: float) -> float:
    """How long a cleanly leaving member takes before its ZooKeeper writes (``shutdown``).

    With the measured leave (``leave_wake_ms``/``leave_shutdown_ms`` > 0): its consume loop
    sees the stop request when its stream returns, a message of its partitions or the end of
    the consumer timeout: a uniform wait whose median is ``leave_wake_ms`` (the timeout's
    phase), cut short by the first message (Poisson at its share of the topic's rate, drawn
    only with traffic), then its shutdown stops the fetchers (``leave_shutdown_ms`` times
    ``jitter``; ``fetcher_close_traffic_ms`` when its partitions carry traffic and it was
    measured). Without it, the fetcher stop ``fetcher_s`` alone.
    """
    if cal.leave_wake_ms <= 0 and cal.leave_shutdown_ms <= 0:
        return fetcher_s
    wake_s = rng.uniform(0.0, 2 * cal.leave_wake_ms / 1000.0)
    rate = member_rate(owned, partitions, messages_per_s)
    if rate > 0:
        wake_s = min(wake_s, rng.expovariate(rate))
    close = traffic_close_s(cal, owned, partitions, messages_per_s)
    shutdown_s = cal.leave_shutdown_ms / 1000.0 if close is None else close
    return wake_s + shutdown_s * jitter


FETCHER_POLL_S = 0.1  # the fetcher thread's consume poll (zkconsumer.datapath.fetcher_thread)


def producer_schedule(cfg: SimConfig, cal: Calibration) -> Schedule | None:
    """The run's producer schedule when stops are placed on it (a measured delivery round and
    traffic), None otherwise. Its phase is drawn from a stream of the seed's own, so the
    model's other draws keep theirs: the event (t = 0) one of the measured
    ``cfg.event_after_producer_s`` after record 0, else at a point of the cycle uniform."""
    if cal.delivery_round_ms <= 0 or cfg.messages_per_s <= 0:
        return None
    cycle = cfg.partitions / cfg.messages_per_s
    rng = random.Random(f"{cfg.seed}:producer")
    if cfg.event_after_producer_s:
        phase = -rng.choice(cfg.event_after_producer_s) % cycle
    else:
        phase = rng.uniform(0.0, cycle)
    return Schedule(cfg.messages_per_s, cfg.partitions, phase, cal.delivery_round_ms / 1000.0)


def round_phase(seed: int, member: str, round_s: float) -> float:
    """A member's fetch-round phase, uniform over one round, from a stream of the seed and the
    member's own (the same whichever member stops first)."""
    return random.Random(f"{seed}:rounds:{member}").uniform(0.0, round_s) if round_s > 0 else 0.0


def stop_on_schedule(cfg: SimConfig, cal: Calibration, schedule: Schedule, member: str,
                     owned: tuple[int, ...], now: float, *, leaving: bool,
                     per_partition: bool) -> float:
    """How long a member's fetcher stop asked ``now`` takes on the producer's schedule
    (:func:`zkconsumer.sim.producer_schedule.scheduled_stop_s`), then the client's close
    (``fetcher_stop_min_ms``); a leave's includes its wake. The legacy and the leader models'
    one way to place a stop on the schedule."""
    return scheduled_stop_s(schedule, owned, round_phase(cfg.seed, member, schedule.round_s), now,
                            FETCHER_POLL_S, cfg.consumer_timeout_ms / 1000.0, leaving=leaving,
                            per_partition=per_partition) + cal.fetcher_stop_min_ms / 1000.0


class MemberState(enum.Enum):
    IDLE = "idle"
    REBALANCING = "rebalancing"
    BACKOFF = "backoff"
    GONE = "gone"


@dataclass(eq=False)
class LegacyMember:
    mid: str
    cpu: Cpu
    state: MemberState = MemberState.IDLE
    registry: list[int] = field(default_factory=list)  # the topicRegistry: what it owns
    fetching: bool = False
    pending: bool = False
    attempt: int = 0


class LegacyGroup(SimulatedGroup):
    """A group of legacy members around one :class:`ZkServer`."""

    def __init__(self, cfg: SimConfig, engine: Engine, rng: random.Random, tally: Tally,
                 ledger: OwnershipLedger) -> None:
        super().__init__(cfg, engine, rng, tally, ledger)
        # Stable as the real runs see it: by fetchers, not owner znodes, and requests counted
        # up to the real counts' window (zkconsumer.sim.tally).
        ledger.by_fetch = True
        tally.clock = lambda: engine.now
        self.zk = ZkServer(engine, cfg.calibration, rng, tally, ledger,
                           client_cpu_scale=cfg.client_cpu_scale)
        self.zk.on_notify = self._notified
        self.members: dict[str, LegacyMember] = {}
        self._roundrobin = cfg.protocol == "zk-roundrobin"
        self._rr_order = roundrobin_order(cfg.partitions) if self._roundrobin else []
        self._cpus = member_cpus(cfg, engine, self.zk)
        self._schedule = producer_schedule(cfg, self.cal)

    # --- set-up: a stable group ------------------------------------------------------------------

    def _new_member(self, mid: str) -> LegacyMember:
        m = LegacyMember(mid, self._cpus[len(self.members) % len(self._cpus)])
        self.members[mid] = m
        self.ledger.add_member(mid)
        return m

    def setup(self, ids: list[str]) -> None:
        for mid in ids:
            self._new_member(mid)
            self.zk.registrations[mid] = None
            self.zk.arm_watch(mid)
        view = self.zk.view()
        for mid in view.members:
            m = self.members[mid]
            m.registry = self._share(view, mid)
            m.fetching = True
            for p in m.registry:
                self.ledger.set_owner(p, mid)
            self.ledger.fetch(mid, m.registry)

    def _share(self, view: GroupView, mid: str) -> list[int]:
        rank, n = view.rank[mid], len(view.members)
        if self._roundrobin:
            return roundrobin_share(rank, n, self._rr_order)
        return list(range_share(rank, n, self.cfg.partitions))

    # --- the event ------------------------------------------------------------------------------

    def join(self, mid: str) -> None:
        m = self._new_member(mid)
        self.ledger.begin()
        m.state = MemberState.REBALANCING
        # ZKCheckedEphemeral: the registration's ancestors (they exist), then the registration.
        ancestors = costs.REGISTER.writes - 1
        self.engine.after(self.cal.zk_connect_ms / 1000.0 * self.zk.jitter(), self._writes, m,
                          list(range(ancestors)), lambda _p: None,
                          lambda: self.zk.write(m.cpu, lambda: self.zk.register(mid),
                                                lambda _: self._joined(m)))

    def _joined(self, m: LegacyMember) -> None:
        # subscribe + first WatchSet.arm: exists and children of the group (the watch), then
        # exists of the topic. The join's busy mark is the joiner's rebalance: ``_finish``.
        self.zk.read(m.cpu, lambda: None, lambda _: self.zk.read(
            m.cpu, lambda: self.zk.arm_watch(m.mid),
            lambda _: self.zk.bulk_read(m.cpu, TOPICS, lambda: self._synced(m))))

    def leave(self, mid: str) -> None:
        """``shutdown``: stop (:func:`leave_stop_s`), commit, delete owners, then the
        registration."""
        m = self.members[mid]
        self.ledger.begin()
        m.state = MemberState.GONE
        self.zk.watchers.pop(mid, None)
        owned = list(m.registry)
        stop = self._fetcher_stop(m, leaving=True)
        if self._schedule is None and (self.cal.leave_wake_ms > 0
                                       or self.cal.leave_shutdown_ms > 0):  # measured
            stop = leave_stop_s(self.rng, self.cal, len(owned), self.cfg.partitions,
                                self.cfg.messages_per_s, stop, self.zk.jitter())
        commits = self._commits(m)
        m.registry = []
        self.engine.after(stop, self._writes, m, commits, lambda p: None,
                          lambda: self._writes(m, owned, self.zk.delete_owner,
                                               lambda: self._unregister(m)))

    def _unregister(self, m: LegacyMember) -> None:
        def apply() -> None:
            self.ledger.member_died(m.mid)
            self.zk.unregister(m.mid)
        self.zk.write(m.cpu, apply, lambda _: self.ledger.end())

    def crash(self, mid: str, expiry_s: float) -> None:
        """SIGKILL: nothing is released; the session expires ``expiry_s`` later."""
        m = self.members[mid]
        m.state = MemberState.GONE
        self.ledger.member_died(mid)
        self.ledger.begin()
        self.engine.after(expiry_s, self.zk.commit, lambda: self.zk.expire(mid),
                          lambda _: self.ledger.end())

    # --- the rebalancer --------------------------------------------------------------------------

    def _notified(self, mid: str) -> None:
        m = self.members[mid]
        if m.state is MemberState.GONE:
            return
        self.tally.woken.add(mid)
        if m.state is MemberState.IDLE:
            self.ledger.begin()
            m.state = MemberState.REBALANCING
            self._rearm_then_rebalance(m)
        else:
            m.pending = True

    def _rearm_then_rebalance(self, m: LegacyMember) -> None:
        """ZkClient's child-change handler: ``exists`` then ``getChildren``, both watching."""
        self.zk.read(m.cpu, lambda: None, lambda _: self.zk.read(
            m.cpu, lambda: self.zk.arm_watch(m.mid), lambda _: self._synced(m)))

    def _synced(self, m: LegacyMember) -> None:
        """The rebalance begins: the member's CPU beyond its requests (``rebalance_cpu_ms``,
        measured in a crowd of lab members; none when it is 0, and no draw then), then the
        first attempt."""
        m.attempt = 0
        extra_s = self.cal.rebalance_cpu_ms / 1000.0
        if extra_s > 0:
            m.cpu.run(extra_s * self.zk.jitter(), self._first_attempt, m)
        else:
            self._first_attempt(m)

    def _first_attempt(self, m: LegacyMember) -> None:
        if self.cfg.rebalance_max_retries == 0:
            self._give_up(m)
        else:
            self._attempt(m)

    def _attempt(self, m: LegacyMember) -> None:
        self.tally.phase(m.mid, "attempt", self.engine.now)
        m.state = MemberState.REBALANCING
        m.attempt += 1
        if m.attempt == 1:  # ``rebalance_started``, just before the first attempt
            self.ledger.rebalancing(m.mid, True)
        self.tally.attempts_total += 1
        self.tally.max_attempts = max(self.tally.max_attempts, m.attempt)
        self.zk.bulk_read(m.cpu, costs.attempt_prefix(self.cfg.brokers).reads,
                          lambda: self._close_fetchers(m))

    def _fetcher_stop(self, m: LegacyMember, leaving: bool = False) -> float:
        if m.fetching and m.registry and not leaving:
            self.tally.paused.add(m.mid)
        if not m.fetching:
            return self.cal.idle_fetcher_stop_ms / 1000.0
        m.fetching = False
        self.ledger.fetch(m.mid, ())  # the stop is asked now; no new fetch starts after it
        if self._schedule is not None and m.registry:  # one fetcher for all its partitions
            return stop_on_schedule(self.cfg, self.cal, self._schedule, m.mid, tuple(m.registry),
                                    self.engine.now, leaving=leaving, per_partition=False)
        jitter = self.zk.jitter() if self.cal.fetcher_close_traffic_ms > 0 else 1.0
        return fetcher_stop_s(self.rng, self.cal, len(m.registry), self.cfg.partitions,
                              self.cfg.messages_per_s, jitter)

    def _commits(self, m: LegacyMember) -> list[int]:
        if not self.cfg.auto_commit:
            return []
        return m.registry[:round(self.cfg.offsets_changed * len(m.registry))]

    def _close_fetchers(self, m: LegacyMember) -> None:
        stop = self._fetcher_stop(m)
        if m.registry:  # when its fetchers will have stopped: the real member's ``revoked``
            self.tally.phase(m.mid, "stopped", self.engine.now + stop)
        commits = self._commits(m)
        self.engine.after(stop, self._writes, m, commits, lambda p: None,
                          lambda: self._release(m))

    def _release(self, m: LegacyMember) -> None:
        owned, m.registry = m.registry, []
        self._writes(m, owned, self.zk.delete_owner, lambda: self._read_view(m))

    def _read_view(self, m: LegacyMember) -> None:
        view = self.zk.view()
        n = costs.read_group(len(view.members), TOPICS).reads
        self.tally.registration_reads += len(view.members)
        plan_s = self.cal.plan_us_per_member * len(view.members) / 1e6
        self.zk.bulk_read(m.cpu, n, lambda: m.cpu.run(plan_s, self._planned, m, view))

    def _planned(self, m: LegacyMember, view: GroupView) -> None:
        if self.zk.vanished(view) or m.mid not in view.rank:
            self._failed(m)  # NoNode while reading a registration: the attempt throws
            return
        self.tally.phase(m.mid, "decided", self.engine.now)
        claims = self._share(view, m.mid)
        self.zk.bulk_read(m.cpu, costs.read_offsets(len(claims)).reads,
                          lambda: self._claim(m, claims, 0, [], 0))

    def _claim(self, m: LegacyMember, claims: list[int], i: int, created: list[int],
               conflicts: int) -> None:
        if i == len(claims):
            self._claimed(m, claims, created, conflicts)
            return
        p = claims[i]

        def after_create(result: Any) -> None:
            if result == CREATED:
                created.append(p)
                self._claim(m, claims, i + 1, created, conflicts)
                return

            def compared(current: Any) -> None:
                if current == m.mid:  # our own value: adopted ("this is ok")
                    created.append(p)
                    self._claim(m, claims, i + 1, created, conflicts)
                else:
                    self.tally.conflicts += 1
                    self._claim(m, claims, i + 1, created, conflicts + 1)
            self.zk.read(m.cpu, lambda: self.ledger.owner[p], compared)

        self.zk.write(m.cpu, lambda: self.zk.create_owner(p, m.mid), after_create)

    def _claimed(self, m: LegacyMember, claims: list[int], created: list[int],
                 conflicts: int) -> None:
        if conflicts:
            self.tally.rollbacks += 1
            self._writes(m, created, self.zk.delete_owner, lambda: self._failed(m))
            return
        m.registry = claims
        m.fetching = True
        self.tally.phase(m.mid, "fetching", self.engine.now)
        self.tally.zk_reads += costs.leader_lookup(len(claims), self.cfg.brokers).reads
        self.ledger.fetch(m.mid, claims)
        self._finish(m)

    def _failed(self, m: LegacyMember) -> None:
        """``after_failed_attempt`` (idle fetchers, nothing to commit), then the backoff."""
        m.state = MemberState.BACKOFF
        delay = self.cal.idle_fetcher_stop_ms / 1000.0 + self.cfg.rebalance_backoff_ms / 1000.0
        self.engine.after(delay, self._after_backoff, m)

    def _after_backoff(self, m: LegacyMember) -> None:
        if m.attempt >= self.cfg.rebalance_max_retries:
            self._give_up(m)
        else:
            self._attempt(m)

    def _give_up(self, m: LegacyMember) -> None:
        """``can't rebalance after N retries``: logged; the member waits for the next trigger."""
        self.tally.failed_rebalances += 1
        log.debug("%s can't rebalance after %d retries", m.mid, self.cfg.rebalance_max_retries)
        self._finish(m)

    def _finish(self, m: LegacyMember) -> None:
        m.state = MemberState.IDLE
        self.ledger.rebalancing(m.mid, False)  # succeeded, or failed after its retries
        if m.pending:  # triggers during the rebalance coalesce into one more
            m.pending = False
            m.state = MemberState.REBALANCING
            self._rearm_then_rebalance(m)
            return
        self.ledger.end()

    # --- helpers -------------------------------------------------------------------------------

    def _writes(self, m: LegacyMember, partitions: list[int], apply: Callable[[int], Any],
                then: Callable[[], None]) -> None:
        """Synchronous writes one after another (one per partition), then ``then``."""
        items = list(partitions)

        def step(_result: Any = None, i: int = 0) -> None:
            if i == len(items):
                then()
                return
            p = items[i]
            self.zk.write(m.cpu, lambda: apply(p), lambda r: step(r, i + 1))
        step()
