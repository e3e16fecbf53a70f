"""``simulate(config) -> SimResult``: one event in one group, deterministic for a seed.

A pure function of its argument (no I/O, no wall clock, no global state), so Spark can map it
over a grid. The run: build a stable group of ``config.members`` (random member ids from the
seed, as the real consumer ids are random: a joiner lands at a random rank; or ids in start
order, ``SimConfig.member_order``, where it ranks last), apply the event at
t = 0, and run until nothing is left to happen (or ``max_time_s``). A crash's session expiry
(ZooKeeper family) is drawn from the kill's ping and tick phases: :mod:`zkconsumer.sim.liveness`.
"""

from __future__ import annotations

import logging
import random

from zkconsumer.sim.config import SimConfig
from zkconsumer.sim.engine import Engine
from zkconsumer.sim.formation import processes_of
from zkconsumer.sim.liveness import zk_expiry_for_kill
from zkconsumer.sim.models import GroupModel, model_for
from zkconsumer.sim.observation import Observation, run_observed
from zkconsumer.sim.result import SimResult
from zkconsumer.sim.sampling import Window, draw_windows
from zkconsumer.sim.tally import OwnershipLedger, Tally

log = logging.getLogger(__name__)


def member_ids(rng: random.Random, count: int) -> list[str]:
    """Distinct ids shaped like the legacy default ``<group>_<host>-<ms>-<uuid8>``."""
    ids: dict[str, None] = {}
    while len(ids) < count:
        ids[f"g_host-{rng.getrandbits(32):08x}"] = None
    return list(ids)


def group_ids(rng: random.Random, members: int, order: str) -> list[str]:
    """``members`` ids, then the joiner's; in ``start`` order the joiner's sorts last.

    Real ids sort in start order when they carry a start time (the legacy default id, members
    on one host) or a sequence number (the lab's names): the newest member then has the
    highest rank, which decides whose partitions a joiner takes.
    """
    ids = member_ids(rng, members + 1)
    return sorted(ids) if order == "start" else ids


def pick_victim(rng: random.Random, ids: list[str], rank: int | None) -> str:
    """The member that leaves or crashes: the one at ``rank`` among the sorted ids, or random."""
    if rank is None:
        return rng.choice(ids)
    return sorted(ids)[rank]


def sampled_windows(config: SimConfig, members: list[str], observation: Observation,
                    stable_at: float, model: GroupModel) -> Window:
    """Each broker member's counting window as the lab's statistics samples make it
    (:mod:`zkconsumer.sim.sampling`): tied to the group's formation where the model formed
    it (``model.formed_ticks()``), else one phase per client process, drawn from a stream of
    its own; a joiner's samples start at the event."""
    interval = observation.sample_interval_s
    assert interval is not None
    formed = model.formed_ticks()
    windows = draw_windows(members, processes_of(config, len(members)), interval,
                           observation.count_after_s, config.seed,
                           formed.answers if formed else None,
                           formed.tick_lead if formed else None,
                           formed.ticks if formed else None)
    return lambda mid: windows.window(mid, stable_at)


def _model(config: SimConfig, engine: Engine, rng: random.Random, tally: Tally,
           ledger: OwnershipLedger) -> GroupModel:
    """The protocol's model, from :data:`zkconsumer.sim.models.MODELS`."""
    return model_for(config.protocol)(config, engine, rng, tally, ledger)


