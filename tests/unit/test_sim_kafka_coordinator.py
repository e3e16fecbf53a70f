"""The simulator's Apache Kafka 2.4 coordinator profile follows the coordinator's rules."""

from __future__ import annotations

import pytest

from zkconsumer.sim import SimConfig, simulate
from zkconsumer.sim.heartbeats import BrokerMember
from zkconsumer.sim.kafka_coordinator import (
    PROTOCOLS,
    base_protocol,
    initial_delay_end,
    last_beat_before,
)

SESSION_S, HB_S = 6.0, 2.0


def run(protocol: str, event: str, seed: int, members: int = 4, partitions: int = 8):
    return simulate(SimConfig(protocol=protocol, members=members, partitions=partitions,
                              event=event, seed=seed, heartbeat_interval_ms=int(HB_S * 1000),
                              session_timeout_ms=int(SESSION_S * 1000), member_order="start",
                              victim_rank=members - 1))


def test_the_profile_is_selected_by_its_own_protocol_names():
    assert PROTOCOLS == ("kafka-eager-range", "kafka-cooperative-sticky", "kafka-static-range")
    assert base_protocol("kafka-cooperative-sticky") == "cooperative-sticky"
    with pytest.raises(ValueError, match="kafka-eager-roundrobin"):
        SimConfig(protocol="kafka-eager-roundrobin", members=4, partitions=8, event="join")


def test_the_initial_delay_waits_after_each_arrival_up_to_the_rebalance_timeout():
    assert initial_delay_end([0.0], 3.0, 300.0) == 3.0
    assert initial_delay_end([0.0, 2.0, 4.5], 3.0, 300.0) == 7.5
    assert initial_delay_end([0.0, 3.5], 3.0, 300.0) == 3.0  # arrived after the wait ended
    assert initial_delay_end([0.0, 2.0, 4.0], 3.0, 5.0) == 5.0
    with pytest.raises(ValueError, match="at least one"):
        initial_delay_end([], 3.0, 300.0)


def test_a_session_expires_from_the_last_heartbeat_not_from_the_kill():
    m = BrokerMember("m", phase=0.5)
    assert last_beat_before(m, 0.0, HB_S) == -1.5
    assert last_beat_before(m, 4.4, HB_S) == 2.5
    assert last_beat_before(m, 4.5, HB_S) == 4.5


@pytest.mark.parametrize("seed", range(1, 6))
def test_an_eager_join_is_one_round_closed_when_everyone_rejoined(seed):
    r = run("kafka-eager-range", "join", seed)
    tansu = run("eager-range", "join", seed)
    # attempts are JoinGroups per member, as the lab counts them: the joiner's first one is
    # answered MEMBER_ID_REQUIRED (KIP-394) and sent again, so one round is two of the joiner's
    assert (r.rebalance_attempts, r.members_paused, r.failed_rebalances) == (2, 4, 0)
    # Everyone learns at its next heartbeat, so the round ends within one interval of the
    # joiner's JoinGroup (start-up and requests aside), not half a session later like Tansu's.
    assert r.time_to_stable_s < tansu.time_to_stable_s


@pytest.mark.parametrize("seed", range(1, 6))
def test_a_cooperative_join_pauses_only_the_owner_that_gives_partitions_up(seed):
    r = run("kafka-cooperative-sticky", "join", seed)
    # two rounds, and the joiner's bounced first JoinGroup (KIP-394): three JoinGroups
    assert (r.rebalance_attempts, r.members_paused, r.lost) == (3, 1, 0)


@pytest.mark.parametrize("seed", range(1, 6))
def test_a_static_member_that_closes_is_noticed_only_when_its_session_expires(seed):
    static = run("kafka-static-range", "leave", seed)
    dynamic = run("kafka-eager-range", "leave", seed)
    assert dynamic.time_to_stable_s < HB_S + 1.0  # LeaveGroup: a round at once
    assert SESSION_S - HB_S <= static.time_to_stable_s
    assert static.coordination_requests > dynamic.coordination_requests  # heartbeats meanwhile


@pytest.mark.parametrize("seed", range(1, 6))
def test_a_crash_is_noticed_a_session_after_the_last_heartbeat(seed):
    r = run("kafka-eager-range", "crash", seed)
    assert SESSION_S - HB_S <= r.time_to_stable_s <= SESSION_S + HB_S + 1.0
    assert (r.rebalance_attempts, r.members_paused, r.lost) == (1, 3, 0)


def test_a_group_formed_by_one_round_heartbeats_in_step():
    import random

    from zkconsumer.sim.engine import Engine
    from zkconsumer.sim.kafka_coordinator import KafkaCoordinatorGroup
    from zkconsumer.sim.tally import OwnershipLedger, Tally

    cfg = SimConfig(protocol="kafka-eager-range", members=8, partitions=8, event="join",
                    heartbeat_interval_ms=2000)
    engine = Engine()
    group = KafkaCoordinatorGroup(cfg, engine, random.Random(7), Tally(),
                                  OwnershipLedger(engine, 8))
    group.setup([f"m{i}" for i in range(8)])
    phases = [m.phase for m in group.members.values()]
    assert max(phases) - min(phases) < 0.05  # a request's latency, not a heartbeat interval
