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
