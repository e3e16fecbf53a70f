"""The Tansu eager profile (``tansu-eager-range``): the coordinator's source rules, as built
for the lab."""

from __future__ import annotations

import dataclasses
import random

import pytest

from zkconsumer.sim import Calibration, SimConfig, simulate
from zkconsumer.sim.engine import Engine
from zkconsumer.sim.simulate import group_ids
from zkconsumer.sim.tally import OwnershipLedger, Tally
from zkconsumer.sim.tansu_eager import LOOK_S, TansuEagerGroup, join_hold_s, sync_wait_s

# no jitter, so the timings below follow from the rules alone
STEADY = Calibration(jitter_cv=0.0, fetcher_stop_min_ms=0.0, fetcher_stop_max_ms=0.0)
HB_S = 2.0  # a third of the 6 s session
HOLD_S = join_hold_s(6.0)


def _run(event: str, seed: int, members: int = 4, partitions: int = 8, **more: object):
    return simulate(SimConfig("tansu-eager-range", members, partitions, event, seed=seed,
                              calibration=STEADY, session_timeout_ms=6000,
                              heartbeat_interval_ms=2000, **more))


@pytest.mark.parametrize("seed", range(5))
def test_a_join_waits_for_each_members_hold_and_no_barrier(seed):
    """Every JoinGroup is held 3 s and answered on its own: counted from the joiner's
    JoinGroup (after its start-up), the group is stable after the joiner's hold, and never
    later than one heartbeat interval after it (when the last member learnt of the rebalance)
    plus one look for a SyncGroup that came before the generation was formed; there is no
    join window."""
    r = _run("join", seed)
    start = STEADY.broker_join_start_ms / 1000.0
    assert r.stable and r.lost == 0
    assert start + HOLD_S <= r.time_to_stable_s <= start + HOLD_S + HB_S + LOOK_S + 0.1
    # the joiner's two JoinGroups (the first is answered MEMBER_ID_REQUIRED) are its attempts
    assert r.rebalance_attempts == 2 and r.leader_computations == 1


@pytest.mark.parametrize("victim_rank", [0, 2])
def test_a_leave_forms_the_next_generation_with_or_without_the_old_leader(victim_rank):
    """The leader (rank 0: the first member) leaving leaves the group without one: the first
    member to rejoin leads; a follower leaving keeps the leader."""
    r = _run("leave", 1, member_order="start", victim_rank=victim_rank)
    assert r.stable and r.lost == 0 and r.failed_rebalances == 0
    assert r.rebalance_attempts == 1 and r.leader_computations == 1
    assert HOLD_S <= r.time_to_stable_s <= HOLD_S + HB_S + LOOK_S + 0.1


def test_members_keep_heartbeating_while_their_join_group_is_held(monkeypatch):
    """The lab's counts (two Heartbeats per member in a round of about 4 s, validation plan 4's
    records) say librdkafka's schedule goes on while Tansu holds a JoinGroup: the model counts
    every scheduled beat, which is more than the same draw without the beats inside the
    members' waits (the timing is the same)."""
    every = _run("join", 3, members=8, partitions=16)
    monkeypatch.setattr(TansuEagerGroup, "QUIET_WHILE_REJOINING", True)
    quiet = _run("join", 3, members=8, partitions=16)
    assert every.time_to_stable_s == quiet.time_to_stable_s
    # 7 followers wait at least the 3 s hold at 2 s intervals: at least one beat each
    assert every.coordination_requests - quiet.coordination_requests >= 7


def test_the_coordinators_looks_follow_the_session_timeout():
    # the build's source: JoinGroups re-applied each second until half the session has
    # passed, a follower's SyncGroup until 0.8 of it
    assert (join_hold_s(6.0), join_hold_s(5.0), join_hold_s(10.0)) == (3.0, 3.0, 5.0)
    assert sync_wait_s(6.0) == pytest.approx(4.8)


