"""Tansu 0.6.0's coordinator for cooperative-sticky groups (zkconsumer.sim.tansu): no barrier,
a look at waiting requests once a second, SyncGroups answered once their generation is formed."""

from __future__ import annotations

import random
import statistics
from dataclasses import replace

import pytest

from zkconsumer.sim import Calibration, SimConfig, simulate
from zkconsumer.sim.broker import BrokerGroup
from zkconsumer.sim.engine import Engine
from zkconsumer.sim.heartbeats import BrokerMember, count_heartbeats
from zkconsumer.sim.simulate import group_ids
from zkconsumer.sim.tally import OwnershipLedger, Tally
from zkconsumer.sim.tansu import (
    TansuCooperativeGroup,
    cooperative_assignment,
    cooperative_group,
    count_until,
    first_look_after,
    formation_spread,
    is_balanced,
)
from zkconsumer.sim.tansu_eager import join_hold_s

TANSU = Calibration(coop_coordinator_poll_ms=1000.0, coop_sync_wait_ms=5000.0,
                    coop_formation_stagger_ms=15.0)


def _lab(members: int, event: str = "join", seed: int = 0, cal: Calibration = TANSU,
         **kw: object) -> SimConfig:
    return SimConfig("cooperative-sticky", members, 128, event, seed=seed, calibration=cal,
                     session_timeout_ms=6000, heartbeat_interval_ms=2000, member_order="start",
                     victim_rank=0, auto_commit=False, **kw)


def _run(cfg: SimConfig) -> tuple[TansuCooperativeGroup, OwnershipLedger]:
    """What ``simulate`` does for a join, keeping the model to look at its rounds."""
    rng = random.Random(cfg.seed)
    engine, tally = Engine(), Tally()
    ledger = OwnershipLedger(engine, cfg.partitions)
    group = TansuCooperativeGroup(cfg, engine, rng, tally, ledger)
    ids = group_ids(rng, cfg.members, cfg.member_order)
    group.setup(ids[:cfg.members])
    engine.at(0.0, group.join, ids[-1])
    assert engine.run(cfg.max_time_s)
    return group, ledger


def _revokers_per_round(group: TansuCooperativeGroup) -> list[int]:
    """Owners that revoked after each formation, before the next one (rounds with any)."""
    formed = [t for t, what, _ in group.history if what == "formed"]
    revoked = [t for t, what, _ in group.history if what == "revoked"]
    bounds = [*formed, float("inf")]
    counts = [sum(1 for t in revoked if a <= t < b) for a, b in zip(bounds, bounds[1:],
                                                                    strict=False)]
    return [c for c in counts if c]


# --- the pure parts ------------------------------------------------------------------------


def test_the_default_calibration_keeps_the_barrier_model():
    args = (Engine(), random.Random(0), Tally())
    plain = SimConfig("cooperative-sticky", 4, 8, "join")
    model = cooperative_group(plain, *args, OwnershipLedger(args[0], 8))
    assert type(model) is BrokerGroup
    tansu = SimConfig("cooperative-sticky", 4, 8, "join", calibration=TANSU)
    assert isinstance(cooperative_group(tansu, *args, OwnershipLedger(args[0], 8)),
                      TansuCooperativeGroup)
    # and the barrier model still runs KIP-429's two rounds
    assert simulate(plain).rebalance_attempts == 2 + 1  # + the joiner's bounced JoinGroup


def test_the_leader_withholds_what_another_member_still_reports():
    target = {"a": {0, 1}, "b": {3}, "j": {2}}
    reported = {"a": {0, 1, 2}, "b": {3}, "j": set()}
    # a loses 2 (it sees it missing and revokes it); the joiner does not get it yet
    assert cooperative_assignment(target, reported) == {"a": {0, 1}, "b": {3}, "j": set()}
    # once a reports it has let 2 go, the joiner gets it
    reported["a"] = {0, 1}
    assert cooperative_assignment(target, reported)["j"] == {2}


