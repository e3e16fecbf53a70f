"""The legacy group's formation: N members started together, each with the run's retry budget.

The split-brain model starts from a formed group (:meth:`.LegacySplitModel.form`); this module
asks the question before it: do N members started at once form a group at all? In the
original, a member's first rebalance runs inside ``createMessageStreams``; when it fails
``rebalance.max.retries`` times the call throws and the member exits, and its deregistration
makes everybody rebalance again. Whether that happens depends on how far apart the members
register: registered at the same instant, they all read the same group and claim disjoint
shares; registered one after another, an early member holds owner znodes a later member's
share needs when it claims them, and a budget of one attempt has no second try.

The start-up spread is modelled, not fitted: the members of one client process (a Spark task)
start one after another, as the real job spawns them, each taking the calibration's session
set-up (``zk_connect_ms``, measured by ``calibrate``) varied by its ``jitter_cv``; processes
start at the same instant. Everything after registration is the split-brain model's legacy
rebalance (:mod:`.legacy`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from zkconsumer.scenarios.splitbrain import Action, Kind, Plan, member_name, task_of
from zkconsumer.sim.calibration import Calibration
from zkconsumer.sim.splitbrain.legacy import LegacySplitModel
from zkconsumer.sim.splitbrain.simulate import HORIZON_S, stable_at

MIN_CONNECT_FACTOR = 0.1     # a jittered set-up is never shorter than a tenth of the median


@dataclass(frozen=True)
class FormationOutcome:
    """What a simulated formation ended with (the real job's formation verdict)."""

    members: int
    formed: bool             # every member alive and every partition fetched by exactly one
    exited: int              # members whose first rebalance gave up
    time_s: float | None     # the last change of a formed group, from the first start


def start_offsets(members: int, tasks: int, cal: Calibration, rng: random.Random
                  ) -> dict[str, float]:
    """Each member's start, in seconds: the k-th member of a process starts after the k
    set-ups before it in that process (members named and spread over processes as the real
    job does: :func:`.member_name`, :func:`.task_of`)."""
    if members < 1:
        raise ValueError(f"members must be >= 1, got {members}")
    if tasks < 1:
        raise ValueError(f"tasks must be >= 1, got {tasks}")
    connect_s = cal.zk_connect_ms / 1000.0
    clock: dict[int, float] = {}
    out: dict[str, float] = {}
    for i in range(members):
        name = member_name(i)
        proc = task_of(name, tasks)
        out[name] = clock.get(proc, 0.0)
        step = connect_s * max(MIN_CONNECT_FACTOR, rng.gauss(1.0, cal.jitter_cv))
        clock[proc] = out[name] + step
    return out


def formation_plan(members: int, tasks: int, cal: Calibration, rng: random.Random) -> Plan:
    """No member before; every member joins at its start offset."""
    offsets = start_offsets(members, tasks, cal, rng)
    actions = tuple(Action(round(t, 6), name, Kind.JOIN) for name, t in offsets.items())
    return Plan("formation", "zk-range", members, (), actions)


def simulate_formation(members: int, partitions: int, cal: Calibration, session_s: float,
                       backoff_s: float, max_retries: int, tasks: int,
                       rng: random.Random) -> FormationOutcome:
    """One formation of ``members`` started together on ``tasks`` processes."""
    if max_retries < 1:
        raise ValueError(f"max_retries must be >= 1, got {max_retries}")
    pl = formation_plan(members, tasks, cal, rng)
    model = LegacySplitModel(pl, partitions, cal, session_s, backoff_s, max_retries, tasks, rng)
    model.form()
    out = model.run(HORIZON_S)
    exited = sum(1 for m in model.members.values() if m.gone)
    stable = stable_at(out.fetch_intervals, partitions, out.end) if out.converged else None
    formed = exited == 0 and stable is not None
    return FormationOutcome(members, formed, exited,
                            round(stable, 3) if formed and stable is not None else None)


def p_formed(members: int, partitions: int, cal: Calibration, session_s: float,
             backoff_s: float, max_retries: int, tasks: int, seed: int, draws: int) -> float:
    """The share of ``draws`` formations that formed (each draw its own randomness)."""
    if draws < 1:
        raise ValueError(f"draws must be >= 1, got {draws}")
    formed = sum(simulate_formation(members, partitions, cal, session_s, backoff_s,
                                    max_retries, tasks,
                                    random.Random(f"formation/{members}/{seed}/{draw}")).formed
                 for draw in range(draws))
    return formed / draws
