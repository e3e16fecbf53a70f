"""The Tansu 0.6.0 eager profile (``tansu-eager-range``): the coordinator's source rules."""

from __future__ import annotations

import pytest

from zkconsumer.sim import Calibration, SimConfig, simulate
from zkconsumer.sim.tansu_eager import PAUSE_S, TansuEagerGroup

# no jitter, so the timings below follow from the rules alone
STEADY = Calibration(jitter_cv=0.0, fetcher_stop_min_ms=0.0, fetcher_stop_max_ms=0.0)
HB_S = 2.0  # a third of the 6 s session


def _run(event: str, seed: int, members: int = 4, partitions: int = 8, **more: object):
    return simulate(SimConfig("tansu-eager-range", members, partitions, event, seed=seed,
                              calibration=STEADY, session_timeout_ms=6000,
                              heartbeat_interval_ms=2000, **more))


@pytest.mark.parametrize("seed", range(5))
def test_a_join_waits_for_the_followers_fixed_pause_and_no_barrier(seed):
    """Every follower's JoinGroup is held 3 s and answered on its own: counted from the
    joiner's JoinGroup (after its start-up), the group is stable after the joiner's pause, and
    never later than one heartbeat interval after it (when the last member learnt of the
    rebalance) plus round trips; there is no join window."""
    r = _run("join", seed)
    start = STEADY.broker_join_start_ms / 1000.0
    assert r.stable and r.lost == 0
    assert start + PAUSE_S <= r.time_to_stable_s <= start + PAUSE_S + HB_S + 0.5
    # the joiner's two JoinGroups (the first is answered MEMBER_ID_REQUIRED) are its attempts
    assert r.rebalance_attempts == 2 and r.leader_computations == 1


@pytest.mark.parametrize("victim_rank", [0, 2])
def test_a_leave_forms_the_next_generation_with_or_without_the_old_leader(victim_rank):
    """The leader (rank 0: the first member) leaving leaves the group without one: the first
    member to rejoin leads, unpaused; a follower leaving keeps the leader."""
    r = _run("leave", 1, member_order="start", victim_rank=victim_rank)
    assert r.stable and r.lost == 0 and r.failed_rebalances == 0
    assert r.rebalance_attempts == 1 and r.leader_computations == 1
    assert PAUSE_S <= r.time_to_stable_s <= PAUSE_S + HB_S + 0.5


def test_members_keep_heartbeating_while_their_join_group_is_held(monkeypatch):
    """The lab's counts (two Heartbeats per member in a round of about 4 s, validation plan 4's
    records) say librdkafka's schedule goes on while Tansu holds a JoinGroup: the model counts
    every scheduled beat, which is more than the same draw without the beats inside the
    members' waits (the timing is the same)."""
    every = _run("join", 3, members=8, partitions=16)
    monkeypatch.setattr(TansuEagerGroup, "QUIET_WHILE_REJOINING", True)
    quiet = _run("join", 3, members=8, partitions=16)
    assert every.time_to_stable_s == quiet.time_to_stable_s
    # 7 followers wait at least the 3 s pause at 2 s intervals: at least one beat each
    assert every.coordination_requests - quiet.coordination_requests >= 7
