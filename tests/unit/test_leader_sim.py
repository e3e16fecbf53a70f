"""Simulated leader mode: one decider, linear requests, no conflicts, a successor on crash."""

from __future__ import annotations

import math

import pytest

from zkconsumer.sim import Calibration, SimConfig, simulate
from zkconsumer.sim.leader import LeaderGroup

SIZES = [4, 8, 16, 32, 64, 128, 256]


def _slope(xs: list[int], ys: list[int]) -> float:
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    cov = sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True))
    return cov / sum((a - mx) ** 2 for a in lx)


def test_a_join_wakes_the_leader_once_and_every_member_reads_the_record_once():
    n = 12
    r = simulate(SimConfig("zk-leader-range", members=n, partitions=8, event="join", seed=3))
    assert r.leader_computations == 1
    assert r.registration_reads == 1  # only the joiner's registration: the rest is cached
    # one membership notification (the leader) + one record notification per member, plus at
    # most one owner-deletion notification per moved partition (a claim waiting for a release)
    assert 1 + (n + 1) <= r.watch_notifications <= 1 + (n + 1) + 8
    assert r.conflicts == 0 and r.rollbacks == 0 and r.lost == 0 and r.stable


@pytest.mark.parametrize("seed", range(4))
def test_a_joiner_gets_its_share_even_when_the_record_is_published_before_it_finished_joining(
        seed):
    """With watches delivered fast (0.3 ms, as measured here), the leader publishes while the
    joiner is still reading the candidates: the joiner's own read of the record must act on it
    (it once kept the notification as pending and never read again, so nobody owned its part)."""
    n, p = 12, 24
    cal = Calibration(watch_delivery_ms=0.3)
    r = simulate(SimConfig("zk-leader-range", members=n, partitions=p, event="join", seed=seed,
                           calibration=cal))
    # stable: every partition owned by one member, the joiner's share included
    assert r.stable and r.time_to_stable_s < 1.0
    # no conflict: a claim that meets the releaser's owner znode (here, in every seed, with
    # watches this fast) waits for its deletion and tries once more: one more attempt, as the
    # connector's attempt records count it, and never a third
    assert r.lost == 0 and r.conflicts == 0 and r.rebalance_attempts == 2


@pytest.mark.parametrize("event", ["join", "leave", "crash"])
def test_requests_grow_at_most_linearly_while_legacy_grows_faster(event):
    leader = [simulate(SimConfig("zk-leader-range", n, 8, event, seed=5)).coordination_requests
              for n in SIZES]
    legacy = [simulate(SimConfig("zk-range", n, 8, event, seed=5)).coordination_requests
              for n in SIZES]
    assert _slope(SIZES, leader) <= 1.1
    assert _slope(SIZES, legacy) >= 1.3
    assert leader[-1] * 20 < legacy[-1]


def test_leader_crash_hands_over_to_the_next_candidate_only():
    group_size = 10
    cfg = SimConfig("zk-leader-range", group_size, 8, "crash", seed=11)
    r = simulate(cfg)
    assert r.stable and r.lost == 0 and r.conflicts == 0
    # whether or not the victim led, exactly one member computed the new assignment
    assert r.leader_computations == 1
    assert r.registration_reads in (1 - 1, group_size - 1)  # cached, or a takeover read all


def test_a_crashed_leader_is_replaced_and_its_successor_reads_each_registration_once():
    # Pick a seed whose victim is the leader (the first candidate).
    for seed in range(200):
        r = simulate(SimConfig("zk-leader-range", 6, 8, "crash", seed=seed))
        if r.registration_reads == 5:
            break
    else:
        pytest.fail("no seed crashed the leader")
    assert r.leader_computations == 1 and r.stable and r.lost == 0


def test_cooperative_join_pauses_only_donors_and_range_only_changed_members():
    coop = simulate(SimConfig("zk-leader-cooperative-sticky", 16, 32, "join", seed=2))
    # 32 partitions over 17 members: the joiner takes 1 or 2, so 1 or 2 donors stop one each
    assert 1 <= coop.members_paused <= 2 and coop.stable
    rng = simulate(SimConfig("zk-leader-range", 16, 32, "join", seed=2))
    legacy = simulate(SimConfig("zk-range", 16, 32, "join", seed=2))
    assert coop.members_paused < rng.members_paused < legacy.members_paused == 16


