"""The real runs' observer in the simulator: a join that moves nothing closes at once."""

from __future__ import annotations

import pytest

from zkconsumer.sim import SimConfig, simulate
from zkconsumer.sim.observation import Observation

OBSERVER = Observation(check_interval_s=0.5, quiet_s=3.0, count_after_s=1.3)


@pytest.mark.parametrize("protocol", ["eager-range", "cooperative-sticky"])
def test_a_joiner_with_nothing_to_get_is_observed_stable_at_once(protocol):
    cfg = SimConfig(protocol, 24, 6, "join", seed=4, member_order="start")
    unobserved = simulate(cfg)
    observed = simulate(cfg, OBSERVER)
    # run to its end, the model rebalances (eager: everybody revokes) ...
    assert unobserved.time_to_stable_s is not None and unobserved.time_to_stable_s > 0.5
    # ... but the real observer calls the group settled before the joiner's JoinGroup lands
    assert observed.time_to_stable_s == 0.0
    assert observed.members_paused == 0
    assert observed.rebalance_attempts == 2  # the joiner's two JoinGroups (KIP-394)
    assert observed.coordination_requests < unobserved.coordination_requests


@pytest.mark.parametrize("protocol", ["eager-range", "zk-range"])
def test_an_event_that_moves_partitions_is_observed_to_its_end(protocol):
    cfg = SimConfig(protocol, 8, 40, "join", seed=2, member_order="start")
    assert simulate(cfg, OBSERVER).row() == simulate(cfg).row()


def test_an_observer_setting_must_be_positive():
    with pytest.raises(ValueError, match="quiet_s must be > 0, got 0"):
        Observation(quiet_s=0)


def test_a_round_that_moves_nothing_is_invisible_even_when_the_model_ends_before_a_look():
    # Kafka 2.4's cooperative rules, 48 members over 24 partitions: the joiner gets nothing and
    # no owner revokes, so the real observer sees no change since the event (time 0), however
    # quickly the model's round ended (before its first look)
    from zkconsumer.sim import Calibration
    from zkconsumer.sim.formation import lab_event_after_change_s

    cfg = SimConfig("kafka-cooperative-sticky", 48, 24, "join", seed=0, member_order="start",
                    heartbeat_interval_ms=2000, client_processes=2,
                    calibration=Calibration(broker_join_start_ms=3.0),
                    event_after_change_s=lab_event_after_change_s(3.0))
    unobserved = simulate(cfg)
    assert unobserved.time_to_stable_s is not None and unobserved.time_to_stable_s > 0.3
    observed = simulate(cfg, OBSERVER)
    assert observed.time_to_stable_s == 0.0 and observed.members_paused == 0


# --- the lab's observer: statuses each process publishes, looked at every 0.25 s -------------

STATUS_OBSERVER = Observation(check_interval_s=0.25, quiet_s=3.0, count_after_s=1.3,
                              status_interval_s=0.5)


def test_statuses_published_at_different_instants_can_show_a_partition_twice():
    from zkconsumer.sim.observation import Status, statuses_stable

    before = Status(0.6, (frozenset({0}), frozenset({1})), None)  # a and b, before a move
    after = Status(0.9, (frozenset({1}),), 0.8)  # c, after it took 1 from b
    assert statuses_stable([before], 2)
    assert not statuses_stable([before, after], 2)  # partition 1 held twice: not settled
    idle = Status(0.9, (frozenset(),), None)
    assert statuses_stable([before, idle], 2)  # more members than partitions: one idles
    assert not statuses_stable([Status(0.6, (frozenset({0, 1}),), None), idle], 2)


def _two_members():
    """Members a (process 0) and b (process 1) owning one partition each, changes forgotten,
    one piece of work in flight (the event's)."""
    from zkconsumer.sim.engine import Engine
    from zkconsumer.sim.tally import OwnershipLedger

    engine = Engine()
    ledger = OwnershipLedger(engine, 2)
    for member, partition in (("a", 0), ("b", 1)):
        ledger.add_member(member)
        ledger.set_owner(partition, member)
    ledger.forget_changes()
    ledger.begin()
    return engine, ledger


def _two_members_one_move(seed: int, move_at: float):
    """At ``move_at`` b's partition is taken away and nobody gets it: the group is never
    stable again."""
    from zkconsumer.sim.observation import run_observed

    engine, ledger = _two_members()
    engine.at(move_at, lambda: (ledger.set_owner(1, None), ledger.end()))
    return run_observed(engine, ledger, STATUS_OBSERVER, seed, 60.0, {"a": 0, "b": 1})


