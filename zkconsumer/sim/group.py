"""The part every protocol model shares: config, clock, seeded randomness and the counters."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from zkconsumer.sim.config import SimConfig
from zkconsumer.sim.engine import Engine
from zkconsumer.sim.heartbeats import BrokerMember, revoke
from zkconsumer.sim.tally import OwnershipLedger, Tally


@dataclass(frozen=True)
class FormedTicks:
    """What ties the lab's statistics samples to the group's heartbeat schedules
    (:func:`zkconsumer.sim.sampling.draw_windows`): the members' formation answers (member ->
    instant) and the draw of a process's tick lead before them
    (:meth:`zkconsumer.sim.formation.Spread.tick_lead`), or the ticks themselves where the
    formation drew them member by member (``ticks``)."""

    answers: dict[str, float]
    tick_lead: Callable[[random.Random], float | None]
    ticks: dict[str, float] = field(default_factory=dict)


class SimulatedGroup:
    """Base of the legacy, broker-side and KIP-848 group models (one per simulated run)."""

    # Whether the model counts a member's attempts as its JoinGroups in its sampled counting
    # window at its finish, as the lab does whatever look closed the run; otherwise an observer
    # that closed the run early keeps the attempts it had seen by then.
    ATTEMPTS_IN_WINDOW = False

    def __init__(self, cfg: SimConfig, engine: Engine, rng: random.Random, tally: Tally,
                 ledger: OwnershipLedger) -> None:
        self.cfg = cfg
        self.cal = cfg.calibration
        self.engine = engine
        self.rng = rng
        self.tally = tally
        self.ledger = ledger
        # How long before the event the group's last assignment was, where the harness ties
        # the event to it (drawn by simulate from SimConfig.event_after_change_s); None: an
        # unrelated instant.
        self.event_lag_s: float | None = None
        # How many members the group's formation left as stragglers (zkconsumer.sim.formation):
        # a validation plan judges the runs after such a formation apart from the others.
        self.formed_stragglers = 0

    def jitter(self) -> float:
        """A sampled duration's factor: normal around 1 with the calibration's coefficient of
        variation (``jitter_cv``), kept within 0.2 to 3; exactly 1 when it is 0."""
        cv = self.cal.jitter_cv
        return 1.0 if cv <= 0 else min(3.0, max(0.2, self.rng.gauss(1.0, cv)))

    def half_request_s(self) -> float:
        """One way of a broker request (half its measured round trip), jittered."""
        return self.cal.broker_request_ms / 2000.0 * self.jitter()

    def revoke_fetching(self, m: BrokerMember, partitions: set[int],
                        count_pause: bool = True) -> float:
        """A broker-side member stops fetching ``partitions`` (committing first when the
        group auto-commits: a round trip); returns how long that takes."""
        return revoke(m, partitions, self.tally, self.ledger, self.cal.revoke_ms,
                      (lambda: 2 * self.half_request_s()) if self.cfg.auto_commit else None,
                      count_pause)

    def formed_ticks(self) -> FormedTicks | None:
        """Where the members' statistics ticks stand against the formation; None (the
        default): unrelated to it, or no formation modelled."""
        return None