def test_the_event_is_over_when_the_assignor_would_move_nothing():
    assert not is_balanced({"a": {0, 1, 2}, "b": {3}, "j": set()}, 4)
    assert is_balanced({"a": {0, 1}, "b": {2}, "j": {3}}, 4)


def test_waiting_requests_are_answered_at_a_look():
    assert first_look_after(1.25, 3.0, 1.0) == pytest.approx(4.25)
    assert first_look_after(1.25, 2.5, 1.0) == pytest.approx(4.25)  # the look after 2.5 s
    assert formation_spread(4, 0.015, 1.0) == pytest.approx(0.06)
    assert formation_spread(400, 0.015, 1.0) == 1.0  # at most one look
    assert count_until([0.5, 1.0, 2.5], 1.0) == 2


def test_a_restarted_heartbeat_schedule_counts_exactly():
    m = BrokerMember("a", phase=0.5)
    assert count_heartbeats([m], 2.0, 10.0) == 5  # 0.5, 2.5, 4.5, 6.5, 8.5
    m.rephase(3.0)  # an answer at 3.0: the next heartbeats at 5.0, 7.0, 9.0, none at 3.0
    assert count_heartbeats([m], 2.0, 10.0) == 2 + 3  # 0.5, 2.5; 5.0, 7.0, 9.0
    m.go_quiet(4.0)
    m.resume_beats(8.0)
    assert count_heartbeats([m], 2.0, 10.0) == 2 + 1  # 5.0 and 7.0 not sent


# --- the rule's consequences -----------------------------------------------------------------


def test_owners_give_partitions_up_over_several_rounds_mostly_one_per_round():
    rounds, per_round = [], []
    for seed in range(12):
        group, ledger = _run(_lab(4, seed=seed))
        assert ledger.unowned() == 0 and ledger.stable_at is not None
        revokers = _revokers_per_round(group)
        assert sum(revokers) == 4  # every old member gives up its share, once
        rounds.append(len(revokers))
        per_round += revokers
    assert statistics.mean(rounds) > 2.5  # KIP-429: one round of revocations
    assert statistics.median(per_round) == 1


def test_a_round_is_the_join_wait_plus_a_heartbeat_interval():
    gaps = []
    for seed in range(6):
        group, _ = _run(_lab(4, seed=seed))
        formed = [t for t, what, _ in group.history if what == "formed"]
        gaps += [b - a for a, b in zip(formed, formed[1:], strict=False)]
    # the first after 3 s (the leader revoked and rejoined at once), then 3 + 2 s
    assert statistics.median(gaps) == pytest.approx(5.0, abs=0.05)
    assert min(gaps) == pytest.approx(3.0, abs=0.05)


def test_with_the_members_a_look_apart_the_rounds_are_mostly_the_owners_plus_one():
    """Heartbeats spread over a whole look: two owners are rarely answered at the same look,
    so most joins take a round per owner that must revoke, plus the one that hands over the
    last of its partitions."""
    spread = Calibration(coop_coordinator_poll_ms=1000.0, coop_formation_stagger_ms=1000.0)
    ones = 0
    for seed in range(8):
        group, _ = _run(_lab(4, seed=seed, cal=spread))
        revokers = _revokers_per_round(group)
        ones += revokers == [1, 1, 1, 1]
        handed = [t for t, what, mid in group.history if what == "assigned"]
        assert handed  # the joiner got its partitions
    assert ones >= 6


def test_a_crash_needs_one_round_and_nobody_revokes():
    for seed in range(4):
        r = simulate(_lab(16, "crash", seed=seed))
        assert r.rebalance_attempts == 1 and r.lost == 0 and r.members_paused == 0
        # the survivors learn at the session check (6 s) and are answered ~3 s later
        assert 8.5 < r.time_to_stable_s < 11.0


def test_requests_after_the_counting_window_are_not_counted():
    narrow = simulate(_lab(16, seed=3))
    wide = simulate(_lab(16, seed=3, count_until_s=30.0))
    assert narrow.time_to_stable_s == wide.time_to_stable_s
    assert wide.coordination_requests > narrow.coordination_requests
    assert wide.rebalance_attempts >= narrow.rebalance_attempts


