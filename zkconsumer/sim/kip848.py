"""A KIP-848 group (``group.protocol=consumer``): Apache Kafka 4.0's coordinator and
librdkafka's member, from their sources.

The lab's real KIP-848 runs are ``consumer-uniform`` and ``consumer-range`` on Apache Kafka
4.0.2 (``docs/kip848.md``). This model (the simulator's ``kip848``) follows the rules of the
4.0 group coordinator (``GroupMetadataManager.consumerGroupHeartbeat``,
``CurrentAssignmentBuilder``) and of librdkafka's consumer-protocol member (``rdkafka_cgrp.c``):

* the coordinator owns the assignment: a join bumps the group epoch and the target is computed
  in that same heartbeat with the server-side assignor (``uniform``, modelled by
  :func:`~zkconsumer.sim.assignment.sticky_target`: the members holding most keep the larger
  quotas, so a member that joins a group with more members than partitions gets nothing and
  nothing moves), taking ``assign_us_per_member`` per member. A leave frees the leaver's
  partitions at once and the target follows at the next heartbeat of any member, which is no
  later than the first recipient's own: the model computes it at the leave;
* there is no barrier and no push: each member learns its new target from its own next
  heartbeat, sent one broker-given interval (``group.consumer.heartbeat.interval.ms``) after
  the member's previous heartbeat of any kind; a member that must give partitions up revokes
  just those (commit, stop fetching) and acknowledges at once with an extra heartbeat (only
  that acknowledgement releases them); a partition still owned is never handed out, so its new
  owner gets it at its own next heartbeat after the release, fetches its offset and
  acknowledges it with an extra heartbeat too;
* members whose target does not change only see the epoch; nobody contends for anything, so
  there are no conflicts;
* ``kip848-range``: the 4.0 coordinator's server-side ``range`` assignor instead, which is not
  sticky: it deals contiguous ranges to the members sorted by member id (``RangeAssignor``:
  ``sortMemberIds``, ``addPartitionsToAssignment``). Member ids are random UUIDs, so a joiner
  lands at a random rank and every member after it shifts, and a leaver's successors shift
  back: partitions move along the range, each from its owner's revocation to its recipient's
  next heartbeat;
* a static member (``kip848-static``: ``group.instance.id``) leaves for a while: it revokes
  everything and its leave heartbeat carries member epoch -2
  (``consumerGroupStaticMemberGroupLeave``), which keeps it in the group with its
  assignment and leaves its session timer alone. Its partitions stay its own until that timer,
  started by its last regular heartbeat, runs out (``group.consumer.session.timeout.ms``, the
  runs' session timeout); then it is fenced like a leaver and the others take its partitions
  at their next heartbeats.

*Formation*: every heartbeat a member sends restarts its interval, so the schedules a formed
group runs are set by the members' first heartbeats and the acknowledgements of the formation,
all within a moment of the group's last change. Where the harness applies its event a set time
after that change (the lab's quiet rule, ``SimConfig.event_after_change_s``), each member's
schedule is drawn within :data:`~zkconsumer.sim.formation.KIP848_SCHEDULES_S` of it (a member
the formation gave nothing: :data:`~zkconsumer.sim.formation.KIP848_IDLE_SCHEDULES_S`), and
each client process's statistics ticks come :data:`~zkconsumer.sim.formation.KIP848`'s lead
before its members' schedules (the spreads the formation records of the KIP-848 fitting runs
on Apache Kafka 4.0.2 showed). Otherwise the schedules and ticks are at random phases.

Requests: one ConsumerGroupHeartbeat per member per interval (counted over lifetimes at the end),
the joiner's FindCoordinator and first heartbeat, the acknowledgements, OffsetCommit per revoking
member and OffsetFetch per member given partitions. Attempts: the heartbeat answers that changed
a member's assignment (each one a reconciliation, a rebalance callback in librdkafka), the most
any member had, and at least the group epochs the event made.
"""

from __future__ import annotations

import logging
import random

from zkconsumer.sim import costs
from zkconsumer.sim.assignment import range_share, sticky_target
from zkconsumer.sim.config import SimConfig
from zkconsumer.sim.engine import Engine
from zkconsumer.sim.formation import KIP848 as KIP848_FORMATION
from zkconsumer.sim.formation import KIP848_IDLE_SCHEDULES_S, KIP848_SCHEDULES_S
from zkconsumer.sim.group import FormedTicks, SimulatedGroup
from zkconsumer.sim.heartbeats import BrokerMember, count_heartbeats, next_beat
from zkconsumer.sim.sampling import Window
from zkconsumer.sim.tally import OwnershipLedger, Tally

log = logging.getLogger(__name__)

# A joiner's first heartbeat after its client is created (bootstrap metadata, FindCoordinator,
# then the heartbeat): the fitting runs' N = 12 joins were stable this long after one interval
# (their median at 5000 and at 1000 ms: results/scale/kip848-fit/hb*/consumer-uniform-n12).
JOINER_START_S = 0.06


