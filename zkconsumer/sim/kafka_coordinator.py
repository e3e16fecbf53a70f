"""Apache Kafka 2.4's GroupCoordinator, from its source rules: a *modelled* broker profile.

The simulator's broker-side figures were so far Tansu 0.6.0's (``zkconsumer.sim.broker`` with
Tansu's join window, ``zkconsumer.sim.tansu`` for cooperative groups). This profile follows the
rules of Kafka 2.4's ``GroupCoordinator`` / ``GroupMetadata`` / ``MemberMetadata`` instead, and
keeps the client-side costs (request latency, a joiner's start-up, a revocation's commit) of the
calibration. Its protocols are named ``kafka-<protocol>`` so that its rows never mix with the
Tansu-timed ones. It stays labelled *modelled* until it passes the checks planned in
``results/comparison/kafka-model-plan.md`` on Kafka 2.4.1 runs it was not fitted to (nothing in
it is fitted to Kafka runs).

The rules:

1. **The join barrier.** A JoinGroup that changes the group (a new member, or a known member
   whose metadata changed) moves a Stable group to PreparingRebalance. The round's DelayedJoin
   completes as soon as every known member has sent its JoinGroup (``hasAllMembersJoined``), or
   at the rebalance timeout (the largest of the members' ``max.poll.interval.ms``), when the
   members that did not rejoin are removed. No waiting window otherwise (Tansu holds a round
   about half a session timeout). The first JoinGroup of a new group (state Empty) waits
   ``group.initial.rebalance.delay.ms`` (InitialDelayedJoin), prolonged by the same delay while
   members keep arriving, up to the rebalance timeout.
2. **Telling the members.** The coordinator does not push: a member learns of a rebalance from
   the REBALANCE_IN_PROGRESS answer to its next heartbeat (every ``heartbeat.interval.ms``),
   then (eager) revokes everything and commits, and rejoins.
3. **SyncGroup.** When the barrier closes every JoinGroup is answered; the leader assigns and
   its SyncGroup completes everybody's, at once. The client (librdkafka) restarts its heartbeat
   schedule at that answer, so every member of a round heartbeats in step afterwards: a group
   formed by one round learns of the next rebalance at one common heartbeat, not at N
   independent ones. (The first version of this profile drew independent phases and missed
   this; see ``results/comparison/kafka-model-check-v1``.)
4. **Leave and expiry.** LeaveGroup removes a dynamic member at once (a new round). A member
   whose heartbeats stop is removed ``session.timeout.ms`` after its *last heartbeat* (the
   DelayedHeartbeat), so a kill is noticed up to one heartbeat interval early.
5. **Static members (KIP-345).** ``close()`` of a member with ``group.instance.id`` sends no
   LeaveGroup: the coordinator removes it only when its session expires (rule 4). A static
   member that rejoins in time gets its assignment back with no round (not exercised by the
   join, leave and crash events simulated here).
6. **Cooperative (KIP-429)** is the client's protocol over the same barrier: round one withholds
   the partitions that change owner, their owners revoke just those and rejoin (their metadata
   changed), which opens round two. Every owner revokes in round one (no Tansu-like one owner
   per round).

Requests counted, besides :mod:`zkconsumer.sim.broker`'s: a dynamic joiner's two JoinGroups
(librdkafka 2.x uses JoinGroup v5: the first is answered MEMBER_ID_REQUIRED, KIP-394, which
Kafka 2.4 implements), and the auto-commits every member owning partitions of a topic with
traffic sends every ``auto.commit.interval.ms`` inside the counting window.
"""

from __future__ import annotations

import logging
import math
import random
from dataclasses import replace

from zkconsumer.sim import costs
from zkconsumer.sim.broker import BrokerGroup
from zkconsumer.sim.config import SimConfig
from zkconsumer.sim.engine import Engine
from zkconsumer.sim.formation import KAFKA
from zkconsumer.sim.heartbeats import BrokerMember
from zkconsumer.sim.sampling import Window
from zkconsumer.sim.tally import OwnershipLedger, Tally

log = logging.getLogger(__name__)

PREFIX = "kafka-"
PROTOCOLS = ("kafka-eager-range", "kafka-cooperative-sticky", "kafka-static-range")
# group.initial.rebalance.delay.ms: Kafka's default is 3000; the lab's broker runs with 0.
INITIAL_REBALANCE_DELAY_MS = 0.0
# The clients' auto.commit.interval.ms (the lab's setting, zkconsumer.scenarios.timing.Timing).
AUTO_COMMIT_INTERVAL_S = 1.0
DYNAMIC_JOINER_JOIN_GROUPS = 2  # MEMBER_ID_REQUIRED, then the JoinGroup with the id


def base_protocol(protocol: str) -> str:
    """``kafka-eager-range`` -> ``eager-range``: the client protocol the profile runs."""
    return protocol[len(PREFIX):] if protocol.startswith(PREFIX) else protocol


def last_beat_before(member: BrokerMember, t: float, interval: float) -> float:
    """The member's last scheduled heartbeat at or before ``t`` (a steady member's schedule
    ``phase + k * interval`` runs before its phase too)."""
    return member.phase + math.floor((t - member.phase) / interval + 1e-12) * interval