def test_a_sync_group_before_the_generation_is_formed_waits_for_the_next_look():
    """The joiner's JoinGroup is held from the event, the others' from their next heartbeat
    (after it): the joiner's SyncGroup comes before the leader's formed the generation and is
    answered at a later look, whole seconds after its hold ended (the real rounds' extra
    second)."""
    start = STEADY.broker_join_start_ms / 1000.0
    for seed in range(6):
        cfg = SimConfig("tansu-eager-range", 6, 12, "join", seed=seed, calibration=STEADY,
                        session_timeout_ms=6000, heartbeat_interval_ms=2000,
                        member_order="start")
        rng, engine = random.Random(seed), Engine()
        ledger = OwnershipLedger(engine, cfg.partitions)
        group = TansuEagerGroup(cfg, engine, rng, Tally(), ledger)
        ids = group_ids(rng, cfg.members, cfg.member_order)
        group.setup(ids[:cfg.members])
        engine.at(0.0, group.join, ids[-1])
        assert engine.run(cfg.max_time_s)
        joiner_answered = [t for t, mid in group.answers if mid == ids[-1]]
        assert len(joiner_answered) == 1
        looks = (joiner_answered[0] - start - HOLD_S) / LOOK_S
        assert round(looks) >= 1 and looks == pytest.approx(round(looks), abs=0.01)


@pytest.mark.parametrize("seed", range(4))
def test_in_the_labs_formation_the_first_answered_member_leads_and_no_follower_waits(
        seed, monkeypatch):
    """The leader formed the group, so the lab's formation answered it first; in a round every
    member rejoins at its next heartbeat, no follower's SyncGroup then comes before the
    leader's, and only the joiner (held from the event) can wait a look: at N = 48 on 24
    partitions the joiner gets nothing and every real join of a formation without stragglers
    was stable one hold after the members learnt of it (a straggler, whose schedule runs a
    second after the leader's, rejoins first and waits: the test below)."""
    from zkconsumer.scenarios.timing import Timing
    from zkconsumer.sim import formation
    from zkconsumer.spark.herd.validate import lab_sim_config

    monkeypatch.setattr(TansuEagerGroup, "FORMATION",
                        dataclasses.replace(formation.TANSU, straggler_share=0.0))

    cal = dataclasses.replace(STEADY, broker_join_start_ms=5.0)  # as measured: a few ms
    cfg = lab_sim_config("tansu-eager-range", 48, 24, "join", seed, cal, 6000, 2, Timing(), None)
    rng = random.Random(cfg.seed)
    engine, tally = Engine(), Tally()
    group = TansuEagerGroup(cfg, engine, rng, tally, OwnershipLedger(engine, cfg.partitions))
    group.event_lag_s = 3.1
    ids = group_ids(rng, cfg.members + 1, cfg.member_order)
    group.setup(ids[:cfg.members])
    assert group._leader == min(ids[:cfg.members], key=group.formed_at.__getitem__)
    engine.at(0.0, group.join, ids[-1])
    assert engine.run(60.0)
    followers = [at for at, mid in group.answers if mid != ids[-1]]
    assert len(followers) == cfg.members
    # one hold after each member's JoinGroup, which came at its next heartbeat after the
    # joiner's (< 2 s): none waited a look for the leader's SyncGroup
    assert max(followers) < 0.005 + HB_S + HOLD_S + 0.2


def test_after_a_formation_with_stragglers_an_eager_join_waits_at_least_a_look_more(
        monkeypatch):
    """Every member but the stragglers heartbeats a second before the event and learns of the
    join a second later; the stragglers rejoin first, before the leader's SyncGroup, and wait
    a look (the real joins after such a formation settled one or two looks later)."""
    from zkconsumer.scenarios.timing import Timing
    from zkconsumer.sim import formation
    from zkconsumer.spark.herd.scoring import HERD_OBSERVATION
    from zkconsumer.spark.herd.validate import lab_sim_config

    cal = dataclasses.replace(STEADY, broker_join_start_ms=5.0)

    def times(share: float) -> list[float]:
        monkeypatch.setattr(TansuEagerGroup, "FORMATION",
                            dataclasses.replace(formation.TANSU, straggler_share=share))
        return [simulate(lab_sim_config("tansu-eager-range", 12, 24, "join", seed, cal, 6000,
                                        2, Timing(), None), HERD_OBSERVATION).time_to_stable_s
                for seed in range(6)]

    on_time, late = times(0.0), times(1.0)
    assert min(late) > max(on_time) + 0.9 * formation.TANSU.look_s
