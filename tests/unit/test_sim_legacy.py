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


def _shares(members: int, partitions: int) -> list[int]:
    """Partitions per member under range (and roundrobin, one topic): sizes only."""
    q, r = divmod(partitions, members)
    return [q + 1] * r + [q] * (members - r)


def _claims(shares: list[int], brokers: int) -> int:
    """Per claimer: offsets read, owner created, partition state read (k each), and the
    leader finder's broker list and every broker (1 + B, when it claimed anything)."""
    return sum(3 * k + (1 + brokers if k else 0) for k in shares)


def spec_join(members: int, partitions: int, brokers: int = 1, topics: int = 1,
              changed: int = 0) -> int:
    """A conflict-free join, step by step from the legacy spec (not from sim/costs.py).

    All n = N + 1 members run one attempt: their own registration twice (2), the broker list
    and each broker twice (2 + 2B: getCluster, getAllBrokersInCluster), the group's children
    twice, every registration and each topic (2 + n + T). The N old members re-arm their
    children watch (exists and getChildren: 2 each) and release every owner znode (P) after
    committing the changed offsets (c); the joiner registers (its 3 ancestors and itself: 4)
    and arms its watches (exists and children of the group, exists of each topic: 2 + T); then
    every claimer claims its share.
    """
    n = members + 1
    return (n * (2 + 2 * (1 + brokers) + (2 + n + topics)) + 2 * members + partitions
            + changed + 4 + (2 + topics) + _claims(_shares(n, partitions), brokers))


def spec_leave(staying: int, partitions: int, brokers: int = 1, topics: int = 1) -> int:
    """A clean leave: the leaver deletes its owner znodes and registration (o + 1), the M
    staying members re-arm (2 each), release the rest (P - o) and run one attempt each."""
    m = staying
    return (m * (2 + 2 * (1 + brokers) + (2 + m + topics)) + 2 * m + partitions + 1
            + _claims(_shares(m, partitions), brokers))


def test_the_spec_formula_reproduces_the_hand_worked_join_and_leave_at_n_4() -> None:
    # Join of m04 to 4 members, P = 8, one broker: 5 attempts x (2 + 4 + 8) = 70 reads, 4
    # re-arms x 2 = 8, 8 releases, register 4 + 3 watch reads = 7, claims 2,2,2,1,1 -> 3 x 8
    # = 24 plus 5 leader lookups x (1 + 1) = 10: 70 + 8 + 8 + 7 + 34 = 127.
    assert spec_join(4, 8) == 127
    # m04 leaves: 4 attempts x (2 + 4 + 7) = 52, 4 re-arms x 2 = 8, 8 owner deletes + 1
    # registration, claims 2 each: 24 + 4 leader lookups x 2 = 8: 52 + 8 + 9 + 32 = 101.
    assert spec_leave(4, 8) == 101
    # with every member owning one partition or none (M >= P = 8), the closed forms
    for m in (9, 17, 33, 65):
        assert spec_join(m - 1, 8) == m * m + 11 * m + 53
        assert spec_leave(m, 8) == m * m + 11 * m + 49


@pytest.mark.parametrize("protocol", ["zk-range", "zk-roundrobin"])
@pytest.mark.parametrize("members,partitions,brokers", [(4, 8, 1), (16, 8, 2), (5, 17, 3),
                                                        (64, 8, 1)])
def test_requests_of_a_conflict_free_join_match_the_spec(protocol, members, partitions,
                                                         brokers):
    r = simulate(SimConfig(protocol, members, partitions, "join", seed=1, brokers=brokers,
                           calibration=NO_RACE))
    assert r.conflicts == 0 and r.rebalance_attempts == 1
    assert r.coordination_requests == spec_join(members, partitions, brokers)
    assert clean_join_requests(members, partitions, brokers) == r.coordination_requests


@pytest.mark.parametrize("staying,partitions,brokers", [(4, 8, 1), (8, 8, 1), (7, 20, 3),
                                                        (64, 8, 1)])
def test_requests_of_a_conflict_free_leave_match_the_spec(staying, partitions, brokers):
    r = simulate(SimConfig("zk-range", staying + 1, partitions, "leave", seed=1,
                           brokers=brokers, calibration=NO_RACE))
    assert r.conflicts == 0
    assert r.coordination_requests == spec_leave(staying, partitions, brokers)


def test_requests_per_join_grow_quadratically():
    sizes = [4, 8, 16, 32, 64]
    reqs = [simulate(SimConfig("zk-range", n, 8, "join", seed=2)).coordination_requests
            for n in sizes]
    xs = [math.log(n) for n in sizes]
    ys = [math.log(q) for q in reqs]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = (sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
             / sum((x - mx) ** 2 for x in xs))
    # Every attempt reads every registration: the quadratic term takes over as N grows (the
    # linear reads of each attempt, brokers and registrations read twice as the original did,
    # flatten the slope over the small sizes), so the last doubling is well above linear.
    top = math.log(reqs[-1] / reqs[-2]) / math.log(sizes[-1] / sizes[-2])
    assert slope > 1.2 and top > 1.5, (slope, top, reqs)


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
    assert r.coordination_requests == spec_join(6, 12, changed=12)
