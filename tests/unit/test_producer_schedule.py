"""A legacy member's fetcher stop on the lab producer's schedule, and the fetch round that
``calibrate --delivery-onto`` measures."""

from __future__ import annotations

import pytest

from zkconsumer.calibration.delivery import delivery_round_ms, relative_lags
from zkconsumer.sim import Calibration, SimConfig, simulate
from zkconsumer.sim.legacy import FETCHER_POLL_S, producer_schedule, round_phase
from zkconsumer.sim.producer_schedule import (
    MemberSchedule,
    Schedule,
    leave_stop_end,
    next_after,
    partitions_leave_stop_end,
    partitions_stop_end,
    scheduled_stop_s,
    stop_end,
)

# 40 messages a second over 24 partitions: each partition gets one message every 0.6 s, in
# slot order 25 ms apart; record 0 at 0.0
LAB = Schedule(rate=40.0, partitions=24, phase_s=0.0, round_s=0.0)


def test_a_members_deliveries_are_its_partitions_slots_each_cycle():
    m = MemberSchedule(LAB, (2, 3), 0.0)
    ds = [round(d, 3) for d in m.deliveries(1.0)]
    assert [d for d in ds if 0.0 <= d < 1.3] == [0.05, 0.075, 0.65, 0.675, 1.25, 1.275]
    assert [round(x, 3) for x in m.last_and_next(0.7)] == [0.675, 1.25]


def test_a_fetch_round_delays_each_message_to_the_members_next_round():
    rounds = MemberSchedule(Schedule(40.0, 24, 0.0, 0.05), (2, 3), 0.01)
    # sent at 0.05 and 0.075: received at the rounds 0.06 and 0.11
    assert [round(d, 3) for d in rounds.deliveries(0.3) if 0.0 <= d < 0.3] == [0.06, 0.11]


def test_a_stop_ends_at_the_fetchers_next_poll_boundary_or_its_next_message():
    m = MemberSchedule(LAB, (2, 3), 0.0)
    # last delivery 0.075: boundaries 0.175, 0.275, ...; asked at 0.2 -> 0.275
    assert stop_end(m, 0.2, 0.1) == pytest.approx(0.275)
    # asked at 0.62, boundary 0.675 would come after its next message at 0.65
    assert stop_end(m, 0.62, 0.1) == pytest.approx(0.65)
    assert next_after(0.0, 0.5, 0.25) == 0.75  # strictly after


def test_a_leave_wakes_at_the_consumer_timeout_then_stops_at_the_next_message():
    m = MemberSchedule(LAB, (0, 1), 0.0)  # messages at 0.0 and 0.025 each 0.6 s cycle
    # asked at 0.1: the stream wakes at 0.025 + 0.5 = 0.525; the fetcher's boundary at 0.525
    # is not after the wake, the next (0.625) comes after the message at 0.6
    assert leave_stop_end(m, 0.1, 0.1, 0.5) == pytest.approx(0.6)
    # asked at 0.55: the message at 0.6 wakes it first; its new poll would end at 0.7, the
    # next message (0.625) ends the stop
    assert leave_stop_end(m, 0.55, 0.1, 0.5) == pytest.approx(0.625)


def test_the_schedule_is_used_only_with_a_measured_round_and_traffic():
    cfg = SimConfig("zk-range", 12, 24, "join", seed=3, messages_per_s=40.0)
    assert producer_schedule(cfg, Calibration()) is None
    on = producer_schedule(cfg, Calibration(delivery_round_ms=50.0))
    assert on is not None and on.round_s == 0.05 and 0.0 <= on.phase_s < on.cycle_s
    assert on == producer_schedule(cfg, Calibration(delivery_round_ms=50.0))  # seeded
    idle = SimConfig("zk-range", 12, 24, "join", seed=3)
    assert producer_schedule(idle, Calibration(delivery_round_ms=50.0)) is None
    assert round_phase(3, "m1", 0.05) == round_phase(3, "m1", 0.05) != round_phase(3, "m2", 0.05)


def test_the_event_falls_where_the_lab_put_it_on_the_producers_cycle():
    """With the event's measured times after the producer's first record, a draw places the
    producer so that the event (t = 0) comes one of them after record 0."""
    cal = Calibration(delivery_round_ms=50.0)
    one = SimConfig("zk-leader-range", 48, 24, "leave", seed=3, messages_per_s=40.0,
                    event_after_producer_s=(3.63,))
    on = producer_schedule(one, cal)
    assert on is not None and on.phase_s == pytest.approx(0.57)  # 7 cycles of 0.6 s - 3.63
    measured = (3.62, 3.71, 3.88)
    phases = {round(producer_schedule(SimConfig("zk-leader-range", 48, 24, "leave", seed=s,
                                                messages_per_s=40.0,
                                                event_after_producer_s=measured), cal).phase_s,
                    4) for s in range(30)}
    assert phases == {0.58, 0.49, 0.32}
    with pytest.raises(ValueError, match="event_after_producer_s must be seconds >= 0"):
        SimConfig("zk-range", 12, 24, "join", event_after_producer_s=(3.6, -0.1))