class Kip848Group(SimulatedGroup):
    """Coordinator-driven incremental assignment with per-member heartbeats."""

    def __init__(self, cfg: SimConfig, engine: Engine, rng: random.Random, tally: Tally,
                 ledger: OwnershipLedger) -> None:
        super().__init__(cfg, engine, rng, tally, ledger)
        self.hb = cfg.heartbeat_interval_s
        self.static = cfg.protocol == "kip848-static"
        self.ranged = cfg.protocol == "kip848-range"
        self.sort_key: dict[str, float] = {}  # a random member id's place (kip848-range)
        # heartbeat answers that changed each member's assignment: librdkafka reconciles each
        # one (a rebalance callback); the most any member had is the run's attempts
        self.reconciled: dict[str, int] = {}
        self.members: dict[str, BrokerMember] = {}
        self.target: dict[str, set[int]] = {}
        self.free: set[int] = set()
        self.epoch = 0
        # each formed member's schedule as the formation left it (its later acknowledgements
        # restart the schedule, not its client's statistics timer)
        self.formed_at: dict[str, float] = {}

    # --- set-up and the event ------------------------------------------------------------------

    def formed_phase(self, idle: bool) -> float:
        """A formed member's heartbeat schedule, with the event at 0: tied to the group's last
        change where the harness applies its event a set time after it (``event_lag_s``; a
        member given nothing, ``idle``, stands later), else anywhere in one interval (module
        docstring, *Formation*)."""
        if self.event_lag_s is None:
            return self.rng.uniform(0.0, self.hb)
        span = KIP848_IDLE_SCHEDULES_S if idle else KIP848_SCHEDULES_S
        return -self.event_lag_s + self.rng.uniform(*span)

    def formed_ticks(self) -> FormedTicks | None:
        """Each process's statistics ticks come a lead before its members' schedules, where
        the schedules are tied to the formation (module docstring, *Formation*)."""
        if self.event_lag_s is None:
            return None
        return FormedTicks(self.formed_at, KIP848_FORMATION.tick_lead)

    def _new_id(self, mid: str) -> None:
        """The member's random id, drawn only where the assignor sorts by it (so the uniform
        model's random draws are unchanged)."""
        if self.ranged:
            self.sort_key[mid] = self.rng.random()

    def _assign(self, current: dict[str, set[int]], live: list[str]) -> dict[str, set[int]]:
        """The server-side assignor's target for ``live`` members owning ``current``."""
        if not self.ranged:
            return sticky_target(current, live, self.cfg.partitions)
        ordered = sorted(live, key=self.sort_key.__getitem__)
        return {m: set(range_share(i, len(ordered), self.cfg.partitions))
                for i, m in enumerate(ordered)}

    def setup(self, ids: list[str]) -> None:
        for mid in ids:
            self._new_id(mid)
        target = self._assign({}, ids)
        for mid in ids:
            m = BrokerMember(mid, phase=self.formed_phase(idle=not target[mid]))
            self.formed_at[mid] = m.phase
            self.members[mid] = m
            self.ledger.add_member(mid)
            m.owned = set(target[mid])
            m.assigned = set(target[mid])
            for p in sorted(target[mid]):
                self.ledger.set_owner(p, mid)
        self.target = target

    def join(self, mid: str) -> None:
        self._new_id(mid)
        m = BrokerMember(mid, phase=0.0)
        self.members[mid] = m
        self.ledger.add_member(mid)
        self.ledger.begin()
        self.tally.broker(costs.FIND_COORDINATOR, mid)  # its heartbeats: count_heartbeats
        self.engine.after(JOINER_START_S * self.jitter() + self.half_request_s(), self._joined, m)

    def _joined(self, m: BrokerMember) -> None:
        m.phase = m.since = self.engine.now  # its heartbeats run from its first one
        self._retarget()
        self.ledger.end()

    def leave(self, mid: str) -> None:
        """Revoke everything, then a leave heartbeat (member epoch -1; a static member's -2)."""
        m = self.members[mid]
        self.ledger.begin()
        delay = self.revoke_fetching(m, set(m.owned), count_pause=False)
        self.tally.broker(costs.CONSUMER_GROUP_HEARTBEAT, mid)
        arrives = delay + self.half_request_s()
        if self.static:
            self.engine.after(arrives, self._left_for_a_while, m)
        else:
            self.engine.after(arrives, self._removed, m)

    def _left_for_a_while(self, m: BrokerMember) -> None:
        """Epoch -2: the member stays with its assignment and its session timer runs on from
        its last regular heartbeat; it is fenced when the timer runs out."""
        now = self.engine.now
        m.alive = False
        m.until = now
        self.ledger.member_died(m.mid)
        last = next_beat(m, now, self.hb)
        if last > now:
            last -= self.hb
        expiry = max(now, last + self.cfg.session_timeout_s)
        self.engine.at(expiry, self._removed, m)

    def crash(self, mid: str, _expiry_s: float) -> None:
        m = self.members[mid]
        m.alive = False
        m.until = 0.0
        self.ledger.member_died(mid)
        self.ledger.begin()
        self.engine.after(self.cfg.session_timeout_s * self.cal.broker_session_check_factor,
                          self._removed, m)

    def _removed(self, m: BrokerMember) -> None:
        m.in_group = False
        if m.until is None:
            m.until = self.engine.now
        self.ledger.member_died(m.mid)
        self.free |= m.assigned
        m.assigned = set()
        self.target.pop(m.mid, None)
        self._retarget()
        self.ledger.end()

    # --- the coordinator -------------------------------------------------------------------------

    def _retarget(self) -> None:
        """Bump the epoch; the new target is ready after the server-side assignor ran."""
        self.epoch += 1
        self.tally.max_attempts = self.epoch
        self.tally.leader_computations += 1
        live = [mid for mid, m in self.members.items() if m.in_group and m.alive]
        compute = self.cal.assign_us_per_member * (len(live) + self.cfg.partitions) / 1e6
        self.ledger.begin()
        self.engine.after(compute, self._target_ready, live)

    def _target_ready(self, live: list[str]) -> None:
        current = {mid: set(self.members[mid].assigned) for mid in live}
        self.target = self._assign(current, live)
        for mid in live:
            m = self.members[mid]
            if self.target[mid] != m.assigned:
                self._unsettle(m)
                self._schedule(m)
        self.ledger.end()

    def _unsettle(self, m: BrokerMember) -> None:
        if not m.unsettled:
            m.unsettled = True
            self.ledger.begin()

    def _settle_if_done(self, m: BrokerMember) -> None:
        target = self.target.get(m.mid, set())
        done = m.assigned == target and m.owned == target and m.inflight == 0
        if m.unsettled and (done or not m.in_group):
            m.unsettled = False
            self.ledger.end()

    def _schedule(self, m: BrokerMember) -> None:
        if m.hb_scheduled or not m.alive or not m.in_group:
            return
        m.hb_scheduled = True
        when = next_beat(m, self.engine.now, self.hb) + self.half_request_s()
        self.engine.at(when, self._heartbeat, m)

    def _heartbeat(self, m: BrokerMember) -> None:
        """The coordinator handles a heartbeat: what to revoke, what it may have now."""
        m.hb_scheduled = False
        if not m.in_group:
            return
        target = self.target.get(m.mid, set())
        revoke = m.assigned - target
        gain = target & self.free
        if gain:
            self.free -= gain
            m.assigned |= gain
        if revoke or gain:
            self.tally.woken.add(m.mid)
            m.inflight += 1
            self.engine.after(self.half_request_s(), self._response, m, revoke, gain)

    def _response(self, m: BrokerMember, revoke: set[int], gain: set[int]) -> None:
        self.reconciled[m.mid] = self.reconciled.get(m.mid, 0) + 1
        self.tally.max_attempts = max(self.tally.max_attempts, self.reconciled[m.mid])
        if gain:
            self.tally.broker(costs.OFFSET_FETCH_REQUEST, m.mid)
            m.inflight += 1
            self.engine.after(2 * self.half_request_s(), self._resume, m, gain)
        if gain and not revoke:  # the new partitions taken: acknowledged at once
            self.tally.broker(costs.CONSUMER_GROUP_HEARTBEAT, m.mid)
            m.rephase(self.engine.now + 2 * self.half_request_s(), beat_now=False)
        if revoke:
            delay = self.revoke_fetching(m, revoke)
            self.tally.broker(costs.CONSUMER_GROUP_HEARTBEAT, m.mid)  # the acknowledgement
            m.rephase(self.engine.now + delay)  # any heartbeat sent restarts the interval
            m.inflight += 1
            self.engine.after(delay + self.half_request_s(), self._acknowledged, m, revoke)
        m.inflight -= 1
        self._settle_if_done(m)

    def _acknowledged(self, m: BrokerMember, revoked: set[int]) -> None:
        m.inflight -= 1
        m.assigned -= revoked
        self.free |= revoked
        for mid, other in self.members.items():
            if other.in_group and self.target.get(mid, set()) & self.free:
                self._schedule(other)
        self._settle_if_done(m)

    def _resume(self, m: BrokerMember, gain: set[int]) -> None:
        m.inflight -= 1
        if m.alive and m.in_group:
            m.owned |= gain
            for p in sorted(gain):
                self.ledger.set_owner(p, m.mid)
        self._settle_if_done(m)

    def finish(self, end: float, window: Window | None = None) -> None:
        self.tally.add_counted(count_heartbeats(self.members.values(), self.hb, end,
                                                start=-self.cfg.count_from_s, window=window))