def simulate(config: SimConfig, observation: Observation | None = None) -> SimResult:
    """Simulate ``config.event`` in a stable group; see :class:`SimResult` for the columns.

    With ``observation``, the run ends where a real run's observer would have called the group
    settled (:mod:`zkconsumer.sim.observation`), and reports what it would have seen.
    """
    rng = random.Random(config.seed)
    engine = Engine()
    sampled = observation is not None and observation.sample_interval_s is not None
    tally = Tally(clock=(lambda: engine.now) if sampled else None)  # see sampled_windows
    ledger = OwnershipLedger(engine, config.partitions)
    model = _model(config, engine, rng, tally, ledger)
    ids = group_ids(rng, config.members, config.member_order)
    if config.event_after_change_s is not None:  # a stream of its own: other draws unchanged
        model.event_lag_s = random.Random(config.seed * 7919 + 29).uniform(
            *config.event_after_change_s)
    model.setup(ids[:config.members])
    ledger.forget_changes()
    if config.event == "join":
        engine.at(0.0, model.join, ids[-1])
    else:
        victim = pick_victim(rng, ids[:config.members], config.victim_rank)
        if config.event == "leave":
            engine.at(0.0, model.leave, victim)
        else:
            cal = config.calibration
            expiry = zk_expiry_for_kill(rng, config.session_timeout_s, cal.zk_tick_ms / 1000.0,
                                        cal.session_expiry_factor)
            engine.at(0.0, model.crash, victim, expiry)
    closed = None
    seen_attempts, seen_conflicts = None, None
    if observation is None:
        settled = engine.run(config.max_time_s)
    else:
        hosts = dict(zip(ids, processes_of(config, len(ids)), strict=True))
        settled, closed = run_observed(engine, ledger, observation, config.seed,
                                       config.max_time_s, hosts)
        if closed is not None and closed.early:
            # the run's records window ends at the look that closed; its requests count on
            seen_attempts, seen_conflicts = tally.max_attempts, tally.conflicts
            engine.run(max(engine.now, closed.stable_at + observation.count_after_s))
    if not settled:
        log.warning("%s N=%d P=%d %s seed=%d: still running at %.0f s (max_time_s)",
                    config.protocol, config.members, config.partitions, config.event,
                    config.seed, config.max_time_s)
    ledger.finish()
    stable_at = ledger.stable_at if closed is None else closed.stable_at
    count_until = config.count_until_s
    if closed is not None and closed.early and observation is not None:
        count_until = observation.count_after_s  # the observer's own counting window
    window = None
    if sampled and stable_at is not None:
        window = sampled_windows(config, ids[:config.members], observation, stable_at,
                                 model)
    finish = getattr(model, "finish", None)
    if finish is not None:  # steady-state requests (heartbeats) up to the counting window's end
        finish(stable_at + count_until if stable_at is not None else engine.now, window)
    broker_requests = tally.broker_requests if window is None else tally.broker_in(window)
    zk_reads, zk_writes = tally.zk_reads, tally.zk_writes
    if ledger.by_fetch and stable_at is not None:  # the real counts' window (tally.py)
        zk_reads, zk_writes = tally.zk_until(stable_at + count_until)
    result = SimResult(
        config=config,
        coordination_requests=zk_reads + zk_writes + broker_requests,
        rebalance_attempts=(tally.max_attempts
                            if seen_attempts is None or model.ATTEMPTS_IN_WINDOW
                            else seen_attempts),
        conflicts=tally.conflicts if seen_conflicts is None else seen_conflicts,
        time_to_stable_s=stable_at,
        members_paused=len(tally.paused),
        failed_rebalances=tally.failed_rebalances,
        lost=ledger.unowned(),
        watch_notifications=tally.watch_notifications,
        rollbacks=tally.rollbacks,
        zk_reads=zk_reads,
        zk_writes=zk_writes,
        members_woken=len(tally.woken),
        attempts_total=tally.attempts_total,
        leader_computations=tally.leader_computations,
        registration_reads=tally.registration_reads,
        max_unowned_s=ledger.max_unowned_s,
        sim_time_s=engine.now,
        sim_events=engine.events,
        zk_operations=dict(tally.zk_operations),
        member_phases=tally.member_phases(),
        joiner_phases=tally.joiner_phases(),
        formation_stragglers=model.formed_stragglers,
    )
    log.debug("simulated %s: %s", config.protocol, result.row())
    return result