def test_the_model_is_registered_for_all_three_protocols():
    from zkconsumer.sim.models import MODELS
    for name in ("zk-leader-range", "zk-leader-sticky", "zk-leader-cooperative-sticky"):
        assert MODELS[name] is LeaderGroup
        assert SimConfig(name, 4, 8, "join").family == "zookeeper"


@pytest.mark.parametrize("event", ["join", "leave", "crash"])
def test_every_request_is_named_by_its_operation(event):
    from zkconsumer.sim.leader_costs import READ_OPERATIONS
    r = simulate(SimConfig("zk-leader-range", 12, 24, event, seed=4))
    ops = r.zk_operations
    assert sum(n for op, n in ops.items() if op in READ_OPERATIONS) == r.zk_reads
    assert sum(n for op, n in ops.items() if op not in READ_OPERATIONS) == r.zk_writes


def test_a_blocked_claim_reads_and_watches_the_owner_znode_then_claims_again():
    """Same join, the donor's release before or after the joiner's claim (its fetcher stop):
    blocked, the joiner reads the owner znode in the way, watches it, and checks the owners
    znode and sends the claim multi once more."""
    def ops(stop_ms: float) -> dict[str, int]:
        cal = Calibration(jitter_cv=0.0, watch_delivery_ms=0.3, fetcher_stop_min_ms=stop_ms,
                          fetcher_stop_max_ms=stop_ms)
        r = simulate(SimConfig("zk-leader-range", 2, 4, "join", seed=1, calibration=cal,
                               member_order="start"))
        return r.zk_operations
    free, blocked = ops(0.0), ops(1500.0)
    grown = {op: blocked.get(op, 0) - free.get(op, 0) for op in set(free) | set(blocked)}
    assert {op: n for op, n in grown.items() if n} == {"getData": 1, "exists": 2, "multi": 1}


def test_an_eager_member_looks_up_the_partitions_it_keeps_again():
    """One broker: a fetcher started costs getChildren + 2 getData (its own leader lookup)."""
    from zkconsumer.sim.leader_costs import fetchers_started
    assert fetchers_started(0, 1) == {}
    assert fetchers_started(2, 3) == {"getChildren": 2, "getData": 8}
    cal = Calibration(jitter_cv=0.0, fetcher_stop_min_ms=0.0, fetcher_stop_max_ms=0.0)

    def ops(protocol: str) -> dict[str, int]:
        return simulate(SimConfig(protocol, 3, 4, "leave", seed=1, calibration=cal,
                                  member_order="start", victim_rank=2)).zk_operations
    # the survivor taking the leaver's partition keeps its own: range starts it again
    eager, coop = ops("zk-leader-range"), ops("zk-leader-cooperative-sticky")
    assert eager["getChildren"] - coop["getChildren"] == 1


def test_the_first_candidate_leads_and_a_follower_leaving_costs_no_takeover():
    cal = Calibration(jitter_cv=0.0)
    # the first member in id order leaves: if it led, its successor reads all 7 others'
    # registrations; if member 1 stood first, the leader reads nobody's (all cached)
    led = simulate(SimConfig("zk-leader-range", 8, 16, "leave", seed=1, calibration=cal,
                             member_order="start", victim_rank=0))
    followed = simulate(SimConfig("zk-leader-range", 8, 16, "leave", seed=1, calibration=cal,
                                  member_order="start", victim_rank=0, first_candidate_rank=1))
    assert led.registration_reads == 7
    assert followed.registration_reads == 0
    assert followed.coordination_requests < led.coordination_requests
    with pytest.raises(ValueError, match=r"first_candidate_rank must lie in \[0, 8\), got 8"):
        SimConfig("zk-leader-range", 8, 16, "leave", first_candidate_rank=8)


def test_in_the_labs_spark_herd_a_member_of_the_second_task_stands_first():
    from zkconsumer.spark.herd.validate import lab_first_candidate_rank

    assert lab_first_candidate_rank(2) == 1
    assert lab_first_candidate_rank(1) == 0
