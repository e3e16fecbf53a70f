"""Broker-side groups (KIP-62 era): eager ``range`` and ``cooperative-sticky`` (KIP-429).

One round (a generation) is the JoinGroup barrier: the coordinator moves the group to
PreparingRebalance when a member joins or leaves (a crash: when its session times out); the
others learn it from their next heartbeat and send JoinGroup; the barrier closes when every
member has joined, but not before the broker's join window (Tansu 0.6.0 holds a round for about
half the session timeout: ``broker_join_window_factor``); the first member to join is the
leader and is the only one that computes the assignment; everybody's SyncGroup is answered
when the leader's arrives.

* eager: a member revokes everything (stops fetching, commits) before it rejoins, so every
  member with partitions pauses, and all partitions are unowned until the SyncGroup answers;
* cooperative: members keep fetching through round 1; its assignment withholds the partitions
  that change owner, whose owners revoke just those and rejoin, which opens round 2 where the
  new owners get them. Only members losing partitions pause, and only those partitions.
  Tansu's extra delay per round is in ``coop_round1_extra_factor``/``coop_round2_extra_factor``;
  or, with ``coop_revokers_per_round`` > 0, only that many owners revoke per round and the
  others keep their partitions for a later round (Tansu 0.6.0 measured: one per round).
  Tansu 0.6.0 itself has no barrier: :mod:`zkconsumer.sim.tansu` models its coordinator for
  cooperative groups, when the calibration sets ``coop_coordinator_poll_ms``.

Requests counted: FindCoordinator and JoinGroup for the joiner, JoinGroup and SyncGroup per
member per round, OffsetCommit per revoking member (auto-commit), OffsetFetch per member given
new partitions, LeaveGroup on a clean leave, and every scheduled Heartbeat from the event until
the group is stable (:mod:`zkconsumer.sim.heartbeats`).
"""

from __future__ import annotations

import dataclasses
import logging
import random

from zkconsumer.sim import costs
from zkconsumer.sim.assignment import full_assignment, sticky_target
from zkconsumer.sim.config import SimConfig
from zkconsumer.sim.engine import Engine
from zkconsumer.sim.formation import LAB_LAST_STARTED, Spread, formed_schedule, processes_of
from zkconsumer.sim.formation import TANSU as TANSU_FORMATION
from zkconsumer.sim.group import FormedTicks, SimulatedGroup
from zkconsumer.sim.heartbeats import BrokerMember, count_heartbeats, next_beat
from zkconsumer.sim.sampling import Window
from zkconsumer.sim.tally import OwnershipLedger, Tally

log = logging.getLogger(__name__)


def deferred_revokers(revokers: list[str], per_round: float) -> list[str]:
    """The owners that do *not* revoke this round, when only ``per_round`` may (0: no limit).

    KIP-429 revokes from every owner in the first round and reassigns in the second. Tansu 0.6.0
    with librdkafka did not: in the real joins here one owner revoked per round (N = 4: four
    owners, four revocation rounds and a fifth that assigned the joiner), so a broker like it
    is modelled by letting the first ``per_round`` owners (in JoinGroup order) act and the rest
    keep their partitions until a later round. Not a protocol rule: a broker parameter.
    """
    limit = int(per_round)
    return [] if limit <= 0 else revokers[limit:]


