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

The lab's observer does not see the group itself: each Spark task publishes its own members'
state every 0.5 s (``task_control.StatusPublisher``, a phase of its own), the coordinating
task looks every 0.25 s (``task_control.wait_for``) and calls the group settled at the first
look where every task's status was published at least one status interval after the event and
the statuses together show a stable group, quiet for ``quiet_s``. A change is seen only once
its task has published it. With ``status_interval_s`` set, :func:`run_observed` looks the same
way, at the statuses its members' processes last published; without, it looks at the group
itself. The run's records window ends at the look that closed, so a model run's attempts and
conflicts count up to :attr:`Closed.at` (``simulate``).

Herd runs made since the lab recorded its settle rule (``settle`` in their ``meta.json``) also
wait, after a ZooKeeper group's event, until no member is inside a rebalance
(:attr:`Observation.rebalances_ended`): each status then counts its members inside one, as the
models of ZooKeeper members mark them (``OwnershipLedger.rebalancing``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
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
    # each client process publishes its members' state this often and the observer looks at
    # the last publications (module docstring); None: it looks at the group itself
    status_interval_s: float | None = None
    # the lab's newer settle rule (``task_control.SETTLE_REBALANCES_ENDED``): not settled while
    # a live member is inside a rebalance of its own (the models of ZooKeeper members say so)
    rebalances_ended: bool = False

    def __post_init__(self) -> None:
        for name in ("check_interval_s", "quiet_s", "count_after_s"):
            if getattr(self, name) <= 0:
                raise ValueError(f"Observation.{name} must be > 0, got {getattr(self, name)}")
        for name in ("sample_interval_s", "status_interval_s"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"Observation.{name} must be > 0 or None, got {value}")


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


@dataclass(frozen=True)
class Status:
    """One process's published state: its live members' partitions and its last change."""

    at: float
    held: tuple[frozenset[int], ...]
    last_change: float | None
    rebalancing: int = 0  # its live members inside a rebalance


def publish(ledger: OwnershipLedger, members: list[str], at: float) -> Status:
    views = [ledger.member_view(m) for m in members]
    changes = [v.changed for v in views if v.changed is not None]
    return Status(at, tuple(v.held for v in views if v.live), max(changes) if changes else None,
                  sum(v.rebalancing for v in views))


def statuses_stable(statuses: list[Status], partitions: int) -> bool:
    """The lab's rule over the published statuses (``task_control.group_stable``): every
    partition held by exactly one live member, every live member holding something unless
    there are fewer partitions than live members."""
    held = [h for s in statuses for h in s.held]
    counts: dict[int, int] = {}
    for h in held:
        for p in h:
            counts[p] = counts.get(p, 0) + 1
    if any(counts.get(p, 0) != 1 for p in range(partitions)) or len(counts) != partitions:
        return False
    return partitions < len(held) or all(held)


def publication_phases(obs: Observation, processes: Mapping[str, int], seed: int
                  ) -> dict[int, float]:
    """Each process's publishing phase within one status interval, from the observer's own
    stream (the model's draws do not move)."""
    assert obs.status_interval_s is not None
    rng = random.Random(seed * 7919 + 17)
    return {p: rng.uniform(0.0, obs.status_interval_s) for p in sorted(set(processes.values()))}


def _run_on_statuses(engine: Engine, ledger: OwnershipLedger, obs: Observation, seed: int,
                     max_time_s: float, processes: Mapping[str, int]
                     ) -> tuple[bool, Closed | None]:
    """The lab's observer (module docstring): publications and looks in time order."""
    interval = obs.status_interval_s
    assert interval is not None
    phases = publication_phases(obs, processes, seed)
    members = {p: [m for m, q in processes.items() if q == p] for p in phases}
    latest: dict[int, Status] = {}
    due = dict(phases)  # each process's next publication
    look = obs.check_interval_s
    ended_by: float | None = None  # a look by which the model had run out of events
    while look <= max_time_s:
        while min(due.values()) <= look:  # the publications before this look, in time order
            p = min(due, key=due.__getitem__)
            if engine.run(due[p]) and ended_by is None:
                ended_by = due[p]
            latest[p] = publish(ledger, members[p], due[p])
            due[p] += interval
        if engine.run(look) and ended_by is None:
            ended_by = look
        shown = [latest[p] for p in phases if p in latest]
        fresh = len(shown) == len(phases) and all(s.at >= interval for s in shown)
        changes = [s.last_change for s in shown if s.last_change is not None]
        last = max(changes) if changes else None
        stable = fresh and statuses_stable(shown, ledger.partitions)
        if obs.rebalances_ended and any(s.rebalancing for s in shown):
            stable = False
        if stable and (last is None or look - last >= obs.quiet_s):
            return True, Closed(look, 0.0 if last is None else last, early=ended_by is None)
        if (not stable and ended_by is not None and fresh
                and all(s.at >= ended_by for s in shown)):
            return True, None  # every status shows the model's end: it never looks stable
        look += obs.check_interval_s
    ended = ended_by is not None
    return ended or engine.run(max_time_s), None


def run_observed(engine: Engine, ledger: OwnershipLedger, obs: Observation, seed: int,
                 max_time_s: float, processes: Mapping[str, int] | None = None
                 ) -> tuple[bool, Closed | None]:
    """Run ``engine`` checking the group like the real observer.

    Returns (the run ended, where the observation closed or None): closed early (the run
    stops there; the caller runs it on to count requests) or, when the model ended between
    two looks, where the observer would have closed on what it ended with. ``processes``
    (member -> client process) is required when the observation has a status interval.
    Call :meth:`OwnershipLedger.forget_changes` after the group is set up and before the event.
    """
    if obs.status_interval_s is not None:
        if not processes:
            raise ValueError("an observation with status_interval_s needs the members' "
                             "processes")
        return _run_on_statuses(engine, ledger, obs, seed, max_time_s, processes)
    t = first_check(obs, seed)
    ended = False
    while t <= max_time_s:
        # once the model has run out of events nothing changes any more, but the observer
        # still looks until it would have closed: a round that moved nothing is invisible to
        # it, so it reports the last change it saw (0: none since the event), not the model's
        # own end of the round
        ended = ended or engine.run(t)
        last = ledger.last_change_at
        looks_stable = ledger.observed_stable() and not (
            obs.rebalances_ended and ledger.live_rebalancing())
        if looks_stable and (last is None or t - last >= obs.quiet_s):
            return True, Closed(t, 0.0 if last is None else last, early=not ended)
        if ended and not looks_stable:
            return True, None
        t += obs.check_interval_s
    return ended or engine.run(max_time_s), None
