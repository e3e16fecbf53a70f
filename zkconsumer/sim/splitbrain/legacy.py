"""The legacy group under split-brain faults: per-member views, cut-off members, retry budgets.

A compact discrete-event model of the self-coordinating members (``zk-range``) that keeps what
the split-brain scenarios depend on and nothing else:

* every member has its own server->client delay ``d`` (stale view): a watch notification and
  every response reach it ``d`` late, and its requests are synchronous, so each request costs it
  ``d`` plus the request's own time;
* a request's own time is the client CPU per request (the calibration's, scaled for a crowded
  process) times the members of the same process rebalancing at that moment (one core per
  process, shared), plus the server's latency; with a placement
  (:mod:`zkconsumer.sim.placement`), the busy processes (and the server, when it shares the
  host) also share the host's cores (:func:`~zkconsumer.sim.placement.cpu_shares`);
* one attempt: notification -> stop fetchers -> delete every owner znode held -> read the
  group's registrations (the *view*, as registered when the read starts) -> create the owner
  znodes of its range share one by one; an owner znode held by another member is a conflict:
  delete what this attempt created (rollback), sleep ``rebalance.backoff.ms``, retry; after
  ``rebalance.max.retries`` attempts the rebalance is given up: the member owns nothing until the
  next notification, and a member whose *first* rebalance gives up exits (its registration goes,
  which notifies everybody);
* reading the registrations is not atomic: a member that deregisters (leaves, gives up, expires)
  after the attempt listed the group but before the attempt read its registration makes the
  read fail (NoNode), and the attempt fails like a conflicted one, without a conflict;
* a notification during an attempt is coalesced into one more rebalance afterwards;
* a clean leave begins when the member's consume loop sees the stop request
  (:func:`.legacy.leave_stop_s`: the measured wake and shutdown); ``shutdown`` takes the
  rebalance lock, so a member that is in an attempt then deregisters only when that attempt
  ends (it reads the whole group, sees it is shutting down and claims nothing): until then its
  registration stays in everybody's view;
* a cut-off member hears nothing and is heard by nobody: the server expires its session
  (:mod:`.liveness`: last packet heard, rounded to the tick), which deletes its registration and
  owner znodes; it keeps fetching what it owned until the cut heals, learns its session expired,
  stops its fetchers and registers again (another change for everybody).

Time is in seconds from the event instant; the group is stable at 0.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from zkconsumer.scenarios.splitbrain import Kind, Plan, member_index, task_of
from zkconsumer.sim.assignment import range_share
from zkconsumer.sim.calibration import Calibration
from zkconsumer.sim.legacy import leave_stop_s
from zkconsumer.sim.liveness import round_to_next_tick
from zkconsumer.sim.placement import Placement, cpu_shares

log = logging.getLogger(__name__)

REQUESTS_PER_ATTEMPT = 6     # own registration, brokers, topic, children, watch re-arm, ...
RECONNECT_S = 0.3            # a healed member's client notices the expiry and reconnects


@dataclass
class Member:
    name: str
    delay_s: float = 0.0
    registered: bool = False
    owned: set[int] = field(default_factory=set)
    fetching: dict[int, float] = field(default_factory=dict)   # partition -> since
    busy: bool = False
    pending: bool = False
    first: bool = True           # its first rebalance (createMessageStreams) is not done yet
    attempts: int = 0
    cut_until: float | None = None
    gone: bool = False
    notice_due: bool = False     # a notification is on its way (later ones coalesce into it)
    leaving: bool = False        # shutdown waits for the attempt in progress (rebalance lock)


@dataclass
class Outcome:
    """What the simulated run measured (the real run's metric names)."""

    conflicts: int = 0
    rollbacks: int = 0
    given_up: int = 0
    gave_up: set[str] = field(default_factory=set)
    attempts: dict[str, int] = field(default_factory=dict)
    fetch_intervals: list[tuple[int, str, float, float]] = field(default_factory=list)
    last_coordination: float = 0.0
    end: float = 0.0
    converged: bool = True       # every rebalance over before the horizon


class LegacySplitModel:
    def __init__(self, plan: Plan, partitions: int, cal: Calibration, session_timeout_s: float,
                 backoff_s: float, max_retries: int, tasks: int, rng: random.Random,
                 messages_per_s: float = 0.0, placement: Placement | None = None) -> None:
        self.plan = plan
        self.placement = placement
        self.messages_per_s = messages_per_s
        self.partitions = partitions
        self.cal = cal
        self.session_s = session_timeout_s
        self.backoff_s = backoff_s
        self.max_retries = max_retries
        self.tasks = max(1, tasks)
        self.rng = rng
        self.now = 0.0
        self.queue: list[tuple[float, int, Callable[[], None]]] = []
        self.seq = itertools.count()
        self.members: dict[str, Member] = {}
        self.owner: dict[int, str] = {}
        self.out = Outcome()
        per_process = max(1, -(-(plan.members + len(plan.joiners)) // self.tasks))
        if placement is not None:
            per_process = placement.members_per_process()
        self.cpu_s = cal.client_read_cpu_ms * cal.client_cpu_scale(per_process) / 1000.0
        self.server_s = cal.zk_read_latency_ms / 1000.0
        self.service_s = cal.zk_read_service_us / 1e6
        self.active: dict[int, int] = {}   # process -> members in an attempt
        self.active_total = 0
        self._view: tuple[list[str], dict[str, int]] | None = None
        self.deregistered: dict[str, float] = {}

    # --- the engine -----------------------------------------------------------------------

    def at(self, t: float, fn: Callable[[], None]) -> None:
        heapq.heappush(self.queue, (t, next(self.seq), fn))

    def run(self, until: float) -> Outcome:
        while self.queue and self.queue[0][0] <= until:
            self.now, _, fn = heapq.heappop(self.queue)
            fn()
        self.out.end = self.now
        self.out.converged = not self.queue and not any(m.busy for m in self.members.values())
        for m in self.members.values():
            for p, since in m.fetching.items():
                self.out.fetch_intervals.append((p, m.name, since, float("inf")))
        return self.out

    # --- state ----------------------------------------------------------------------------

    def form(self) -> None:
        """The stable group at time 0: range over the initial members, everybody fetching."""
        names = sorted(self.plan.initial)
        for rank, name in enumerate(names):
            m = Member(name, registered=True, first=False)
            for p in range_share(rank, len(names), self.partitions):
                m.owned.add(p)
                m.fetching[p] = -1.0
                self.owner[p] = name
            self.members[name] = m
        for a in self.plan.actions:
            if a.kind is Kind.DELAY:
                self.members.setdefault(a.member, Member(a.member)).delay_s = a.value / 1000.0
            self.at(a.at_s, lambda a=a: self.apply(a.kind, a.member))

    def request_s(self, m: Member) -> float:
        """Its delay, the server's latency, and the larger of two queues: its process's core
        shared by the members of the process in an attempt, the server's one request thread
        shared by every member in an attempt."""
        proc = self.process_of(m)
        busy = self.active.get(proc, 0)
        cpu = self.cpu_s * max(1, busy)
        serve = self.service_s * self.active_total
        if self.placement is not None:
            shares, server = cpu_shares(self.placement, self.active, self.active_total > 0)
            cpu, serve = cpu / shares.get(proc, 1.0), serve / server
        return m.delay_s + self.server_s + max(cpu, serve)

    def process_of(self, m: Member) -> int:
        """The process hosting ``m``: the placement's, else the task the real job puts it in."""
        if self.placement is not None:
            return self.placement.process_of(member_index(m.name))
        return task_of(m.name, self.tasks)

    def drop_owners(self, m: Member) -> None:
        for p in [p for p, who in self.owner.items() if who == m.name]:
            del self.owner[p]
        m.owned.clear()

    def deregister(self, m: Member) -> None:
        m.registered = False
        self._view = None
        self.deregistered[m.name] = self.now

    def view(self) -> tuple[list[str], dict[str, int]]:
        """The registered members (sorted) and their ranks, cached until a registration changes."""
        if self._view is None:
            names = sorted(x.name for x in self.members.values() if x.registered and not x.gone)
            self._view = (names, {n: i for i, n in enumerate(names)})
        return self._view

    def busy(self, m: Member, delta: int) -> None:
        proc = self.process_of(m)
        self.active[proc] = self.active.get(proc, 0) + delta
        self.active_total += delta

    def stop_fetching(self, m: Member, parts: set[int] | None = None) -> None:
        for p in sorted(parts if parts is not None else set(m.fetching)):
            since = m.fetching.pop(p, None)
            if since is not None:
                self.out.fetch_intervals.append((p, m.name, since, self.now))

    def notify_all(self, source: str) -> None:
        """A change of the registrations: every registered member's child watch fires. A watch
        fires once until re-armed, and a member's rebalance re-reads everything, so a second
        change before the first notification arrived adds nothing."""
        for m in self.members.values():
            if m.registered and not m.gone and m.name != source:
                if m.busy:
                    m.pending = True
                elif not m.notice_due:
                    m.notice_due = True
                    self.at(self.now + m.delay_s + self.cal.watch_delivery_ms / 1000.0,
                            lambda m=m: self.notified(m))

    # --- actions --------------------------------------------------------------------------

    def apply(self, kind: Kind, name: str) -> None:
        m = self.members.setdefault(name, Member(name))
        if kind is Kind.JOIN:
            def register() -> None:
                m.registered = True
                self._view = None
                self.notify_all(name)
                self.start(m)
            self.at(self.now + self.cal.zk_connect_ms / 1000.0 + m.delay_s, register)
        elif kind is Kind.LEAVE:
            stop_s = leave_stop_s(self.rng, self.cal, len(m.owned), self.partitions,
                                  self.messages_per_s, self.fetcher_stop_s(m), 1.0)
            self.at(self.now + stop_s, lambda: self.shutdown(m))
        elif kind is Kind.CUT:
            heal = next(a.at_s for a in self.plan.actions
                        if a.member == name and a.kind is Kind.HEAL)
            m.cut_until = heal
            silent = self.rng.uniform(0.0, 0.5)   # its last commit before the cut
            expiry = round_to_next_tick(self.session_s - silent, self.cal.zk_tick_ms / 1000.0,
                                        self.rng.uniform(0.0, self.cal.zk_tick_ms / 1000.0))
            self.at(self.now + expiry, lambda: self.expire(m))
        elif kind is Kind.HEAL:
            self.at(self.now + RECONNECT_S, lambda: self.rejoin(m))

    def fetcher_stop_s(self, m: Member) -> float:
        if not m.fetching:
            return 0.0
        return self.rng.uniform(self.cal.fetcher_stop_min_ms, self.cal.fetcher_stop_max_ms) / 1000.0

    def shutdown(self, m: Member) -> None:
        """``shutdown``: wait for the attempt in progress (the rebalance lock), then stop the
        fetchers and delete owner znodes and registration; everybody is notified."""
        if m.busy:
            m.leaving = True
            return
        self.stop_fetching(m)
        self.drop_owners(m)
        m.gone = True
        self.deregister(m)
        self.notify_all(m.name)

    def expire(self, m: Member) -> None:
        """The server drops the cut-off member's session: registration and owners go."""
        self.drop_owners(m)      # its znodes are gone; its fetchers still run
        self.deregister(m)
        self.notify_all(m.name)

    def rejoin(self, m: Member) -> None:
        m.cut_until = None
        if not m.registered:
            m.registered = True
            self._view = None
            self.notify_all(m.name)
        self.notified(m)

    # --- the rebalance --------------------------------------------------------------------

    def notified(self, m: Member) -> None:
        m.notice_due = False
        if m.gone or m.cut_until is not None:
            return
        if m.busy:
            m.pending = True
            return
        self.start(m)

    def start(self, m: Member) -> None:
        m.busy, m.pending, m.attempts = True, False, 0
        self.attempt(m)

    def attempt(self, m: Member) -> None:
        if m.leaving:                # its shutdown interrupted the backoff
            m.busy = False
            self.shutdown(m)
            return
        m.attempts += 1
        self.out.attempts[m.name] = self.out.attempts.get(m.name, 0) + 1
        self.out.last_coordination = max(self.out.last_coordination, self.now)
        self.busy(m, +1)
        stop_s = self.fetcher_stop_s(m)

        def released() -> None:
            self.stop_fetching(m)
            for p in list(m.owned):
                if self.owner.get(p) == m.name:
                    del self.owner[p]
            m.owned.clear()
            self.at(self.now + REQUESTS_PER_ATTEMPT * self.request_s(m), read)

        def read() -> None:
            names, ranks = self.view()
            per_read = self.request_s(m)
            started = self.now
            self.at(started + len(names) * per_read,
                    lambda: read_done(started, per_read, len(names), ranks))

        def read_done(started: float, per_read: float, size: int, ranks: dict[str, int]
                      ) -> None:
            if m.leaving:            # shutting down: the attempt claims nothing, then it leaves
                end_for_leave()
                return
            # a registration deleted before this attempt came to read it: NoNode, attempt fails
            if any(started <= t < started + (ranks[n] + 1) * per_read
                   for n, t in self.deregistered.items() if n in ranks):
                conflict([], counted=False)
                return
            claim(size, ranks.get(m.name))

        def claim(size: int, rank: int | None) -> None:
            share = list(range_share(rank, size, self.partitions)) if rank is not None else []
            created: list[int] = []
            t = self.now
            for p in share:
                t += self.request_s(m)
                holder = self.owner.get(p)
                if holder is not None and holder != m.name:
                    self.at(t, lambda: conflict(created, counted=True))
                    return
                self.owner[p] = m.name
                created.append(p)
            self.at(t, lambda: succeeded(created))

        def end_for_leave() -> None:
            self.busy(m, -1)
            m.busy = False
            self.shutdown(m)

        def conflict(created: list[int], counted: bool) -> None:
            """A failed attempt: an owner conflict (rolled back) or a failed read."""
            if counted:
                self.out.conflicts += 1
                self.out.rollbacks += 1
            for p in created:
                if self.owner.get(p) == m.name:
                    del self.owner[p]
            self.busy(m, -1)
            self.out.last_coordination = max(self.out.last_coordination, self.now)
            if m.leaving:
                m.busy = False
                self.shutdown(m)
            elif m.attempts >= self.max_retries:
                give_up()
            else:
                self.at(self.now + self.backoff_s, lambda: self.attempt(m))

        def give_up() -> None:
            self.out.given_up += 1
            self.out.gave_up.add(m.name)
            m.busy = False
            if m.first:              # createMessageStreams throws: the member exits
                m.gone = True
                self.deregister(m)
                self.notify_all(m.name)
            elif m.pending:
                self.start(m)

        def succeeded(created: list[int]) -> None:
            if m.leaving:            # its claims stand until shutdown deletes them
                m.owned = set(created)
                end_for_leave()
                return
            if not m.registered:     # expired meanwhile: nothing is owned
                for p in created:
                    if self.owner.get(p) == m.name:
                        del self.owner[p]
                self.busy(m, -1)
                m.busy = False
                return
            m.owned = set(created)
            for p in created:
                m.fetching[p] = self.now
            m.first = False
            m.busy = False
            self.busy(m, -1)
            self.out.last_coordination = max(self.out.last_coordination, self.now)
            if m.pending:
                self.start(m)

        self.at(self.now + m.delay_s + stop_s, released)
