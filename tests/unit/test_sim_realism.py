"""Rules that bring the simulator closer to the real runs: member order, heartbeats, fetcher stops,
Tansu's cooperative rounds, and the settings ``spark validate`` takes from the lab."""

from __future__ import annotations

import random
import statistics

import pytest

from zkconsumer.lab.member_config import lab_heartbeat_interval_ms
from zkconsumer.sim import Calibration, SimConfig, simulate
from zkconsumer.sim.broker import deferred_revokers
from zkconsumer.sim.heartbeats import BrokerMember, count_heartbeats
from zkconsumer.sim.legacy import fetcher_stop_s
from zkconsumer.sim.simulate import group_ids, pick_victim
from zkconsumer.spark.herd.validate import sampled_count_margins

# --- member order and the victim -------------------------------------------------------------


def test_in_start_order_the_joiner_ranks_last():
    for seed in range(20):
        ids = group_ids(random.Random(seed), 5, "start")
        assert ids[-1] == max(ids)
    # random ids put it anywhere
    ranks = {sorted(ids).index(ids[-1])
             for ids in (group_ids(random.Random(s), 5, "random") for s in range(40))}
    assert len(ranks) > 1


def test_the_victim_is_the_member_at_its_rank_or_random():
    ids = ["c", "a", "b"]
    assert pick_victim(random.Random(1), ids, 0) == "a"
    assert pick_victim(random.Random(1), ids, 2) == "c"
    assert pick_victim(random.Random(1), ids, None) in ids
    with pytest.raises(ValueError):
        SimConfig("zk-range", 3, 8, "crash", victim_rank=3)
    with pytest.raises(ValueError):
        SimConfig("zk-range", 3, 8, "join", member_order="alphabetical")


def test_a_joiner_ranked_last_takes_only_the_last_members_partitions():
    r = simulate(SimConfig("eager-range", 4, 128, "join", seed=3, member_order="start"))
    assert r.lost == 0 and r.rebalance_attempts == 1 + 1  # one round; KIP-394's bounce


# --- broker heartbeats ---------------------------------------------------------------------------


def test_no_heartbeats_while_a_join_is_outstanding():
    m = BrokerMember("a", phase=0.5)
    steady = count_heartbeats([m], 2.0, 10.0)
    assert steady == 5  # 0.5, 2.5, 4.5, 6.5, 8.5
    m.go_quiet(3.0)
    m.go_quiet(3.5)  # already quiet: the first JoinGroup counts
    m.resume_beats(7.0)
    assert m.quiet == [(3.0, 7.0)]
    assert count_heartbeats([m], 2.0, 10.0) == steady - 2  # 4.5 and 6.5 not sent


def test_the_counting_margins_add_the_survivors_steady_heartbeats():
    alive = BrokerMember("a", phase=0.25)
    dead = BrokerMember("b", phase=0.25, until=0.0)
    assert count_heartbeats([alive, dead], 1.0, 3.0) == 3 + 0
    # from 0.8 s before the event: the survivor's beat at -0.75 counts; the member killed at
    # the event does not count there (a sampled count of it ends at its last sample before)
    assert count_heartbeats([alive, dead], 1.0, 3.0, start=-0.5) == 3
    assert count_heartbeats([alive, dead], 1.0, 3.0, start=-0.8) == 4
    joiner = BrokerMember("j", phase=1.5, since=1.5)  # first beat one interval after 1.5
    assert count_heartbeats([joiner], 1.0, 3.0, start=-0.5) == 1


def test_the_lab_settings_validate_uses():
    assert lab_heartbeat_interval_ms(6000) == 2000  # a third of the session, as the lab sets
    assert lab_heartbeat_interval_ms(150) == 100
    before, after = sampled_count_margins(1.0)
    assert before == pytest.approx(0.5) and after == pytest.approx(0.8)


def test_a_longer_counting_window_adds_only_heartbeats():
    extras = []
    # the survivors heartbeat nearly in step (zkconsumer.sim.formation), so one seed adds about
    # 0 or 15: the mean needs many seeds
    for seed in range(40):
        base = SimConfig("eager-range", 16, 32, "crash", seed=seed, heartbeat_interval_ms=2000)
        wide = SimConfig("eager-range", 16, 32, "crash", seed=seed, heartbeat_interval_ms=2000,
                         count_from_s=0.5, count_until_s=0.8)
        a, b = simulate(base), simulate(wide)
        assert a.time_to_stable_s == b.time_to_stable_s
        extras.append(b.coordination_requests - a.coordination_requests)
    # 15 survivors, one heartbeat per 2 s each: 0.5 s more before the event adds ~3.75 on
    # average; the 0.8 s after the stable instant add none, since every survivor's schedule
    # restarted at its SyncGroup answer, just before that instant
    assert statistics.mean(extras) == pytest.approx(15 * 0.5 / 2, abs=1.5)


# --- cooperative rounds on a broker that lets few owners revoke per round ---------------------


def test_deferred_revokers():
    assert deferred_revokers(["a", "b", "c"], 0) == []  # the protocol: everyone at once
    assert deferred_revokers(["a", "b", "c"], 1) == ["b", "c"]
    assert deferred_revokers(["a", "b", "c"], 2.0) == ["c"]