class BrokerGroup(SimulatedGroup):
    """A group coordinated by a broker; ``cooperative`` selects KIP-429's two rounds."""

    # KIP-394 in this model (a subclass that models MEMBER_ID_REQUIRED itself turns it off)
    JOINER_BOUNCE = True
    # Whether a rejoining member's scheduled heartbeats stop until its SyncGroup answer. The
    # lab's counts say they do not: in the eager runs of results/scale/validation-1 (Tansu,
    # librdkafka's per-request counters, results/scale/validation-2/request-types.csv) the
    # survivors of a crash sent as many Heartbeats as an uninterrupted schedule (24 members,
    # 126 counted, 122 scheduled), and with the stretches left out every eager cell's requests
    # came out 14-19 % low. So the barrier model counts every scheduled heartbeat.
    QUIET_WHILE_REJOINING = False
    # How far apart the coordinator answered the processes' SyncGroups (Tansu's)
    FORMATION = TANSU_FORMATION

    def __init__(self, cfg: SimConfig, engine: Engine, rng: random.Random, tally: Tally,
                 ledger: OwnershipLedger) -> None:
        super().__init__(cfg, engine, rng, tally, ledger)
        self.cooperative = cfg.protocol == "cooperative-sticky"
        self.members: dict[str, BrokerMember] = {}
        self.hb = cfg.heartbeat_interval_s
        self._in_round = False
        self._round = 0
        self._round_start = 0.0
        self._expected: list[str] = []
        self._arrived: dict[str, float] = {}
        self._barrier_set = False
        self._target: dict[str, set[int]] = {}
        self._joiner_bounced = 0  # 1 once a joiner's first JoinGroup was bounced (KIP-394)
        # each member's answer in the round that formed the group (formed_phases), and its
        # client's statistics tick where the formation drew it member by member
        self.formed_at: dict[str, float] = {}
        self.formed_tick_at: dict[str, float] = {}

    # --- timing ------------------------------------------------------------------------------

    def _window(self) -> float:
        factor = self.cal.broker_join_window_factor
        if self.cooperative:
            extra = (self.cal.coop_round1_extra_factor if self._round == 1
                     else self.cal.coop_round2_extra_factor)
            factor += extra
        return factor * self.cfg.session_timeout_s

    # --- set-up and the event ------------------------------------------------------------------

    def formed_phases(self, ids: list[str]) -> list[float]:
        """The members' heartbeat phases in the group the last round formed: in step per
        process, the processes answered :attr:`FORMATION` apart (:mod:`.formation`); where
        the event is the lab's (``event_lag_s``), the process of member 0 started its clients
        last, as the lab's task 0 does."""
        processes = processes_of(self.cfg, len(ids))
        last_started = (processes[LAB_LAST_STARTED]
                        if self.event_lag_s is not None and processes else None)
        formed = formed_schedule(processes, self.hb, self.rng, self.event_lag_s,
                                 self.formation(), last_started)
        self.formed_at = dict(zip(ids, formed.answers, strict=True))
        self.formed_stragglers = formed.stragglers
        self.formed_tick_at = (dict(zip(ids, formed.ticks, strict=True)) if formed.ticks
                               else {})
        return formed.answers

    def formation(self) -> Spread:
        """:attr:`FORMATION`, its straggler rate the run set's own where the config gives one
        (``SimConfig.formation_straggler_share``) and its stragglers drawn by the recorded
        creation ranks where it gives those (``formation_straggler_ranks``), when this
        broker's formation draws stragglers at all (Tansu's; Apache Kafka's answers a round's
        members together)."""
        if not self.FORMATION.straggler_share:
            return self.FORMATION
        spread = self.FORMATION
        if self.cfg.formation_straggler_share is not None:
            spread = dataclasses.replace(spread,
                                         straggler_share=self.cfg.formation_straggler_share)
        if self.cfg.formation_straggler_ranks:
            spread = dataclasses.replace(spread,
                                         straggler_rank_weights=self.cfg.formation_straggler_ranks)
        return spread

    def first_answered(self) -> str | None:
        """The member the formation answered first (:meth:`formed_phases`; None before it):
        on Tansu, the member that formed the group and leads it (its first JoinGroup came
        first, and a leader is kept until it leaves)."""
        if not self.formed_at:
            return None
        return min((at, mid) for mid, at in self.formed_at.items())[1]

    def formed_ticks(self) -> FormedTicks | None:
        """The lab's statistics ticks come :attr:`FORMATION`'s lead before the members'
        formation answers (:mod:`.formation`)."""
        if not self.formed_at:
            return None
        return FormedTicks(self.formed_at, self.FORMATION.tick_lead, self.formed_tick_at)

    def setup(self, ids: list[str]) -> None:
        parts = full_assignment(ids, self.cfg.partitions, "range")
        for mid, phase in zip(ids, self.formed_phases(ids), strict=True):
            m = BrokerMember(mid, phase=phase)
            self.members[mid] = m
            self.ledger.add_member(mid)
            m.owned = set(parts[mid])
            for p in parts[mid]:
                self.ledger.set_owner(p, mid)

    def join(self, mid: str) -> None:
        m = BrokerMember(mid, phase=0.0, since=float("inf"))
        self.members[mid] = m
        self.ledger.add_member(mid)
        self.ledger.begin()
        # start-up (bootstrap, metadata, FindCoordinator), then the JoinGroup travels; the
        # first is answered MEMBER_ID_REQUIRED (a round trip) and sent again with the id, so
        # the joiner sends one JoinGroup more than the rounds it takes part in (KIP-394)
        self._joiner_bounced = costs.JOINER_JOIN_GROUPS - 1 if self.JOINER_BOUNCE else 0
        self.tally.broker(costs.FIND_COORDINATOR + (1 + self._joiner_bounced) * costs.JOIN_GROUP,
                          mid)
        # the joiner's JoinGroups are its attempts even if no round follows in the window
        self.tally.max_attempts = max(self.tally.max_attempts, 1 + self._joiner_bounced)
        delay = (self.cal.broker_join_start_ms / 1000.0 * self.jitter()
                 + (2 * self._joiner_bounced + 1) * self.half_request_s())
        self.engine.after(delay, self._event_join_arrived, m)

    def _event_join_arrived(self, m: BrokerMember) -> None:
        self._join_arrived(m)
        self.ledger.end()

    def leave(self, mid: str) -> None:
        """``close()``: revoke (commit), LeaveGroup; the coordinator drops the member
        ``broker_leave_wait_factor`` session timeouts later (0: at once, Kafka's rule), and a
        new round starts. The leaver sends nothing more (no heartbeats)."""
        m = self.members[mid]
        self.ledger.begin()
        delay = self.revoke_fetching(m, set(m.owned), count_pause=False)
        self.tally.broker(costs.LEAVE_GROUP, mid)
        wait = self.cfg.session_timeout_s * self.cal.broker_leave_wait_factor
        if wait > 0:
            m.alive = False  # gone: its heartbeats stop (the coordinator has not noticed yet)
            m.until = self.engine.now + delay
            wait *= self._jitter_small()
        self.engine.after(delay + self.half_request_s() + wait, self._removed, m)

    def crash(self, mid: str, _expiry_s: float) -> None:
        """The coordinator notices a dead member when its session times out.

        Timed from the kill, not from the victim's last heartbeat. A Kafka coordinator expires a
        member ``session.timeout.ms`` after its last heartbeat (or offset commit), which a
        librdkafka member sends every ``heartbeat.interval.ms``: a kill would be noticed up to
        one interval early, as ZooKeeper does (:mod:`zkconsumer.sim.liveness`). Tansu 0.6.0 did
        not: in the three real eager crashes here (2 s heartbeats, 6 s sessions) the victim's
        last heartbeat was 0.1-1.7 s before the kill, yet the survivors learnt of the rebalance
        5.8-6.4 s after it (at N = 64, with a survivor heartbeat every ~30 ms, 6.2 s). So the
        wait is ``broker_session_check_factor`` session timeouts after the kill.
        """
        m = self.members[mid]
        m.alive = False
        m.until = 0.0
        self.ledger.member_died(mid)
        self.ledger.begin()
        detect = (self.cfg.session_timeout_s * self.cal.broker_session_check_factor
                  * self._jitter_small())
        self.engine.after(detect, self._removed, m)

    def _jitter_small(self) -> float:
        sd = self.cal.session_expiry_jitter
        return max(0.5, self.rng.gauss(1.0, sd)) if sd > 0 else 1.0

    def _removed(self, m: BrokerMember) -> None:
        m.in_group = False
        if m.until is None:
            m.until = self.engine.now
        self.ledger.member_died(m.mid)
        if self._in_round:
            self._expected = [x for x in self._expected if x != m.mid]
            self._maybe_close_barrier()
        else:
            self._start_round(initiator=None)
        self.ledger.end()

    # --- the JoinGroup barrier ------------------------------------------------------------------

    def _start_round(self, initiator: BrokerMember | None) -> None:
        self._in_round = True
        self._round += 1
        self.tally.max_attempts = self._round + self._joiner_bounced
        self._round_start = self.engine.now
        self._arrived = {}
        self._barrier_set = False
        self.ledger.begin()
        self._expected = [mid for mid, m in self.members.items() if m.in_group and m.alive]
        self.engine.timer(self.engine.now + self.cfg.rebalance_timeout_ms / 1000.0,
                          self._rebalance_timeout, self._round)
        for mid in self._expected:
            m = self.members[mid]
            if m is initiator:
                continue
            when = next_beat(m, self.engine.now, self.hb) + self.half_request_s()
            self.engine.at(when, self._learned, m, self._round)
        self.round_started()

    def round_started(self) -> None:
        """A new round (generation) has just opened (a coordinator profile may reset its own
        state here; this model keeps none)."""

    def _rebalance_timeout(self, round_no: int) -> None:
        """Members that did not rejoin in time are dropped from the group (and counted)."""
        if not self._in_round or round_no != self._round or self._barrier_set:
            return
        missing = [mid for mid in self._expected if mid not in self._arrived]
        for mid in missing:
            m = self.members[mid]
            m.in_group = False
            self.tally.failed_rebalances += 1
            log.debug("round %d: %s missed the rebalance timeout", round_no, mid)
            if m.alive:  # its next heartbeat gets UNKNOWN_MEMBER_ID: it rejoins as new
                self.ledger.begin()
                self.engine.at(next_beat(m, self.engine.now, self.hb) + self.half_request_s(),
                               self._unknown_member, m)
        self._expected = [mid for mid in self._expected if mid in self._arrived]
        self._maybe_close_barrier()

    def _unknown_member(self, m: BrokerMember) -> None:
        """Fenced out: give everything up (the new owners may already fetch it), rejoin."""
        delay = self.revoke_fetching(m, set(m.owned))
        m.in_group = True
        self.tally.broker(costs.JOIN_GROUP, m.mid)
        self._rejoin_quiet(m, self.engine.now + delay)
        self.engine.after(delay + self.half_request_s(), self._rejoined, m)

    def _learned(self, m: BrokerMember, round_no: int) -> None:
        """A heartbeat answered REBALANCE_IN_PROGRESS: (eager: revoke all,) then JoinGroup."""
        if not m.alive or not m.in_group or not self._in_round or round_no != self._round:
            return
        if m.awaiting_sync:
            m.learned_pending = round_no
            return
        if m.mid in self._arrived:
            return  # already rejoined this round on its own (cooperative revocation)
        self.tally.woken.add(m.mid)
        delay = 0.0 if self.cooperative else self.revoke_fetching(m, set(m.owned))
        self.tally.broker(costs.JOIN_GROUP, m.mid)
        self._rejoin_quiet(m, self.engine.now + delay)
        self.engine.after(delay + self.half_request_s(), self._join_arrived, m)

    def _rejoin_quiet(self, m: BrokerMember, since: float) -> None:
        if self.QUIET_WHILE_REJOINING:
            m.go_quiet(since)

    def _join_arrived(self, m: BrokerMember) -> None:
        if not self._in_round:
            self._start_round(initiator=m)
        if m.mid not in self._expected:
            self._expected.append(m.mid)
        self._arrived.setdefault(m.mid, self.engine.now)
        self._maybe_close_barrier()

    def _maybe_close_barrier(self) -> None:
        if self._barrier_set or len(self._arrived) < len(self._expected):
            return
        if any(mid not in self._arrived for mid in self._expected):
            return
        self._barrier_set = True
        close = max(self.engine.now, self.round_closes_at())
        self.engine.at(close, self._barrier_closed)

    def _barrier_closed(self) -> None:
        members = [mid for mid in self._expected if self.members[mid].in_group]
        leader = min(members, key=lambda mid: (self._arrived[mid], mid))
        self.tally.leader_computations += 1
        log.debug("round %d: %d members, leader %s", self._round, len(members), leader)
        assignment = self._assign(members)
        n, parts = len(members), self.cfg.partitions
        compute = self.cal.assign_us_per_member * (n + parts) / 1e6
        sync_at = self.engine.now + self.half_request_s() + compute + self.half_request_s()
        self._in_round = False
        for mid in members:
            m = self.members[mid]
            self.tally.broker(costs.SYNC_GROUP, mid)
            m.awaiting_sync = True
            self.ledger.begin()
            self.engine.at(sync_at + self.half_request_s(), self._synced, m, assignment[mid])
        self.ledger.end()

    def _assign(self, members: list[str]) -> dict[str, set[int]]:
        if not self.cooperative:
            return {m: set(ps) for m, ps in full_assignment(members, self.cfg.partitions,
                                                            "range").items()}
        if self._round == 1 or not self._target:
            current = {mid: set(self.members[mid].owned) for mid in members}
            self._target = sticky_target(current, members, self.cfg.partitions)
        owned_live = {p for mid in members for p in self.members[mid].owned}
        result = {}
        for mid in members:
            mine = self.members[mid].owned
            # A partition still fetched by another member is withheld until it is revoked.
            result[mid] = {p for p in self._target.get(mid, set())
                           if p in mine or p not in owned_live}
        revokers = [mid for mid in sorted(members, key=lambda x: (self._arrived[x], x))
                    if self.members[mid].owned - result[mid]]
        for mid in deferred_revokers(revokers, self.cal.coop_revokers_per_round):
            result[mid] |= self.members[mid].owned  # keeps it all until a later round
        return result

    def round_closes_at(self) -> float:
        """The earliest the current round may close once every member has joined: the broker's
        join window after the round opened (a coordinator profile may say otherwise)."""
        return self._round_start + self._window()

    def sync_answered(self, m: BrokerMember) -> None:
        """A member's SyncGroup was just answered: librdkafka restarts its heartbeat schedule
        there, whatever the broker (the first beat an interval later), which is what leaves a
        formed group in step (:mod:`.formation`). Counted over averaged margins the restart
        hardly showed; counted in each member's sampled window (:mod:`.sampling`) the beat
        an unrestarted schedule sends shortly after a round falls inside the window."""
        if m.since != float("inf"):  # a joiner's schedule starts there anyway (_synced)
            m.rephase(self.engine.now)

    def _synced(self, m: BrokerMember, parts: set[int]) -> None:
        self.sync_answered(m)
        m.awaiting_sync = False
        m.resume_beats(self.engine.now)
        if m.since == float("inf"):  # the joiner's heartbeats start with its first generation
            m.since = m.phase = self.engine.now
        revoked = m.owned - parts
        gained = parts - m.owned
        delay = 0.0
        if revoked:  # cooperative only: eager members revoked everything before joining
            delay = self.revoke_fetching(m, revoked)
            self.tally.woken.add(m.mid)
            self.tally.broker(costs.JOIN_GROUP, m.mid)
            self._rejoin_quiet(m, self.engine.now + delay)
            self.ledger.begin()
            self.engine.after(delay + self.half_request_s(), self._rejoined, m)
        if gained:
            self.tally.broker(costs.OFFSET_FETCH_REQUEST, m.mid)
            self.engine.after(2 * self.half_request_s(), self._resume, m, gained)
        else:
            self.ledger.end()
        if m.learned_pending:
            round_no, m.learned_pending = m.learned_pending, 0
            self._learned(m, round_no)

    def _rejoined(self, m: BrokerMember) -> None:
        self._join_arrived(m)
        self.ledger.end()

    def _resume(self, m: BrokerMember, gained: set[int]) -> None:
        if m.alive and m.in_group:
            m.owned |= gained
            for p in sorted(gained):
                self.ledger.set_owner(p, m.mid)
        self.ledger.end()

    # --- end of run ------------------------------------------------------------------------------

    def finish(self, end: float, window: Window | None = None) -> None:
        """The heartbeats, counted up to ``end`` or in each member's ``window``."""
        self.tally.add_counted(count_heartbeats(self.members.values(), self.hb, end,
                                                start=-self.cfg.count_from_s, window=window))
