"""The real runs' observer, for comparing the simulator with them: when a run calls the group
settled, and so what its metrics can see.

A Spark herd run's coordinating task polls the members' statuses (published every 0.5 s) and
calls the group settled at the first check, once every status is fresher than the event plus
one interval, at which every partition is fetched by exactly one member, every live member
fetches (unless there are fewer partitions than live members), and nothing changed for
``quiet_s`` (``zkconsumer.spark.task_control.group_stable``). It then counts requests up to each
member's last sample before the stable instant plus ``SAMPLE_AFTER_S``. Whatever the group does
after that is not in the run's figures.

That matters where the event changes no ownership at first: a joiner that gets nothing (more
members than partitions) leaves the group observably stable at once, and the run closes before
a broker-side rebalance (which starts only when the joiner's JoinGroup arrives, a second or more
later) revokes anything: time to stable 0 and a handful of requests, where a model run to its
own end reports the whole rebalance. :func:`run_observed` runs the engine under the same
checks, so such a model run stops where the real observation did.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from zkconsumer.sim.engine import Engine
from zkconsumer.sim.tally import OwnershipLedger


@dataclass(frozen=True)
class Observation:
    """The real observer's settings (the lab's: ``task_control``, ``Timing.quiet_s``,
    ``spark.herd.metrics.SAMPLE_AFTER_S``)."""

    check_interval_s: float = 0.5
    quiet_s: float = 3.0
    count_after_s: float = 1.3  # requests sent up to this long after the stable instant count
    # the members' request counters are sampled this often, each member's count ending at its
    # own last sample (zkconsumer.sim.sampling); None: one window for every member
    sample_interval_s: float | None = None

    def __post_init__(self) -> None:
        for name in ("check_interval_s", "quiet_s", "count_after_s"):
            if getattr(self, name) <= 0:
                raise ValueError(f"Observation.{name} must be > 0, got {getattr(self, name)}")
        if self.sample_interval_s is not None and self.sample_interval_s <= 0:
            raise ValueError(f"Observation.sample_interval_s must be > 0 or None, got "
                             f"{self.sample_interval_s}")


@dataclass(frozen=True)
class Closed:
    """Where the observation closed: the check instant and the stable instant it reports."""

    at: float
    stable_at: float
    # True: before the model's own end (the run stops there and counts the observer's window);
    # False: the model had already ended, only the stable instant is the observer's
    early: bool = True


def first_check(obs: Observation, seed: int) -> float:
    """The first check that can close: statuses fresh after one interval, published at a
    phase of their own (drawn from a stream apart from the model's, so observing changes
    none of the model's draws)."""
    rng = random.Random(seed * 7919 + 17)
    return obs.check_interval_s + rng.uniform(0.0, obs.check_interval_s)


def run_observed(engine: Engine, ledger: OwnershipLedger, obs: Observation, seed: int,
                 max_time_s: float) -> tuple[bool, Closed | None]:
    """Run ``engine`` checking the group like the real observer.

    Returns (the run ended, where the observation closed or None): closed early (the run
    stops there) or, when the model ended between two looks, where the observer would have
    closed on what it ended with.
    Call :meth:`OwnershipLedger.forget_changes` after the group is set up and before the event.
    """
    t = first_check(obs, seed)
    ended = False
    while t <= max_time_s:
        # once the model has run out of events nothing changes any more, but the observer
        # still looks until it would have closed: a round that moved nothing is invisible to
        # it, so it reports the last change it saw (0: none since the event), not the model's
        # own end of the round
        ended = ended or engine.run(t)
        last = ledger.last_change_at
        looks_stable = ledger.observed_stable()
        if looks_stable and (last is None or t - last >= obs.quiet_s):
            stable = 0.0 if last is None else last
            if not ended and stable + obs.count_after_s > engine.now:
                engine.run(stable + obs.count_after_s)
            return True, Closed(t, stable, early=not ended)
        if ended and not looks_stable:
            return True, None
        t += obs.check_interval_s
    return ended or engine.run(max_time_s), None
