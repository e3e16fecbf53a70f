"""Tansu 0.6.0's group coordinator, for cooperative-sticky groups: no JoinGroup barrier.

KIP-429 assumes a coordinator that holds every JoinGroup until all members have rejoined (the
barrier of :mod:`zkconsumer.sim.broker`), so that one round revokes from every owner and a
second hands the partitions over. Tansu 0.6.0 has no such barrier, and with librdkafka clients
the real joins went differently (``docs/scale.md``, validation): the owners gave partitions up
one per round in most rounds, rounds came 5 s apart after a first one of 3 s, and some members
joined every round while others joined every 8 s. The coordinator the records fit:

1. A JoinGroup changes the group when it arrives: a new member, or a member whose metadata
   changed (cooperative-sticky metadata lists the partitions the member owns, so an owner that
   revoked some and rejoins changes it, and so does a member that was given some), starts a
   new generation. The answer waits: the coordinator applies a waiting request again each
   second (:data:`~zkconsumer.sim.tansu_eager.LOOK_S`) and answers a JoinGroup at the first
   look at which half the session timeout has passed (3 s at the lab's 6 s), with the
   generation current *then*; the source of the build the lab runs, which every real
   JoinGroup's SyncGroup about 3 s later agrees with, the leader's too
   (:mod:`zkconsumer.sim.tansu_eager` says which build).
2. The leader (the member that formed the group, kept until it leaves) gets every member's
   metadata as the coordinator holds it then and assigns: the sticky target (kept while the
   members stay the same), less every partition another member still reports owning
   (librdkafka's cooperative adjustment). Its SyncGroup, if the generation has not moved
   meanwhile, *forms* the generation.
3. A follower's SyncGroup is answered with its part at the first look that finds its
   generation formed: at once, or up to a second after the leader's SyncGroup. If that has
   not happened once 0.8 session timeouts have passed (the source's limit; a real member whose
   SyncGroup went unanswered sent its next JoinGroup 5 s after it, with no heartbeat between),
   the answer is REBALANCE_IN_PROGRESS and the member rejoins at once.
4. A member given its part revokes what it lost and rejoins at once (a new generation: the
   SyncGroups still waiting for the old one can no longer be answered); one that lost nothing
   restarts its heartbeat schedule, the first one an interval after the answer, and learns of
   a newer generation from it (REBALANCE_IN_PROGRESS), then rejoins.
5. A member that left, or whose session expired, is dropped: a new generation. An expired
   session is found by the survivors' heartbeats, so they learn of it then, at the time the
   barrier model's session check gives.

Nothing here limits the owners that revoke per round. That one owner usually does follows from
3 and 4: the first owner answered revokes and rejoins within milliseconds, and the SyncGroups
of the others, answered at their own looks, then wait for a generation that has moved on;
owners answered at the same look all revoke (the rounds of two and three). Nor is the round
length a parameter: the leader learns of the next generation at its first heartbeat after its
own answer, so a round is the JoinGroup wait plus one heartbeat interval.

The group's heartbeat schedules start close together, as a group this coordinator formed has
them (:meth:`TansuCooperativeGroup.setup`); that spread decides how often several owners are
answered at once, and so how many rounds a join takes.

Requests counted: FindCoordinator and two JoinGroups for the joiner (the first is answered
MEMBER_ID_REQUIRED, KIP-394), a JoinGroup and a SyncGroup per attempt, OffsetCommit per
revocation (auto-commit), OffsetFetch per member given partitions, LeaveGroup on a clean leave,
and the heartbeats; JoinGroup and SyncGroup only up to the counting window's end, since
members still catching up with the last generation keep sending them after the group is
stable, as the real members did.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from zkconsumer.sim import costs
from zkconsumer.sim.assignment import full_assignment, sticky_target
from zkconsumer.sim.broker import BrokerGroup
from zkconsumer.sim.config import SimConfig
from zkconsumer.sim.engine import Engine
from zkconsumer.sim.formation import last_answer
from zkconsumer.sim.heartbeats import BrokerMember, next_beat
from zkconsumer.sim.sampling import Window, within
from zkconsumer.sim.tally import OwnershipLedger, Tally
from zkconsumer.sim.tansu_eager import LOOK_S, join_hold_s, sync_wait_s

log = logging.getLogger(__name__)

JOINER_JOIN_GROUPS = costs.JOINER_JOIN_GROUPS  # MEMBER_ID_REQUIRED, then with the id


def cooperative_assignment(target: Mapping[str, set[int]],
                           reported: Mapping[str, Iterable[int]]) -> dict[str, set[int]]:
    """The leader's assignment: its target, less what another member still reports owning.

    librdkafka's cooperative adjustment: a partition that changes owner is withheld until its
    owner has revoked it and said so in a later JoinGroup's metadata.
    """
    owner = {p: mid for mid, owned in reported.items() for p in owned}
    return {mid: {p for p in parts if owner.get(p, mid) == mid} for mid, parts in target.items()}


def is_balanced(owned: Mapping[str, set[int]], partitions: int) -> bool:
    """Whether the sticky assignor would move nothing: the cooperative rebalance is over."""
    target = sticky_target(owned, list(owned), partitions)
    return all(target[mid] == owned[mid] for mid in owned)


def count_until(times: Iterable[float], end: float) -> int:
    """Requests sent at or before ``end`` (the counting window's end)."""
    return sum(1 for t in times if t <= end)


@dataclass
class CoordinatorView:
    """What Tansu holds about one member, and where the member is in its join cycle."""

    known: bool = True  # the coordinator has it (a joiner: once its JoinGroup arrived)
    reported: frozenset[int] = frozenset()  # owned partitions in its last JoinGroup's metadata
    generation: int = 0  # of its last JoinGroup answer
    steady: bool = True  # its last SyncGroup was answered: it heartbeats
    learning: bool = False  # a heartbeat carrying REBALANCE_IN_PROGRESS is on its way
    joins: list[float] = field(default_factory=list)  # JoinGroup send times
    syncs: list[float] = field(default_factory=list)  # SyncGroup send times


def formation_spread(members: int, stagger: float, poll: float) -> float:
    """How far apart the members' heartbeat schedules start: ``stagger`` per member, at most
    one look (a SyncGroup that waited for the formation is answered at its next look)."""
    return min(poll, members * stagger)


def first_look_after(arrived: float, wait: float, poll: float) -> float:
    """The coordinator's first look at a waiting request at least ``wait`` after it arrived."""
    return arrived + math.ceil(wait / poll - 1e-9) * poll


class TansuCooperativeGroup(BrokerGroup):
    """A cooperative-sticky group on Tansu 0.6.0's coordinator (module docstring)."""

    ATTEMPTS_IN_WINDOW = True  # finish() counts each member's JoinGroups in its window

    def __init__(self, cfg: SimConfig, engine: Engine, rng: random.Random, tally: Tally,
                 ledger: OwnershipLedger) -> None:
        super().__init__(cfg, engine, rng, tally, ledger)
        # the coordinator's looks, from its source (module docstring); the calibration's fitted
        # coop_coordinator_poll_ms and coop_sync_wait_ms only select this model
        self.poll = LOOK_S
        self.wait = join_hold_s(cfg.session_timeout_s)
        self.sync_wait = sync_wait_s(cfg.session_timeout_s)
        self.view: dict[str, CoordinatorView] = {}
        self.generation = 0
        self.formed: int | None = 0
        self.assignment: dict[str, set[int]] = {}
        self.leader: str | None = None
        self._target_key: tuple[str, ...] = ()
        self._settling = False
        # (time, "formed" | "revoked" | "assigned", member): the rounds, for tests and debugging
        self.history: list[tuple[float, str, str]] = []

    # --- set-up and the events ---------------------------------------------------------------

    def setup(self, ids: list[str]) -> None:
        """A group this coordinator formed: heartbeats restarted together with the leader's.

        The leader's SyncGroup formed the first generation and the others' were answered right
        after it, or at their next look if they came first; librdkafka restarts the heartbeat
        schedule at the answer, so the schedules start within :func:`formation_spread` of the
        leader's, not at random phases (the barrier model draws those). The real groups' first
        assignments were 0.07-0.16 s apart at N = 4, 0.15-0.58 s at N = 16 and 0.42-1.0 s at
        N = 64.

        Where the harness ties the event to the formation (the lab's Spark herd runs), the
        phases are the lab's formation's instead (:meth:`BrokerGroup.formed_phases`: in step
        per client process, the processes answered Tansu's spread apart, the last the lab's
        lag before the event), as the records of those runs show them.
        """
        parts = full_assignment(ids, self.cfg.partitions, "range")
        # drawn in both cases: the lab's case replaces it below, but the draw keeps every
        # later one of the seed's stream where it was
        self.leader = self.rng.choice(ids) if ids else None
        if self.event_lag_s is not None:
            # the leader formed the group: the member answered first
            phases = self.formed_phases(ids)
            self.leader = self.first_answered()
        else:  # the leader first, the others within spread of it
            spread = formation_spread(len(ids), self.cal.coop_formation_stagger_ms / 1000.0,
                                      self.poll)
            base = last_answer(self.hb, self.rng, None)
            phases = [base + (0.0 if mid == self.leader else self.rng.uniform(0.0, spread))
                      for mid in ids]
            self.formed_at = dict(zip(ids, phases, strict=True))
        for mid, phase in zip(ids, phases, strict=True):
            m = BrokerMember(mid, phase=phase)
            self.members[mid] = m
            self.ledger.add_member(mid)
            m.owned = set(parts[mid])
            for p in parts[mid]:
                self.ledger.set_owner(p, mid)
            self.view[mid] = CoordinatorView(reported=frozenset(m.owned))

    def join(self, mid: str) -> None:
        m = BrokerMember(mid, phase=0.0, since=float("inf"))
        self.members[mid] = m
        self.view[mid] = CoordinatorView(known=False, steady=False)
        self.ledger.add_member(mid)
        self._settle_begin()
        self.tally.broker(costs.FIND_COORDINATOR, mid)
        delay = self.cal.broker_join_start_ms / 1000.0 * self.jitter()
        self.engine.after(delay, self._send_join, m, JOINER_JOIN_GROUPS)

    def leave(self, mid: str) -> None:
        self._settle_begin()
        super().leave(mid)

    def crash(self, mid: str, expiry_s: float) -> None:
        """Rule 5 for a kill: the session check is timed as in the barrier model.

        There it is when the survivors learnt of the rebalance (5.8-6.4 s after the kill in
        the real runs), so here too the survivors' JoinGroups start then, not a heartbeat
        later.
        """
        self._settle_begin()
        super().crash(mid, expiry_s)

    def _removed(self, m: BrokerMember) -> None:
        """Rule 5: the member left or its session expired: dropped, a new generation."""
        m.in_group = False
        if m.until is None:
            m.until = self.engine.now
        self.ledger.member_died(m.mid)
        self.view[m.mid].known = False
        if self.leader == m.mid:
            self.leader = None  # the next member whose JoinGroup arrives leads
        # an expired session is found by the survivors' own heartbeats: they learn at once
        self._new_generation(at_once=not m.alive)
        self.ledger.end()

    # --- the coordinator ---------------------------------------------------------------------

    def _new_generation(self, at_once: bool = False) -> None:
        """Rules 1 and 5: a new generation; steady members learn of it at their next heartbeat
        (``at_once``: the heartbeat that found a session expired, see :meth:`crash`)."""
        self.generation += 1
        self.formed = None
        for mid, v in self.view.items():
            m = self.members[mid]
            if v.steady and not v.learning and m.alive and m.in_group:
                self._learn_later(m, v, at_once)

    def _learn_later(self, m: BrokerMember, v: CoordinatorView, at_once: bool = False) -> None:
        v.learning = True
        if at_once:  # that heartbeat is sent now
            m.rephase(self.engine.now, beat_now=True)
        beat = self.engine.now if at_once else next_beat(m, self.engine.now + 1e-9, self.hb)
        self.engine.at(beat + self.half_request_s(), self._heartbeat_answered, m)

    def _heartbeat_answered(self, m: BrokerMember) -> None:
        """Rule 4: a heartbeat came back REBALANCE_IN_PROGRESS: JoinGroup."""
        v = self.view[m.mid]
        v.learning = False
        if v.steady and m.alive and m.in_group and v.generation < self.generation:
            self.tally.woken.add(m.mid)
            self._send_join(m)

    def _send_join(self, m: BrokerMember, count: int = 1) -> None:
        if not m.alive or not m.in_group:
            return
        v = self.view[m.mid]
        v.steady = False
        v.joins.extend([self.engine.now] * count)
        m.go_quiet(self.engine.now)
        self.engine.after(self.half_request_s(), self._join_arrived_tansu, m, frozenset(m.owned))

    def _join_arrived_tansu(self, m: BrokerMember, metadata: frozenset[int]) -> None:
        """Rule 1: a new member or new metadata starts a generation; the answer waits."""
        if not m.alive or not m.in_group:
            return
        v = self.view[m.mid]
        if self.leader is None:
            self.leader = m.mid
        if not v.known or v.reported != metadata:
            v.known, v.reported = True, metadata
            self._new_generation()
        now = self.engine.now
        self.engine.at(first_look_after(now, self.wait, self.poll), self._join_answered, m)

    def _join_answered(self, m: BrokerMember) -> None:
        """Rules 1 and 2: the current generation; the leader's answer carries the metadata."""
        if not m.alive or not m.in_group:
            return
        v = self.view[m.mid]
        v.generation = self.generation
        assignment = None
        delay = 2 * self.half_request_s()  # the answer travels, the SyncGroup travels back
        if m.mid == self.leader:
            members = [mid for mid, x in self.view.items() if x.known]
            reported = {mid: self.view[mid].reported for mid in members}
            assignment = cooperative_assignment(self._target_for(members, reported), reported)
            self.tally.leader_computations += 1
            delay += self.cal.assign_us_per_member * (len(members) + self.cfg.partitions) / 1e6
        v.syncs.append(self.engine.now + self.half_request_s())
        self.engine.after(delay, self._sync_arrived, m, v.generation, assignment)

    def _sync_arrived(self, m: BrokerMember, generation: int,
                      assignment: dict[str, set[int]] | None) -> None:
        """Rule 2: the leader's SyncGroup forms its generation; a follower's waits (rule 3)."""
        if not m.alive or not m.in_group:
            return
        if assignment is not None and generation == self.generation:
            self.formed, self.assignment = generation, assignment
            self.history.append((self.engine.now, "formed", m.mid))
            log.debug("generation %d formed by %s", generation, m.mid)
            self._check_settled()  # an event that moves nothing ends with its first round
        self._look_at_sync(m, generation, self.engine.now)

    def _look_at_sync(self, m: BrokerMember, generation: int, arrived: float) -> None:
        """Rule 3: answer if the generation is formed; else look again, up to the wait."""
        if not m.alive or not m.in_group:
            return
        now = self.engine.now
        if generation == self.generation and self.formed == generation:
            parts = set(self.assignment.get(m.mid, m.owned))
            self.engine.after(self.half_request_s(), self._given, m, parts)
        elif now - arrived >= self.sync_wait - 1e-9:
            self.engine.after(self.half_request_s(), self._send_join, m)
        else:
            self.engine.at(now + self.poll, self._look_at_sync, m, generation, arrived)

    def _target_for(self, members: list[str], reported: Mapping[str, frozenset[int]]
                    ) -> dict[str, set[int]]:
        """The sticky target, kept while the members stay the same.

        Recomputed from the partitions owned now, a target would shift quotas towards the
        owners that have not given anything up yet and make the first revoker give up one more
        (the real revokers gave up exactly their share: N = 4, 7, 6, 6 and 6 of 32).
        """
        key = tuple(sorted(members))
        if key != self._target_key:
            current = {mid: set(reported[mid]) for mid in members}
            self._target = sticky_target(current, members, self.cfg.partitions)
            self._target_key = key
        return self._target

    # --- the member --------------------------------------------------------------------------

    def _given(self, m: BrokerMember, parts: set[int]) -> None:
        """Rule 4: revoke what it lost and rejoin, or heartbeat again from now."""
        if not m.alive or not m.in_group:
            return
        v = self.view[m.mid]
        m.resume_beats(self.engine.now)
        if m.since == float("inf"):  # the joiner's heartbeats start with its first answer
            m.since = m.phase = self.engine.now
        else:
            # Tansu held the JoinGroup longer than an interval: the beat that fell due meanwhile
            # goes out on the answer (the lab's counts of Tansu's cooperative rounds say so)
            m.rephase(self.engine.now, beat_now=True)
        revoked, gained = m.owned - parts, parts - m.owned
        if gained:
            self.history.append((self.engine.now, "assigned", m.mid))
            self.tally.broker(costs.OFFSET_FETCH_REQUEST, m.mid)
            self.engine.after(2 * self.half_request_s(), self._resume_tansu, m, gained)
        if revoked:
            self.history.append((self.engine.now, "revoked", m.mid))
            self.tally.woken.add(m.mid)
            delay = self.revoke_fetching(m, revoked)
            self.engine.after(delay, self._send_join, m)
            return
        v.steady = True
        if v.generation < self.generation and not v.learning:
            self._learn_later(m, v)

    def _resume_tansu(self, m: BrokerMember, gained: set[int]) -> None:
        if m.alive and m.in_group:
            m.owned |= gained
            for p in sorted(gained):
                self.ledger.set_owner(p, m.mid)
        self._check_settled()

    # --- the end of the event ----------------------------------------------------------------

    def _settle_begin(self) -> None:
        if not self._settling:
            self._settling = True
            self.ledger.begin()

    def _check_settled(self) -> None:
        """The event is over once every partition is fetched and the assignor would move none."""
        if not self._settling or self.ledger.unowned():
            return
        owned = {mid: m.owned for mid, m in self.members.items() if m.alive and m.in_group}
        if is_balanced(owned, self.cfg.partitions):
            self._settling = False
            self.ledger.end()

    def finish(self, end: float, window: Window | None = None) -> None:
        """JoinGroups and SyncGroups sent up to ``end`` (or in each member's ``window``), then
        the heartbeats."""
        def counted(mid: str, times: list[float]) -> int:
            if window is None:
                return count_until(times, end)
            counting = window(mid)
            return sum(1 for t in times if within(counting, t))

        joins = {mid: counted(mid, v.joins) for mid, v in self.view.items()}
        syncs = sum(counted(mid, v.syncs) for mid, v in self.view.items())
        self.tally.add_counted(costs.JOIN_GROUP * sum(joins.values())
                               + costs.SYNC_GROUP * syncs)
        self.tally.attempts_total = sum(joins.values())
        self.tally.max_attempts = max(joins.values(), default=0)
        super().finish(end, window)


def cooperative_group(cfg: SimConfig, engine: Engine, rng: random.Random, tally: Tally,
                      ledger: OwnershipLedger) -> BrokerGroup:
    """The cooperative-sticky model the calibration asks for: Tansu's coordinator or a barrier."""
    if cfg.calibration.coop_coordinator_poll_ms > 0:
        return TansuCooperativeGroup(cfg, engine, rng, tally, ledger)
    return BrokerGroup(cfg, engine, rng, tally, ledger)
