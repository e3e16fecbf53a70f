"""The lab's sampled request counts in the simulator: each member's count ends at its own last
statistics sample, and the members of one client process sample in step."""

from __future__ import annotations

import dataclasses
import random

import pytest

from zkconsumer.sim import SimConfig, simulate
from zkconsumer.sim.heartbeats import BrokerMember, count_heartbeats
from zkconsumer.sim.observation import Observation
from zkconsumer.sim.sampling import NEVER, SampledWindows, draw_windows, within
from zkconsumer.sim.tally import Tally

WINDOWS = SampledWindows(interval_s=1.0, after_s=1.3, phases={"a": 0.5, "b": 0.9})


def test_a_members_window_runs_from_its_last_sample_before_the_event_to_its_last_before_the_end():
    # samples of "a" at ..., -0.5, 0.5, 1.5, ...; the run settled at 0: the end is 1.3
    assert WINDOWS.window("a", 0.0) == pytest.approx((-0.5, 0.5))
    assert WINDOWS.window("b", 0.0) == pytest.approx((-0.1, 0.9))
    # a heartbeat 0.7 s after the event is counted for "b" only
    assert not WINDOWS.counts("a", 0.7, 0.0)
    assert WINDOWS.counts("b", 0.7, 0.0)
    # settled 2 s later, both count it
    assert WINDOWS.counts("a", 0.7, 2.0) and WINDOWS.counts("b", 0.7, 2.0)


def test_a_joiner_has_no_sample_until_one_interval_after_the_event():
    assert WINDOWS.last_sample("joiner", 0.9) == NEVER
    assert WINDOWS.window("joiner", 0.0) == (NEVER, 1.0)  # its first sample at 1.0 <= 1.3
    assert WINDOWS.window("joiner", -0.5)[1] == NEVER  # ended at 0.8: nothing of it counted


def test_the_members_of_one_process_share_a_phase_drawn_per_process():
    w = draw_windows(["m0", "m1", "m2", "m3"], [0, 1, 0, 1], 1.0, 1.3, seed=7)
    assert w.phases["m0"] == w.phases["m2"] != w.phases["m1"] == w.phases["m3"]
    assert all(0.0 <= p < 1.0 for p in w.phases.values())
    assert draw_windows(["m0"], [0], 1.0, 1.3, seed=7).phases["m0"] == w.phases["m0"]


def test_windows_need_a_positive_interval():
    with pytest.raises(ValueError, match="interval_s > 0"):
        SampledWindows(0.0, 1.3, {})


def test_broker_requests_are_counted_in_their_members_windows():
    now = [0.0]
    tally = Tally(clock=lambda: now[0])
    for at, mid in ((0.2, "a"), (0.7, "a"), (0.7, "b"), (0.7, None)):
        now[0] = at
        tally.broker(1, mid)
    tally.add_counted(5)
    assert tally.broker_requests == 9
    # "a" counts up to 0.5, "b" up to 0.9; a request of no one member always counts
    assert tally.broker_in(lambda mid: WINDOWS.window(mid, 0.0)) == 1 + 1 + 1 + 5


def test_heartbeats_are_counted_in_each_members_window():
    members = [BrokerMember("a", phase=0.7), BrokerMember("b", phase=0.7)]
    both = count_heartbeats(members, 2.0, 1.3, start=-0.5)
    windowed = count_heartbeats(members, 2.0, 1.3, start=-0.5,
                                window=lambda mid: WINDOWS.window(mid, 0.0))
    assert (both, windowed) == (2, 1)  # the beats at 0.7: "a"'s window closed at 0.5


def test_a_round_right_after_the_event_is_counted_for_some_processes_only():
    # Kafka 2.4's cooperative rules, 48 members in 2 processes over 24 partitions: the joiner
    # gets nothing and the observer closes at once; the group's next heartbeat comes within a
    # second. Counted in one window it adds a beat per member; counted as the lab samples,
    # a beat per member of each process whose sample falls after it: all of a process or none
    obs = Observation(check_interval_s=0.5, quiet_s=3.0, count_after_s=1.3)
    sampled = dataclasses.replace(obs, sample_interval_s=1.0)
    whole, per_process = set(), set()
    for seed in range(10):
        cfg = SimConfig("kafka-cooperative-sticky", 48, 24, "join", seed=seed,
                        session_timeout_ms=6000, heartbeat_interval_ms=2000,
                        client_processes=2, event_after_change_s=(3.0, 3.35))
        a, b = simulate(cfg, obs), simulate(cfg, sampled)
        assert a.time_to_stable_s == b.time_to_stable_s == 0.0
        whole.add(a.coordination_requests)
        if a.coordination_requests == 3 + 48:  # the round itself came after the window
            per_process.add(b.coordination_requests)
    joiner = 3  # FindCoordinator and two JoinGroups (KIP-394)
    assert joiner + 48 in whole
    assert per_process == {joiner, joiner + 24, joiner + 48}


def test_a_beat_due_just_after_a_tick_is_counted_by_the_next_sample():
    # Tansu's members are answered a few ms after their own statistics tick, so a heartbeat
    # on the answer's grid goes just after a sample: a window closing before the next
    # sample does not count it, wherever the event falls
    answers = {"m0": -3.2, "m1": -3.1}
    w = draw_windows(["m0", "m1"], [0, 0], 1.0, 1.3, seed=3, answers=answers,
                     tick_lead=lambda rng: 0.01)
    assert w.phases == pytest.approx({"m0": -3.21, "m1": -3.11})
    beats = {"m0": -3.2 + 4.0, "m1": -3.1 + 4.0}     # the next beats after the event
    for mid, beat in beats.items():
        assert not within(w.window(mid, 0.0), beat)         # the window ends 10 ms before it
        assert within(w.window(mid, 1.0), beat)             # a sample a second later counts it


def test_a_process_without_a_lead_samples_at_a_phase_of_its_own():
    w = draw_windows(["m0", "m1", "m2"], [0, 1, 0], 1.0, 1.3, seed=3,
                     answers={"m0": -3.2, "m1": -3.2, "m2": -3.1},
                     tick_lead=lambda rng: None if rng.random() < 2 else 0.0)
    assert w.phases["m0"] == w.phases["m2"] != w.phases["m1"]
    assert all(0.0 <= ph < 1.0 for ph in w.phases.values())


def test_ticks_drawn_with_the_formation_are_the_members_own_and_move_no_other_draw():
    answers = {"m0": -3.2, "m1": -3.1, "m2": -3.15}

    def lead(rng: random.Random) -> float:
        return 0.01

    plain = draw_windows(["m0", "m1", "m2"], [0, 0, 1], 1.0, 1.3, seed=3, answers=answers,
                         tick_lead=lead)
    tied = draw_windows(["m0", "m1", "m2"], [0, 0, 1], 1.0, 1.3, seed=3, answers=answers,
                        tick_lead=lead, ticks={"m0": -3.25, "m1": -3.13})
    assert tied.phases["m0"] == pytest.approx(-3.25)
    assert tied.phases["m1"] == pytest.approx(-3.13)
    assert tied.phases["m2"] == plain.phases["m2"]  # not in ticks: as before