def test_a_leader_leave_locked_to_the_producers_cycle_waits_for_the_consumer_timeout():
    """The lab's N = 48 leader leave came just after the victim's partition got its message,
    run after run, so its stream woke only at its 500 ms timeout: the model placed so is
    slower than one at a uniform phase (plans 21 and 22's measured times, seconds)."""
    from zkconsumer.scenarios.timing import Timing
    from zkconsumer.spark.herd.scoring import HERD_OBSERVATION
    from zkconsumer.spark.herd.validate import lab_sim_config

    cal = Calibration(delivery_round_ms=51.13, fetcher_stop_min_ms=2.44)
    locked = (3.61, 3.63, 3.66, 3.69, 3.71, 3.72, 3.75, 3.79, 3.84, 3.88)

    def median_tts(on_producer: tuple[float, ...]) -> float:
        times = sorted(simulate(lab_sim_config("zk-leader-range", 48, 24, "leave", seed, cal,
                                               6000, 2, Timing(), None, on_producer),
                                HERD_OBSERVATION).time_to_stable_s or 0.0
                       for seed in range(20))
        return (times[9] + times[10]) / 2

    uniform, on_cycle = median_tts(()), median_tts(locked)
    assert on_cycle - uniform > 0.15


def test_scheduled_stops_end_within_a_poll_and_apart():
    cal = Calibration(jitter_cv=0.0, delivery_round_ms=50.0)
    r = simulate(SimConfig("zk-range", 12, 24, "join", seed=1, member_order="start",
                           messages_per_s=40.0, client_processes=2, calibration=cal))
    close = cal.fetcher_stop_min_ms / 1000.0
    # each owner's stop (after its attempt's reads) is no longer than one poll and the close
    stops = [p.stop_s for p in r.member_phases]
    assert len(stops) == 12 and max(stops) < 0.03 + FETCHER_POLL_S + close
    assert len({round(s, 4) for s in stops}) > 3  # on their own schedules, not one whole poll


def test_the_models_poll_is_the_fetcher_threads():
    from zkconsumer.datapath.fetcher_thread import POLL_S

    assert FETCHER_POLL_S == POLL_S


def test_the_fetch_round_is_the_span_of_the_relative_lags():
    # sent at n / 37 from 10.0; received at the next of rounds 50 ms apart from 10.003
    received = [(10.003 + 0.05 * -(-(n / 37 - 0.003) // 0.05), n) for n in range(400)]
    lags = relative_lags(received, 10.0, 37.0)
    assert lags[0] == 0.0 and max(lags) <= 50.0
    assert delivery_round_ms(lags) == pytest.approx(50.0, abs=2.0)
    with pytest.raises(ValueError, match="no message was received"):
        relative_lags([], 0.0, 40.0)


def test_one_fetcher_per_partition_stops_when_the_last_of_them_noticed():
    """The leader mode's fetchers are one per partition, stopped side by side: each notices
    the stop on its own partition's deliveries, and the member's stop ends with the last."""
    # asked at 0.62: partition 2's fetcher (last message 0.05) at its message 0.65, partition
    # 3's (last 0.075) at its boundary and message 0.675; one fetcher for both: 0.65
    assert partitions_stop_end(LAB, (2, 3), 0.0, 0.62, 0.1) == pytest.approx(0.675)
    assert stop_end(MemberSchedule(LAB, (2, 3), 0.0), 0.62, 0.1) == pytest.approx(0.65)
    # a clean leave asked at 0.1 wakes at 0.525 (0.025 + the 0.5 s timeout); partition 0's
    # fetcher stops at its message 0.6, partition 1's at 0.625
    assert partitions_leave_stop_end(LAB, (0, 1), 0.0, 0.1, 0.1, 0.5) == pytest.approx(0.625)
    # the models' one entry point: the time from the request, per partition or not
    assert scheduled_stop_s(LAB, (2, 3), 0.0, 0.62, 0.1, 0.5, leaving=False,
                            per_partition=True) == pytest.approx(0.055)
    assert scheduled_stop_s(LAB, (0, 1), 0.0, 0.1, 0.1, 0.5, leaving=True,
                            per_partition=False) == pytest.approx(0.5)


def test_in_a_leader_mode_leave_a_survivor_rarely_waits_for_anothers_owner_znode():
    """N = 12 on 24 partitions, member 0 leaves: the second survivor takes a partition from
    the first, and claims it only once its own two fetchers stopped, on its partitions'
    deliveries after the first's: the real leaves never waited (plans 10 and 21)."""
    from zkconsumer.scenarios.timing import Timing
    from zkconsumer.spark.herd.scoring import HERD_OBSERVATION
    from zkconsumer.spark.herd.validate import lab_sim_config

    cal = Calibration(delivery_round_ms=51.13, fetcher_stop_min_ms=2.44)
    waited = sum(simulate(lab_sim_config("zk-leader-range", 12, 24, "leave", seed, cal, 6000,
                                         2, Timing(), None), HERD_OBSERVATION
                          ).rebalance_attempts > 1 for seed in range(40))
    assert waited <= 8
