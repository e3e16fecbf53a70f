"""Simulated legacy protocol: the herd, the split brain, and the cost table."""

from __future__ import annotations

import math

import pytest

from zkconsumer.sim import Calibration, SimConfig, simulate
from zkconsumer.sim.costs import clean_join_requests

# No jitter and no fetcher stop: every member releases long before anyone claims.
NO_RACE = Calibration(jitter_cv=0.0, fetcher_stop_min_ms=0.0, fetcher_stop_max_ms=0.0)


def test_a_join_wakes_every_member_and_each_attempt_reads_every_registration():
    n = 12
    r = simulate(SimConfig("zk-range", members=n, partitions=8, event="join", seed=4))
    assert r.watch_notifications == n
    assert r.members_woken == n
    # every attempt (the joiner's included) walked all n + 1 registrations
    assert r.attempts_total >= n + 1
    assert r.registration_reads == r.attempts_total * (n + 1)
    assert r.members_paused == 8  # every member that owned something stopped its fetchers


@pytest.mark.parametrize("protocol", ["zk-range", "zk-roundrobin"])
@pytest.mark.parametrize("members,partitions,brokers", [(4, 8, 1), (16, 8, 2), (5, 17, 3)])
def test_requests_of_a_conflict_free_join_match_the_cost_table(protocol, members, partitions,
                                                               brokers):
    r = simulate(SimConfig(protocol, members, partitions, "join", seed=1, brokers=brokers,
                           calibration=NO_RACE))
    assert r.conflicts == 0 and r.rebalance_attempts == 1
    assert r.coordination_requests == clean_join_requests(members, partitions, brokers)


def test_requests_per_join_grow_quadratically():
    sizes = [4, 8, 16, 32, 64]
    reqs = [simulate(SimConfig("zk-range", n, 8, "join", seed=2)).coordination_requests
            for n in sizes]
    xs = [math.log(n) for n in sizes]
    ys = [math.log(q) for q in reqs]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = (sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
             / sum((x - mx) ** 2 for x in xs))
    assert slope > 1.3, (slope, reqs)


def test_overlapping_attempts_conflict_roll_back_and_retry_after_the_backoff():
    runs = [simulate(SimConfig("zk-range", 4, 8, "join", seed=s)) for s in range(10)]
    racy = [r for r in runs if r.conflicts]
    assert racy, "slow fetcher stops should let a claimer meet an unreleased owner znode"
    for r in racy:
        assert r.rollbacks >= 1
        assert r.rebalance_attempts >= 2
        assert r.time_to_stable_s is not None and r.time_to_stable_s >= 2.0  # the backoff
        assert r.lost == 0


def test_without_overlap_there_is_no_conflict():
    r = simulate(SimConfig("zk-range", 4, 8, "join", seed=0, calibration=NO_RACE))
    assert (r.conflicts, r.rollbacks, r.rebalance_attempts) == (0, 0, 1)


def test_running_out_of_retries_leaves_partitions_unowned():
    runs = [simulate(SimConfig("zk-range", 4, 8, "join", seed=s, rebalance_max_retries=1))
            for s in range(10)]
    failed = [r for r in runs if r.failed_rebalances]
    assert failed
    for r in failed:
        assert r.lost > 0
        assert r.time_to_stable_s is None


def test_a_crash_is_noticed_only_when_the_session_expires():
    r = simulate(SimConfig("zk-range", 6, 12, "crash", seed=3, session_timeout_ms=6000))
    assert r.time_to_stable_s is not None and r.time_to_stable_s > 6.0
    assert r.members_woken == 5
    assert r.lost == 0


def test_a_clean_leave_releases_before_the_others_rebalance():
    r = simulate(SimConfig("zk-range", 6, 12, "leave", seed=3, calibration=NO_RACE))
    assert r.conflicts == 0
    assert r.time_to_stable_s is not None and r.time_to_stable_s < 1.0
    assert r.members_woken == 5


def test_members_sharing_a_process_share_its_cpu():
    alone = simulate(SimConfig("zk-range", 32, 8, "join", seed=5, calibration=NO_RACE))
    shared = simulate(SimConfig("zk-range", 32, 8, "join", seed=5, calibration=NO_RACE,
                                client_processes=1))
    assert shared.coordination_requests == alone.coordination_requests
    assert shared.time_to_stable_s > 5 * alone.time_to_stable_s


def test_changed_offsets_are_committed_when_the_fetchers_close():
    r = simulate(SimConfig("zk-range", 6, 12, "join", seed=1, calibration=NO_RACE,
                           offsets_changed=1.0))
    assert r.coordination_requests == clean_join_requests(6, 12, changed=12)