def initial_delay_end(arrivals: list[float], delay_s: float, rebalance_timeout_s: float) -> float:
    """When the InitialDelayedJoin of a new group completes, given the members' JoinGroup times.

    It waits ``delay_s`` after the first arrival and again after every arrival inside the wait,
    but never past the rebalance timeout counted from the first arrival.
    """
    if not arrivals:
        raise ValueError("an initial delayed join needs at least one JoinGroup")
    first = min(arrivals)
    end = first + delay_s
    for t in sorted(arrivals):
        if t <= end:
            end = max(end, t + delay_s)
    return min(end, first + max(delay_s, rebalance_timeout_s))


class KafkaCoordinatorGroup(BrokerGroup):
    """A group on Apache Kafka 2.4's coordinator (module docstring: the rules)."""

    JOINER_BOUNCE = False  # MEMBER_ID_REQUIRED is counted by join() below

    def __init__(self, cfg: SimConfig, engine: Engine, rng: random.Random, tally: Tally,
                 ledger: OwnershipLedger) -> None:
        super().__init__(cfg, engine, rng, tally, ledger)
        protocol = base_protocol(cfg.protocol)
        self.cooperative = protocol == "cooperative-sticky"
        self.static = protocol == "static-range"
        self.new_group = False
        self.initial_delay_s = INITIAL_REBALANCE_DELAY_MS / 1000.0
        # Rules 1 and 6: no join window, every owner revokes in round one, sessions expire
        # from the last heartbeat (crash below), not a Tansu-measured factor after the kill.
        self.cal = replace(self.cal, broker_join_window_factor=0.0,
                           coop_round1_extra_factor=0.0, coop_round2_extra_factor=0.0,
                           coop_revokers_per_round=0.0, broker_session_check_factor=1.0)

    # Rule 3: the group's last round answered every SyncGroup at once, so the members'
    # heartbeat schedules share one phase (up to a request's latency, added in setup).
    FORMATION = KAFKA

    def setup(self, ids: list[str]) -> None:
        super().setup(ids)
        for m in self.members.values():
            m.phase += self.half_request_s()

    def join(self, mid: str) -> None:
        # A group with no live member is Empty: its first round is an InitialDelayedJoin.
        self.new_group = not any(m.in_group and m.alive for m in self.members.values())
        super().join(mid)
        if not self.static:  # a static joiner's instance id lets it skip MEMBER_ID_REQUIRED
            self.tally.broker((DYNAMIC_JOINER_JOIN_GROUPS - 1) * costs.JOIN_GROUP, mid)
            # The bounced JoinGroup is one of the joiner's JoinGroups, and attempts are counted
            # as JoinGroups per member (as the lab counts them), so it is an attempt too.
            self._joiner_bounced = DYNAMIC_JOINER_JOIN_GROUPS - 1
            self.tally.max_attempts = max(self.tally.max_attempts, DYNAMIC_JOINER_JOIN_GROUPS)

    def round_closes_at(self) -> float:
        """Rule 1: no window (the base model's factor is 0 here); a new group's first round
        also waits the initial delay after each arrival."""
        base = super().round_closes_at()
        if not (self.new_group and self.initial_delay_s > 0 and self._round == 1):
            return base
        return max(base, initial_delay_end(list(self._arrived.values()), self.initial_delay_s,
                                           self.cfg.rebalance_timeout_ms / 1000.0))

    def leave(self, mid: str) -> None:
        """Dynamic: LeaveGroup (rule 4). Static: close() revokes and commits, sends no
        LeaveGroup, and the coordinator notices at session expiry (rule 5)."""
        if not self.static:
            super().leave(mid)
            return
        m = self.members[mid]
        self.ledger.begin()
        self.revoke_fetching(m, set(m.owned), count_pause=False)
        self._expire(m)

    def crash(self, mid: str, _expiry_s: float) -> None:
        """Rule 4: removed one session timeout after its last heartbeat before the kill."""
        m = self.members[mid]
        self.ledger.member_died(mid)
        self.ledger.begin()
        self._expire(m)

    def _expire(self, m: BrokerMember) -> None:
        now = self.engine.now
        last = last_beat_before(m, now, self.hb)
        m.alive = False
        m.until = now
        self.engine.after(max(0.0, last + self.cfg.session_timeout_s - now), self._removed, m)

    def finish(self, end: float, window: Window | None = None) -> None:
        """Heartbeats (the base model), then the auto-commits of members owning partitions."""
        super().finish(end, window)
        if not (self.cfg.auto_commit and self.cfg.messages_per_s > 0):
            return
        owners = [m for m in self.members.values() if m.owned or m.until is not None]
        for m in owners:
            lo, hi = (-self.cfg.count_from_s, end) if window is None else window(m.mid)
            first = lo if m.since <= 0.0 else max(0.0, m.since, lo)
            stop = hi if m.until is None else min(hi, m.until)
            self.tally.add_counted(costs.heartbeats(
                m.phase, AUTO_COMMIT_INTERVAL_S, first, stop) if stop > first else 0)