def test_the_joiner_sends_two_join_groups_and_the_model_is_deterministic():
    a, b = simulate(_lab(4, seed=5)), simulate(_lab(4, seed=5))
    assert a.row() == b.row()
    big = simulate(_lab(64, seed=5))
    # N = 64, P = 128: the joiner takes one partition from one owner; rounds: that owner's,
    # then the hand-over (and the joiner's first JoinGroup is answered MEMBER_ID_REQUIRED)
    assert big.rebalance_attempts == 3 and big.members_paused == 1


@pytest.mark.parametrize("event", ["join", "leave", "crash"])
@pytest.mark.parametrize(("members", "partitions"), [(4, 16), (16, 16), (40, 16), (5, 128)])
def test_every_event_settles_with_nothing_lost(event, members, partitions):
    r = simulate(SimConfig("cooperative-sticky", members, partitions, event, seed=2,
                           calibration=TANSU))
    assert r.lost == 0 and r.time_to_stable_s is not None and r.conflicts == 0


def test_a_join_group_is_held_for_half_the_session_timeout_at_one_second_looks():
    # the build's source (zkconsumer.sim.tansu_eager); a fitted window (0.7 sessions here)
    # and a fitted look (250 ms) are not read
    cal = replace(TANSU, broker_join_window_factor=0.7, coop_coordinator_poll_ms=250.0)
    for session_ms, hold in ((6000, 3.0), (12000, 6.0)):
        group, _ = _run(replace(_lab(4, cal=cal), session_timeout_ms=session_ms))
        formed = next(t for t, what, _ in group.history if what == "formed" and t > 0)
        sent = min(t for t in group.view[group.leader].joins if t > 0)
        assert formed - sent == pytest.approx(hold, abs=0.05) == join_hold_s(session_ms / 1000)


def test_under_the_lab_observer_a_joiner_given_nothing_still_counts_its_two_join_groups():
    """The lab counts a classic member's attempts as its JoinGroups in its sampled window,
    whenever its look closed: a joiner given nothing (48 members on 24 partitions) leaves the
    group stable at once, and its first sample still counts both of its JoinGroups."""
    from zkconsumer.scenarios.timing import Timing
    from zkconsumer.spark.herd.scoring import HERD_OBSERVATION
    from zkconsumer.spark.herd.validate import lab_sim_config

    cal = replace(TANSU, broker_join_start_ms=5.0)  # the joiner's start-up as measured: ms
    for seed in range(3):
        r = simulate(lab_sim_config("cooperative-sticky", 48, 24, "join", seed, cal, 6000, 2,
                                    Timing(), None), HERD_OBSERVATION)
        assert r.time_to_stable_s == 0.0
        assert r.rebalance_attempts == 2


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_a_joiner_given_nothing_counts_both_tasks_heartbeats_only_after_stragglers(
        monkeypatch, share):
    """A formation's stragglers are its last change: the lab's event follows them, and every
    other member's heartbeat round then falls just before the event, inside its counting
    window, while in a formation without one it falls just after the window's last sample."""
    from zkconsumer.scenarios.timing import Timing
    from zkconsumer.sim import formation
    from zkconsumer.spark.herd.scoring import HERD_OBSERVATION
    from zkconsumer.spark.herd.validate import lab_sim_config

    monkeypatch.setattr(BrokerGroup, "FORMATION",
                        replace(formation.TANSU, straggler_share=share))
    cal = replace(TANSU, broker_join_start_ms=5.0)
    got = {simulate(lab_sim_config("cooperative-sticky", 48, 24, "join", seed, cal, 6000, 2,
                                   Timing(), None), HERD_OBSERVATION).coordination_requests
           for seed in range(8)}
    if share:  # the joiner's 3 requests and a heartbeat of every member but the stragglers
        assert min(got) >= 3 + 48 - formation.TANSU.stragglers_max, got
    else:
        assert got == {3}