@pytest.mark.parametrize("seed", range(8))
def test_a_change_is_seen_only_once_its_process_has_published_it(seed):
    from zkconsumer.sim.observation import publication_phases

    phases = publication_phases(STATUS_OBSERVER, {"a": 0, "b": 1}, seed)
    # fresh statuses: each process's first publication at least 0.5 s after the event
    fresh = [phase + 0.5 for phase in (phases[0], phases[1])]
    first_look = -(-max(fresh) // 0.25) * 0.25  # the first look on the 0.25 s grid after both
    move_at = 1.3
    latest_b = fresh[1] + 0.5 * ((first_look - fresh[1]) // 0.5)  # b's last status by then
    _ended, closed = _two_members_one_move(seed, move_at)
    assert latest_b < move_at  # no published status shows the move by the first look
    assert closed is not None and closed.at == pytest.approx(first_look)
    assert closed.stable_at == 0.0 and closed.early
    # a move before both processes' first fresh statuses is always seen: never settled
    assert _two_members_one_move(seed, 0.1) == (True, None)


def test_a_status_observer_needs_the_members_processes():
    from zkconsumer.sim.engine import Engine
    from zkconsumer.sim.observation import run_observed
    from zkconsumer.sim.tally import OwnershipLedger

    engine = Engine()
    with pytest.raises(ValueError, match="needs the members' processes"):
        run_observed(engine, OwnershipLedger(engine, 1), STATUS_OBSERVER, 0, 10.0, {})


def test_attempts_count_up_to_the_look_that_closed():
    # Kafka 4.0.2's range over random ids, 48 members on 24 partitions, 1 s heartbeats: the
    # joiner ranks among the holders and the shifts begin 0.8 s after the event, after the
    # look that closed on statuses published before them; the lab's window ends at that look
    from zkconsumer.sim.formation import lab_event_after_change_s

    cfg = SimConfig("kip848-range", 48, 24, "join", seed=5, heartbeat_interval_ms=1000,
                    client_processes=2, event_after_change_s=lab_event_after_change_s(3.0))
    unobserved = simulate(cfg)
    observed = simulate(cfg, STATUS_OBSERVER)
    assert unobserved.rebalance_attempts == 2 and unobserved.time_to_stable_s > 1.0
    assert observed.rebalance_attempts == 1 and observed.time_to_stable_s == 0.0


# --- the newer settle rule: a ZooKeeper group is not settled while a member rebalances -------

UNTIL_REBALANCED = Observation(check_interval_s=0.25, quiet_s=3.0, count_after_s=1.3,
                               status_interval_s=0.5, rebalances_ended=True)


def _one_rebalance_that_moves_nothing(observer: Observation, seed: int = 0):
    """Member b is inside a rebalance from 0.1 s to 2.0 s and moves nothing."""
    from zkconsumer.sim.observation import run_observed

    engine, ledger = _two_members()
    engine.at(0.1, lambda: ledger.rebalancing("b", True))
    engine.at(2.0, lambda: (ledger.rebalancing("b", False), ledger.end()))
    return run_observed(engine, ledger, observer, seed, 60.0, {"a": 0, "b": 1})


@pytest.mark.parametrize("seed", range(4))
def test_the_newer_rule_waits_for_a_rebalance_that_moves_nothing(seed):
    from zkconsumer.sim.observation import publication_phases

    _, plain = _one_rebalance_that_moves_nothing(STATUS_OBSERVER, seed)
    assert plain is not None and plain.at < 2.0  # ownership alone: settled mid-rebalance
    _, waited = _one_rebalance_that_moves_nothing(UNTIL_REBALANCED, seed)
    # b's process publishes every 0.5 s from its phase; the first status after 2.0 s shows
    # the rebalance over, and the next look (every 0.25 s) closes
    phase_b = publication_phases(UNTIL_REBALANCED, {"a": 0, "b": 1}, seed)[1]
    published = phase_b + 0.5 * -(-(2.0 - phase_b) // 0.5)
    assert waited is not None
    assert waited.at == pytest.approx(0.25 * -(-published // 0.25))
    assert waited.stable_at == 0.0  # nothing changed hands: no later change to report


def test_a_member_inside_a_rebalance_is_published_until_it_dies():
    from zkconsumer.sim.engine import Engine
    from zkconsumer.sim.observation import publish
    from zkconsumer.sim.tally import OwnershipLedger

    ledger = OwnershipLedger(Engine(), 1)
    for member in ("a", "b"):
        ledger.add_member(member)
    ledger.rebalancing("a", True)
    ledger.rebalancing("b", True)
    assert publish(ledger, ["a", "b"], 1.0).rebalancing == 2
    ledger.member_died("b")  # a dead member is not counted, as the lab counts live ones
    assert publish(ledger, ["a", "b"], 1.0).rebalancing == 1
    ledger.rebalancing("a", False)
    assert publish(ledger, ["a", "b"], 1.0).rebalancing == 0 and ledger.live_rebalancing() == 0


@pytest.mark.parametrize("protocol", ["zk-range", "zk-leader-range"])
def test_a_slow_zookeeper_rebalance_is_observed_to_its_end_under_the_newer_rule(protocol):
    # 30 members on 24 partitions, the joiner gets nothing; with ZooKeeper reads of 50 ms no
    # legacy member's fetchers stop before the first look: ownership alone closes the window
    # there, mid-rebalance; the newer rule waits for every rebalance to end
    from zkconsumer.sim import Calibration

    cfg = SimConfig(protocol, 30, 24, "join", seed=1, member_order="start", client_processes=2,
                    calibration=Calibration(zk_read_service_us=50000))
    whole = simulate(cfg)
    plain = simulate(cfg, STATUS_OBSERVER)
    waited = simulate(cfg, UNTIL_REBALANCED)
    if protocol == "zk-range":  # every member rebalances, and releases what it keeps
        assert plain.time_to_stable_s == 0.0
        assert plain.coordination_requests < whole.coordination_requests / 4
        assert waited.row() == whole.row()
    else:  # the leader mode: nothing moves, so no member rebalances, under either rule
        assert waited.row() == plain.row() and waited.time_to_stable_s == 0.0