def test_cooperative_rounds_follow_the_owners_that_may_revoke_per_round():
    protocol = SimConfig("cooperative-sticky", 4, 128, "join", seed=1, member_order="start")
    assert simulate(protocol).rebalance_attempts == 2 + 1  # + the joiner's bounced JoinGroup
    tansu = Calibration(coop_revokers_per_round=1, coop_round1_extra_factor=0.0,
                        coop_round2_extra_factor=0.0)
    r = simulate(SimConfig("cooperative-sticky", 4, 128, "join", seed=1, member_order="start",
                           calibration=tansu))
    # four owners give partitions up, one per round, then one; + the joiner's bounced JoinGroup
    assert r.rebalance_attempts == 5 + 1
    assert r.lost == 0 and r.members_paused == 4
    crash = simulate(SimConfig("cooperative-sticky", 4, 128, "crash", seed=1, calibration=tansu))
    assert crash.rebalance_attempts == 1  # nobody revokes: the victim's partitions are free


# --- fetcher stops ---------------------------------------------------------------------------


def test_a_fetcher_stop_waits_for_the_poll_or_the_next_message():
    cal = Calibration(fetcher_stop_min_ms=5.0, fetcher_stop_max_ms=105.0)
    idle = [fetcher_stop_s(random.Random(s), cal, 32, 128, 0.0) for s in range(500)]
    busy = [fetcher_stop_s(random.Random(s), cal, 32, 128, 400.0) for s in range(500)]
    assert all(0.005 <= x <= 0.105 for x in idle + busy)
    assert statistics.mean(idle) == pytest.approx(0.055, abs=0.006)
    # 100 messages/s for this member: the wait ends after ~10 ms on average
    assert statistics.mean(busy) < 0.02
    # an idle topic draws exactly what the uniform stop drew before (same random stream)
    rng = random.Random(4)
    assert fetcher_stop_s(rng, cal, 32, 128, 0.0) == random.Random(4).uniform(0.0, 0.1) + 0.005


def test_a_fetcher_stop_under_traffic_waits_for_the_fetch_in_flight():
    cal = Calibration(fetcher_stop_min_ms=5.0, fetcher_stop_max_ms=105.0,
                      fetcher_close_traffic_ms=100.0)
    assert fetcher_stop_s(random.Random(1), cal, 1, 24, 40.0, jitter=0.9) == pytest.approx(0.09)
    # no traffic on its partitions: the poll's remainder and the idle close, as without it
    rng = random.Random(4)
    assert fetcher_stop_s(rng, cal, 1, 24, 0.0) == random.Random(4).uniform(0.0, 0.1) + 0.005


def test_a_restarted_schedule_sends_nothing_at_the_restart():
    # librdkafka restarts its heartbeat timer at the SyncGroup answer: its next beat goes one
    # interval later, nothing at the answer itself
    m = BrokerMember("a", phase=-3.2)         # beats at -1.2, 0.8, ...
    m.rephase(0.9)                             # the answer at 0.9: next beats 2.9, 4.9
    assert count_heartbeats([m], 2.0, 2.8, start=-0.5) == 1     # only the beat at 0.8
    assert count_heartbeats([m], 2.0, 3.0, start=-0.5) == 2     # and 2.9
    joiner = BrokerMember("j", phase=1.5, since=1.5)             # its schedule starts at 1.5
    assert count_heartbeats([joiner], 2.0, 3.4, start=-0.5) == 0
    assert count_heartbeats([joiner], 2.0, 3.6, start=-0.5) == 1


def test_a_restart_with_a_beat_sent_on_it_counts_that_beat():
    # Tansu holds a JoinGroup longer than an interval: the beat that fell due meanwhile goes
    # out on the answer, and the schedule restarts there
    m = BrokerMember("a", phase=-3.2)
    m.rephase(0.9, beat_now=True)
    assert count_heartbeats([m], 2.0, 2.8, start=-0.5) == 2     # 0.8 and the one at 0.9


@pytest.mark.parametrize("protocol", ["eager-range", "tansu-eager-range", "kafka-eager-range"])
def test_every_broker_model_restarts_a_members_schedule_at_its_sync_group_answer(protocol):
    # a client-side rule (librdkafka), whatever the coordinator: after a leave's round every
    # survivor's current schedule starts at its own answer, so its next beat is an interval on
    from zkconsumer.sim.engine import Engine
    from zkconsumer.sim.models import model_for
    from zkconsumer.sim.tally import OwnershipLedger, Tally

    cfg = SimConfig(protocol, 6, 12, "leave", seed=3, session_timeout_ms=6000,
                    heartbeat_interval_ms=2000, client_processes=2)
    engine, tally = Engine(), Tally()
    ledger = OwnershipLedger(engine, cfg.partitions)
    group = model_for(protocol)(cfg, engine, random.Random(3), tally, ledger)
    ids = group_ids(random.Random(3), 6, "random")[:6]
    group.setup(ids)
    before = {mid: m.phase for mid, m in group.members.items()}
    engine.at(0.0, group.leave, ids[0])
    engine.run(30.0)
    survivors = [m for mid, m in group.members.items() if mid != ids[0]]
    for m in survivors:
        restarted_at, old_phase = m.past_phases[-1]
        assert old_phase == before[m.mid]
        assert m.phase == restarted_at > 0.0   # the answer, after the event
