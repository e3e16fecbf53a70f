"""Members of broker-coordinated groups: a heartbeat schedule and what they fetch.

Broker-side members learn about a rebalance only from a heartbeat response (or their own join),
so each one has a fixed phase: it heartbeats at ``phase + k·interval``. Heartbeats are not
simulated one by one (10,000 members × minutes would be millions of events that change
nothing); :func:`count_heartbeats` adds them up over each member's lifetime at the end of a run,
and :func:`next_beat` finds the one that carries news.

A member's JoinGroup-to-SyncGroup stretches are its ``quiet`` intervals, and a model may leave
the scheduled beats inside them out (``QUIET_WHILE_REJOINING``): a reading of librdkafka's join
state machine says it heartbeats only in its steady and assignment states. The counts disagree
by case: at N = 64 the 63 survivors of a crash sent 315 heartbeats in a ~11.5 s counting
window at 2 s intervals, where a steady schedule sends ~360, but the eager rounds on Tansu send
two per member in about 4 s, one of them inside the 3 s the coordinator holds the JoinGroup;
the eager models count every scheduled beat.

A model may also restart a member's schedule (:meth:`BrokerMember.rephase`): librdkafka's first
heartbeat after a SyncGroup answer goes one interval after it, which is what paces Tansu's
cooperative rounds (:mod:`zkconsumer.sim.tansu`) and why the round that formed a group leaves
its members in step (:mod:`zkconsumer.sim.formation`). The earlier phases are kept, so the
count stays exact; a member never rephased counts as before.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from zkconsumer.sim import costs
from zkconsumer.sim.sampling import Window
from zkconsumer.sim.tally import OwnershipLedger, Tally

log = logging.getLogger(__name__)

# "Just after" an instant, for a schedule that sends nothing at its start (well above the
# rounding slack of costs.heartbeats).
AFTER_S = 1e-9


@dataclass(eq=False)
class BrokerMember:
    """One member as the coordinator and the ledger see it."""

    mid: str
    phase: float
    since: float = 0.0
    until: float | None = None  # left or died
    owned: set[int] = field(default_factory=set)  # partitions it fetches
    alive: bool = True
    in_group: bool = True
    # eager/cooperative: waiting for a SyncGroup answer; a rebalance learnt meanwhile waits
    awaiting_sync: bool = False
    learned_pending: int = 0  # the round learnt while waiting (0: none)
    # kip848: the coordinator's view and the member's in-flight work
    assigned: set[int] = field(default_factory=set)
    hb_scheduled: bool = False
    inflight: int = 0
    unsettled: bool = False
    # eager/cooperative: JoinGroup-to-SyncGroup stretches without heartbeats (module docstring)
    quiet: list[tuple[float, float]] = field(default_factory=list)
    quiet_since: float | None = None
    # (until, phase): the schedules before the current one, oldest first (see rephase)
    past_phases: list[tuple[float, float]] = field(default_factory=list)
    # restart instants at which a heartbeat was sent (rephase(beat_now=True))
    beats_at_restart: set[float] = field(default_factory=set)

    def go_quiet(self, now: float) -> None:
        """A JoinGroup leaves: no heartbeats until the SyncGroup answer."""
        if self.quiet_since is None:
            self.quiet_since = now

    def resume_beats(self, now: float) -> None:
        """The SyncGroup answer came: heartbeats resume on the member's schedule."""
        if self.quiet_since is not None:
            self.quiet.append((self.quiet_since, now))
            self.quiet_since = None

    def rephase(self, now: float, beat_now: bool = False) -> None:
        """Restart the schedule at ``now``: the next heartbeat goes one interval later, and one
        goes at ``now`` too if ``beat_now`` (a heartbeat sent there, or one that fell due while
        the member waited and goes out on the answer)."""
        self.past_phases.append((now, self.phase))
        self.phase = now
        if beat_now:
            self.beats_at_restart.add(now)

    def schedules(self) -> list[tuple[float, float, float]]:
        """(from, until, phase) of each schedule the member ran, oldest first. A restarted
        schedule sends nothing at its restart (its first beat goes one interval later), so it
        runs from just after that instant, unless a beat was sent there (``rephase``)."""
        spans, start = [], -math.inf
        for until, phase in self.past_phases:
            spans.append((start, until, phase))
            start = until if until in self.beats_at_restart else until + AFTER_S
        spans.append((start, math.inf, self.phase))
        return spans


def next_beat(member: BrokerMember, not_before: float, interval: float) -> float:
    """The first heartbeat of ``member`` at or after ``not_before``."""
    if not_before <= member.phase:
        return member.phase
    k = math.ceil((not_before - member.phase) / interval - 1e-12)
    return member.phase + k * interval


def count_heartbeats(members: Iterable[BrokerMember], interval: float, end: float,
                     start: float = 0.0, window: Window | None = None) -> int:
    """Scheduled heartbeats sent between ``start`` (the event: 0) and ``end``, or in each
    member's own window (``window``: its sampled counts, :mod:`zkconsumer.sim.sampling`).

    A ``start`` before the event counts only members still alive after it: a sampled count
    of a member that dies at the event ends at its last sample before the event.
    """
    total = 0
    for m in members:
        lo, hi = (start, end) if window is None else window(m.mid)
        before_event = m.since <= 0.0 and (m.until is None or m.until > 0.0)
        first = lo if before_event else max(0.0, m.since, lo)
        if first == m.phase:  # a joiner's schedule starts at its SyncGroup answer: no beat then
            first += AFTER_S
        stop = hi if m.until is None else min(hi, m.until)
        quiet = m.quiet + ([(m.quiet_since, stop)] if m.quiet_since is not None else [])
        for s0, s1, phase in m.schedules():
            lo, hi = max(first, s0), min(stop, s1)
            total += costs.heartbeats(phase, interval, lo, hi)
            for q0, q1 in quiet:
                total -= costs.heartbeats(phase, interval, max(lo, q0), min(hi, q1))
    return total


def revoke(m: BrokerMember, partitions: set[int], tally: Tally, ledger: OwnershipLedger,
           revoke_ms: float, commit_round_trip: Callable[[], float] | None,
           count_pause: bool = True) -> float:
    """``m`` stops fetching ``partitions`` (committing first when ``commit_round_trip`` is
    given: auto-commit on); returns how long it takes.

    Both broker-side protocols (eager/cooperative and KIP-848) give partitions up this way; a
    partition whose ledger owner is already someone else (a new owner took it over meanwhile)
    keeps that owner.
    """
    if not partitions:
        return 0.0
    if count_pause:
        tally.paused.add(m.mid)
    delay = revoke_ms / 1000.0
    if commit_round_trip is not None:
        tally.broker(costs.OFFSET_COMMIT_REQUEST, m.mid)
        delay += commit_round_trip()
    m.owned -= partitions
    for p in sorted(partitions):
        if ledger.owner[p] == m.mid:
            ledger.set_owner(p, None)
    return delay
