"""A KIP-848-style group (``group.protocol=consumer``), modelled from the KIP.

The simulator's ``kip848`` rows carry ``simulated_only``: the model was written when no broker
here implemented ConsumerGroupHeartbeat (Tansu 0.6.0 gives no assignment and no error), and it
is not fitted. The real KIP-848 runs are the lab's ``consumer-uniform`` and ``consumer-range``
on Apache Kafka 4.0.2 (``docs/kip848.md``); validation plan 3 judged this model against the
``consumer-uniform`` ones and it failed (``docs/validation.md``). The model follows the KIP's
reconciliation:

* the coordinator owns the assignment: on a join, a leave or a session timeout it bumps the group
  epoch and computes a new target with its server-side assignor (``uniform``, modelled by
  :func:`~zkconsumer.sim.assignment.sticky_target`), taking ``assign_us_per_member`` per member;
* there is no barrier: each member learns its new target from its own next heartbeat; a member
  that must give partitions up revokes just those (commit, stop fetching) and acknowledges at
  once with an extra heartbeat; a partition becomes assignable when its previous owner has
  acknowledged, and the new owner gets it from its next heartbeat, then fetches its offset;
* members whose target does not change do nothing but heartbeat; nobody ever creates or
  contends for anything, so there are no conflicts.

Requests: one ConsumerGroupHeartbeat per member per interval (counted over lifetimes at the end),
the joiner's first, the acknowledgements, OffsetCommit per revoking member and OffsetFetch per
member given partitions.
"""

from __future__ import annotations

import logging
import random

from zkconsumer.sim import costs
from zkconsumer.sim.assignment import sticky_target
from zkconsumer.sim.config import SimConfig
from zkconsumer.sim.engine import Engine
from zkconsumer.sim.group import SimulatedGroup
from zkconsumer.sim.heartbeats import BrokerMember, count_heartbeats, next_beat, revoke
from zkconsumer.sim.sampling import Window
from zkconsumer.sim.tally import OwnershipLedger, Tally

log = logging.getLogger(__name__)


class Kip848Group(SimulatedGroup):
    """Coordinator-driven incremental assignment with per-member heartbeats."""

    def __init__(self, cfg: SimConfig, engine: Engine, rng: random.Random, tally: Tally,
                 ledger: OwnershipLedger) -> None:
        super().__init__(cfg, engine, rng, tally, ledger)
        self.hb = cfg.heartbeat_interval_s
        self.members: dict[str, BrokerMember] = {}
        self.target: dict[str, set[int]] = {}
        self.free: set[int] = set()
        self.epoch = 0

    def _half(self) -> float:
        cv = self.cal.jitter_cv
        j = 1.0 if cv <= 0 else min(3.0, max(0.2, self.rng.gauss(1.0, cv)))
        return self.cal.broker_request_ms / 2000.0 * j

    # --- set-up and the event ------------------------------------------------------------------

    def setup(self, ids: list[str]) -> None:
        target = sticky_target({}, ids, self.cfg.partitions)
        for mid in ids:
            m = BrokerMember(mid, phase=self.rng.uniform(0.0, self.hb))
            self.members[mid] = m
            self.ledger.add_member(mid)
            m.owned = set(target[mid])
            m.assigned = set(target[mid])
            for p in sorted(target[mid]):
                self.ledger.set_owner(p, mid)
        self.target = target

    def join(self, mid: str) -> None:
        m = BrokerMember(mid, phase=0.0)
        self.members[mid] = m
        self.ledger.add_member(mid)
        self.ledger.begin()
        self.tally.broker(costs.FIND_COORDINATOR, mid)  # its heartbeats: count_heartbeats
        self.engine.after(self.cal.broker_join_start_ms / 1000.0 + self._half(), self._joined, m)

    def _joined(self, m: BrokerMember) -> None:
        m.phase = m.since = self.engine.now  # its heartbeats run from its first one
        self._retarget()
        self.ledger.end()

    def leave(self, mid: str) -> None:
        """Revoke everything, then a leave heartbeat (member epoch -1)."""
        m = self.members[mid]
        self.ledger.begin()
        delay = self._revoke(m, set(m.owned), count_pause=False)
        self.tally.broker(costs.CONSUMER_GROUP_HEARTBEAT, mid)
        self.engine.after(delay + self._half(), self._removed, m)

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
        self.target = sticky_target(current, live, self.cfg.partitions)
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
        when = next_beat(m, self.engine.now, self.hb) + self._half()
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
            self.engine.after(self._half(), self._response, m, revoke, gain)

    def _response(self, m: BrokerMember, revoke: set[int], gain: set[int]) -> None:
        if gain:
            self.tally.broker(costs.OFFSET_FETCH_REQUEST, m.mid)
            m.inflight += 1
            self.engine.after(2 * self._half(), self._resume, m, gain)
        if revoke:
            delay = self._revoke(m, revoke)
            self.tally.broker(costs.CONSUMER_GROUP_HEARTBEAT, m.mid)  # the acknowledgement
            m.inflight += 1
            self.engine.after(delay + self._half(), self._acknowledged, m, revoke)
        m.inflight -= 1
        self._settle_if_done(m)

    def _revoke(self, m: BrokerMember, partitions: set[int], count_pause: bool = True) -> float:
        """Stop fetching ``partitions`` (commit first); returns how long it takes."""
        return revoke(m, partitions, self.tally, self.ledger, self.cal.revoke_ms,
                      (lambda: 2 * self._half()) if self.cfg.auto_commit else None, count_pause)

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
