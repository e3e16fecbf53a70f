"""Simulated broker-side groups: eager, cooperative-sticky and the simulated-only KIP-848."""

from __future__ import annotations

import pytest

from zkconsumer.sim import SimConfig, simulate
from zkconsumer.sim.assignment import full_assignment, sticky_target
from zkconsumer.sim.simulate import member_ids


def test_eager_join_one_leader_computes_and_every_member_pauses():
    n = 10
    r = simulate(SimConfig("eager-range", n, 20, "join", seed=1))
    assert r.leader_computations == 1
    # one round; the joiner's first JoinGroup is bounced with MEMBER_ID_REQUIRED (KIP-394)
    assert r.rebalance_attempts == 2
    assert r.members_paused == n
    assert r.members_woken == n
    assert r.zk_reads == r.zk_writes == r.watch_notifications == 0
    assert r.conflicts == 0 and r.lost == 0


def test_eager_requests_grow_linearly():
    small = simulate(SimConfig("eager-range", 16, 64, "join", seed=1)).coordination_requests
    big = simulate(SimConfig("eager-range", 64, 64, "join", seed=1)).coordination_requests
    assert 3 < big / small < 5


def _movers_on_join(seed: int, members: int, partitions: int) -> set[str]:
    """Members that must give a partition up when one joins (the sticky target)."""
    import random

    ids = member_ids(random.Random(seed), members + 1)
    before = {m: set(ps) for m, ps in full_assignment(ids[:members], partitions, "range").items()}
    after = sticky_target(before, ids, partitions)
    return {m for m in ids[:members] if before[m] - after[m]}


@pytest.mark.parametrize("protocol", ["cooperative-sticky", "kip848"])
def test_members_whose_partitions_do_not_move_never_pause(protocol):
    r = simulate(SimConfig(protocol, 16, 32, "join", seed=2))
    movers = _movers_on_join(2, 16, 32)
    assert 0 < len(movers) < 16
    assert r.members_paused == len(movers)
    assert r.lost == 0 and r.conflicts == 0


def test_cooperative_needs_a_second_round_only_when_partitions_move():
    moving = simulate(SimConfig("cooperative-sticky", 4, 32, "join", seed=1))
    # rounds + the joiner's MEMBER_ID_REQUIRED JoinGroup (KIP-394)
    assert moving.rebalance_attempts == 2 + 1 and moving.max_unowned_s > 0
    nothing_moves = simulate(SimConfig("cooperative-sticky", 32, 8, "join", seed=1))
    assert nothing_moves.rebalance_attempts == 1 + 1 and nothing_moves.members_paused == 0


def test_broker_rebalances_follow_the_session_timeout_not_the_group_size():
    for protocol in ("eager-range", "cooperative-sticky"):
        t = [simulate(SimConfig(protocol, n, 64, "join", seed=1, session_timeout_ms=10_000))
             .time_to_stable_s for n in (4, 32)]
        assert abs(t[0] - t[1]) < 0.5, (protocol, t)
    eager = simulate(SimConfig("eager-range", 8, 16, "join", seed=1, session_timeout_ms=10_000))
    assert 5.0 < eager.time_to_stable_s < 8.0  # Tansu 0.6.0: 6-7 s


@pytest.mark.parametrize("event", ["join", "leave", "crash"])
def test_kip848_never_conflicts_and_is_labelled_simulated_only(event):
    for seed in range(5):
        row = simulate(SimConfig("kip848", 8, 24, event, seed=seed)).row()
        assert row["conflicts"] == 0
        assert row["simulated_only"] is True
        assert row["lost"] == 0 and row["time_to_stable_s"] is not None
        assert row["zk_reads"] == row["zk_writes"] == 0


def test_broker_crash_waits_for_the_session_timeout():
    for protocol in ("eager-range", "cooperative-sticky", "kip848"):
        r = simulate(SimConfig(protocol, 6, 12, "crash", seed=1, session_timeout_ms=6000))
        assert r.time_to_stable_s > 5.0, protocol
        assert r.lost == 0


def test_members_that_miss_the_rebalance_timeout_are_dropped_and_rejoin():
    on_time = simulate(SimConfig("eager-range", 8, 16, "join", seed=1))
    assert on_time.failed_rebalances == 0
    assert on_time.sim_time_s < 60  # the 300 s timeout timer keeps nothing alive
    late = simulate(SimConfig("eager-range", 8, 16, "join", seed=1, rebalance_timeout_ms=1000))
    assert late.failed_rebalances > 0  # heartbeats every 3 s: some learn too late
    assert late.lost == 0  # they rejoin as new members and get partitions again


@pytest.mark.parametrize("quiet", [False, True])
def test_a_rejoining_eager_member_keeps_its_heartbeat_schedule_in_the_count(monkeypatch, quiet):
    """The lab counts every scheduled heartbeat through a rebalance (the barrier model's
    QUIET_WHILE_REJOINING is off); with it on, the beats of the join wait are left out."""
    import math

    from zkconsumer.sim.broker import BrokerGroup

    monkeypatch.setattr(BrokerGroup, "QUIET_WHILE_REJOINING", quiet)
    n, hb = 8, 500
    r = simulate(SimConfig("eager-range", n, 16, "leave", seed=3, heartbeat_interval_ms=hb,
                           auto_commit=False))
    assert r.time_to_stable_s is not None and r.time_to_stable_s > 2.0
    survivors = n - 1
    # LeaveGroup, a JoinGroup and a SyncGroup per survivor, an OffsetFetch per member given
    # partitions (at most every survivor)
    most_without_beats = 1 + 2 * survivors + survivors
    least_beats = survivors * math.floor(r.time_to_stable_s / (hb / 1000))
    assert (r.coordination_requests >= most_without_beats + least_beats) is not quiet
