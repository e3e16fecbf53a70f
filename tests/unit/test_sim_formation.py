"""Heartbeat phases of a group its last round formed, and where the lab's event falls."""

import random
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from zkconsumer.scenarios.timing import Timing
from zkconsumer.sim import Calibration, SimConfig, simulate
from zkconsumer.sim.formation import (
    AT_ONCE,
    KAFKA,
    TANSU,
    Spread,
    creation_ranks,
    formed_schedule,
    lab_event_after_change_s,
    processes_of,
    weighted_sample,
)
from zkconsumer.sim.heartbeats import BrokerMember, next_beat
from zkconsumer.spark.herd.scoring import HERD_OBSERVATION
from zkconsumer.spark.herd.validate import lab_sim_config

REPO = Path(__file__).resolve().parents[2]


def test_a_process_clients_tick_in_start_order_and_each_answer_follows_its_own_tick():
    procs = [i % 2 for i in range(10)]
    on_time = replace(TANSU, straggler_share=0.0)  # stragglers: the test below
    formed = formed_schedule(procs, 2.0, random.Random(3), 3.1, on_time)
    assert formed.ticks is not None
    by_proc = {p: [t for t, q in zip(formed.ticks, procs, strict=True) if q == p]
               for p in (0, 1)}
    for v in by_proc.values():  # one client start apart, in the order the process created them
        gaps = [b - a for a, b in zip(v, v[1:], strict=False)]
        assert gaps == pytest.approx([TANSU.client_start_s] * 4)
    assert TANSU.client_start_s * 24 == pytest.approx(0.1)
    leads = [a - t for a, t in zip(formed.answers, formed.ticks, strict=True)]
    assert all(TANSU.tick_lead_lo_s - 1e-9 <= d <= TANSU.tick_lead_hi_s + 1e-9 for d in leads)
    assert len({round(d, 6) for d in leads}) == len(leads)  # a lead of its own per member
    # no answer after the lag's instant: the last process's last tick is a whole lead before it
    assert max(formed.answers) <= -3.1 + 1e-9
    assert max(formed.ticks) == pytest.approx(-3.1 - TANSU.tick_lead_hi_s)


def test_tansu_answers_keep_no_creation_order_within_a_process():
    """The revoking owner is the last client its process created; whether others' schedules
    come after it is what the cooperative join's second round turns on."""
    after_last_created = 0
    for seed in range(50):
        answers = formed_schedule([0] * 6, 2.0, random.Random(seed), 3.1, TANSU).answers
        after_last_created += sum(a > answers[-1] for a in answers[:-1])
    assert 0 < after_last_created < 50 * 5


def test_without_member_leads_the_answers_themselves_run_in_start_order():
    procs = [0] * 4
    formed = formed_schedule(procs, 2.0, random.Random(1), 3.1, Spread(client_start_s=0.01))
    assert formed.ticks is None
    assert formed.answers == pytest.approx([-3.13, -3.12, -3.11, -3.1])


def test_kafka_answers_every_process_at_once():
    phases = formed_schedule([0, 1, 2, 0, 1, 2], 2.0, random.Random(1), 3.2, KAFKA).answers
    assert phases == [pytest.approx(-3.2)] * 6


def test_the_lab_event_puts_the_next_heartbeat_within_a_second_after_it():
    # quiet 3 s, 2 s heartbeats: the beat after the event at the last assignment + 4 s,
    # 0.65-1.0 s after the event
    lo, hi = lab_event_after_change_s(3.0)
    assert (lo, hi) == pytest.approx((3.0, 3.35))
    for lag in (lo, hi):
        phase = formed_schedule([0], 2.0, random.Random(0), lag, AT_ONCE).answers[0]
        beat = next_beat(BrokerMember("m", phase=phase), 0.0, 2.0)
        assert beat == pytest.approx(4.0 - lag)
        assert 0.6 < beat <= 1.0


def test_without_a_lag_the_formation_is_at_a_random_instant_of_one_interval():
    seen = [formed_schedule([0, 0], 2.0, random.Random(s), None, AT_ONCE).answers[0]
            for s in range(200)]
    assert 0.0 <= min(seen) < 0.1 and 1.9 < max(seen) < 2.0


def test_processes_follow_the_placement_or_the_client_processes():
    assert processes_of(SimConfig("eager-range", 5, 8, "join", client_processes=2), 5) == \
        [0, 1, 0, 1, 0]
    assert processes_of(SimConfig("eager-range", 3, 8, "join"), 3) == [0, 1, 2]


def test_a_spread_is_checked():
    with pytest.raises(ValueError, match="straggler_share must be within"):
        Spread(straggler_share=1.5)
    with pytest.raises(ValueError, match="stragglers_max >= 1"):
        Spread(stragglers_max=0)
    with pytest.raises(ValueError, match="look_s > 0"):
        Spread(look_s=0.0)
    with pytest.raises(ValueError, match=r"event_after_change_s must be \(lo, hi\)"):
        SimConfig("eager-range", 4, 8, "join", event_after_change_s=(3.0, 2.0))


def test_a_joiner_with_nothing_to_get_still_revokes_everyone_in_the_lab_timing():
    # 36 members over 24 partitions, eager on Tansu's rules: the joiner gets nothing, and the
    # group's in-step heartbeat tells everyone of the round within a second, so the observed
    # run sees the round (the real runs: ~4 s, every owner paused), not a quiet group
    from zkconsumer.sim.observation import Observation

    cfg = SimConfig("tansu-eager-range", 36, 24, "join", seed=0, heartbeat_interval_ms=2000,
                    client_processes=2, member_order="start",
                    calibration=Calibration(broker_join_start_ms=3.0),
                    event_after_change_s=lab_event_after_change_s(3.0))
    r = simulate(cfg, Observation())
    assert r.members_paused == 24
    assert 3.5 < r.time_to_stable_s < 5.0


def test_a_process_statistics_tick_comes_its_spreads_lead_before_the_answer():
    rng = random.Random(5)
    tansu = [TANSU.tick_lead(rng) for _ in range(500)]
    assert all(lead is not None and 0.006 <= lead <= 0.069 for lead in tansu)
    kafka = [KAFKA.tick_lead(rng) for _ in range(2000)]
    unrelated = sum(lead is None for lead in kafka)
    assert 80 < unrelated < 200  # 11 of 160 task formations
    assert all(-0.07 <= lead <= 0.2 for lead in kafka if lead is not None)
    assert all(AT_ONCE.tick_lead(rng) is None for _ in range(50))


@pytest.mark.parametrize("bad", [dict(tick_random_share=1.5),
                                 dict(tick_lead_lo_s=0.2, tick_lead_hi_s=0.1)])
def test_a_spread_refuses_an_impossible_tick_lead(bad):
    with pytest.raises(ValueError, match="tick"):
        Spread(**bad)


def test_the_process_that_started_its_clients_last_ticks_last_where_the_lab_says_which():
    procs = [i % 2 for i in range(12)]

    def last_tick(formed, p):
        return max(t for t, q in zip(formed.ticks, procs, strict=True) if q == p)

    later = [last_tick(f, 0) >= last_tick(f, 1)
             for f in (formed_schedule(procs, 2.0, random.Random(s), 3.1, TANSU, 0)
                       for s in range(40))]
    drawn = [last_tick(f, 0) >= last_tick(f, 1)
             for f in (formed_schedule(procs, 2.0, random.Random(s), 3.1, TANSU)
                       for s in range(40))]
    assert all(later)
    assert 0 < sum(drawn) < 40


def test_stragglers_are_answered_a_look_after_the_first_answer_and_are_the_last_change():
    procs = [i % 2 for i in range(12)]
    always = replace(TANSU, straggler_share=1.0, another_straggler_share=0.5)
    sizes = set()
    for seed in range(60):
        formed = formed_schedule(procs, 2.0, random.Random(seed), 3.1, always, 0)
        first = min(formed.answers)
        late = [i for i, a in enumerate(formed.answers) if a > first + 0.5]
        sizes.add(len(late))
        assert formed.stragglers == len(late)  # what a validation plan splits its draws by
        # the lab's event follows the group's last change, the stragglers' answer, which
        # came one look after the first; everybody else within the usual tenth of a second
        assert [formed.answers[i] for i in late] == [pytest.approx(-3.1)] * len(late)
        assert first == pytest.approx(-3.1 - TANSU.look_s)
        assert max(a for i, a in enumerate(formed.answers) if i not in late) < first + 0.2
        # from the task that did not start its clients last; ticks moved with the answers
        assert {procs[i] for i in late} == {1}
        assert formed.ticks is not None
        assert all(t < a for t, a in zip(formed.ticks, formed.answers, strict=True))
    assert sizes == {1, 2, 3, 4}


def test_a_tansu_formation_has_stragglers_at_the_records_rate_and_kafka_never():
    procs = [i % 2 for i in range(12)]

    def with_stragglers(spread: Spread) -> int:
        n = 0
        for seed in range(400):
            answers = formed_schedule(procs, 2.0, random.Random(seed), 3.1, spread, 0).answers
            n += max(answers) - min(answers) > 0.5
        return n

    assert 100 < with_stragglers(TANSU) < 160  # 51 of 159 formations in the records
    assert with_stragglers(KAFKA) == 0


def test_a_drawn_run_reports_its_formations_stragglers_and_a_zookeeper_group_none():
    cal = Calibration.load(REPO / "results/scale/calibration-10/calibration.json")

    def stragglers(protocol: str) -> list[int]:
        return [simulate(lab_sim_config(protocol, 12, 24, "leave", seed, cal, 6000, 2, Timing(),
                                        None), HERD_OBSERVATION).formation_stragglers
                for seed in range(40)]

    tansu = stragglers("eager-range")
    assert 5 < sum(n > 0 for n in tansu) < 25 and max(tansu) <= TANSU.stragglers_max
    assert stragglers("kafka-eager-range") == [0] * 40
    assert stragglers("zk-range") == [0] * 40


def test_most_straggling_formations_leave_one_straggler():
    procs = [i % 2 for i in range(48)]
    always = replace(TANSU, straggler_share=1.0)
    counts = []
    for seed in range(300):
        answers = formed_schedule(procs, 2.0, random.Random(seed), 3.1, always, 0).answers
        counts.append(sum(a > min(answers) + 0.5 for a in answers))
    # 26 of 39 formations in the records had one, 10 two, 3 more
    assert 170 < counts.count(1) < 230 and 0 < counts.count(3) + counts.count(4) < 40
    assert max(counts) == TANSU.stragglers_max


def test_creation_ranks_count_each_process_members_in_order():
    assert creation_ranks([0, 1, 0, 1, 1, 2]) == [0, 0, 1, 1, 2, 0]


def test_rank_weights_draw_stragglers_where_the_records_put_them_and_never_past_them():
    procs = [i % 2 for i in range(12)]  # process 1's ranks: m1 0, m3 1, m5 2, ... m11 5
    ranked = replace(TANSU, straggler_share=1.0, another_straggler_share=0.0,
                     straggler_rank_weights=(1.0, 3.0, 0.0))
    late = Counter()
    for seed in range(400):
        formed = formed_schedule(procs, 2.0, random.Random(seed), 3.1, ranked, 0)
        first = min(formed.answers)
        late.update(i for i, a in enumerate(formed.answers) if a > first + 0.5)
    # rank 2 weighs nothing and ranks past the weights are never drawn: only m1 and m3, m3
    # more often (not three times: it is not drawn when it was the first answered, the leader)
    assert set(late) == {1, 3}
    assert late[3] > 1.3 * late[1]
    uniform = replace(TANSU, straggler_share=1.0)
    drawn = Counter()
    for seed in range(400):
        formed = formed_schedule(procs, 2.0, random.Random(seed), 3.1, uniform, 0)
        drawn.update(i for i, a in enumerate(formed.answers) if a > min(formed.answers) + 0.5)
    assert set(drawn) == {1, 3, 5, 7, 9, 11}  # without weights: every odd member


def test_a_weighted_sample_draws_in_proportion_and_without_repeats():
    rng = random.Random(7)
    ones = Counter(weighted_sample(rng, {3: 3.0, 1: 1.0}, 1)[0] for _ in range(4000))
    assert 0.72 < ones[3] / 4000 < 0.78
    assert sorted(weighted_sample(rng, {3: 3.0, 1: 1.0}, 5)) == [1, 3]
    assert weighted_sample(rng, {}, 2) == []


def test_more_stragglers_than_weighted_ranks_stop_at_the_ranks_there_are():
    procs = [i % 2 for i in range(12)]
    many = replace(TANSU, straggler_share=1.0, another_straggler_share=1.0,
                   straggler_rank_weights=(1.0, 1.0))
    for seed in range(20):
        formed = formed_schedule(procs, 2.0, random.Random(seed), 3.1, many, 0)
        # before the stragglers were moved, the first answer was the leader's: m1 or m3 as
        # leader is never its own straggler, so only the other rank is left
        late = {i for i, a in enumerate(formed.answers) if a > min(formed.answers) + 0.5}
        assert late <= {1, 3} and formed.stragglers == len(late) >= 1
        leader = min((a, i) for i, a in enumerate(formed.answers) if i not in late)[1]
        assert len(late) == (1 if leader in (1, 3) else 2)


@pytest.mark.parametrize("weights", [(-1.0, 2.0), (0.0, 0.0)])
def test_rank_weights_are_checked(weights):
    with pytest.raises(ValueError, match="straggler_rank_weights must be >= 0"):
        Spread(straggler_rank_weights=weights)
    with pytest.raises(ValueError, match="formation_straggler_ranks must be >= 0"):
        SimConfig(protocol="eager-range", members=12, partitions=24, event="join",
                  formation_straggler_ranks=weights)


def test_the_configs_rank_weights_reach_tansus_formation_and_not_kafkas():
    cal = Calibration.load(REPO / "results/scale/calibration-10/calibration.json")

    def cfg(protocol: str, seed: int) -> SimConfig:
        base = lab_sim_config(protocol, 12, 24, "join", seed, cal, 6000, 2, Timing(), None)
        return replace(base, formation_straggler_share=1.0,
                       formation_straggler_ranks=(0.0, 1.0))

    # every Tansu formation straggles, and only m3 (rank 1 of process 1) can
    assert all(simulate(cfg("eager-range", s), HERD_OBSERVATION).formation_stragglers == 1
               for s in range(10))
    assert [simulate(cfg("kafka-eager-range", s), HERD_OBSERVATION).formation_stragglers
            for s in range(10)] == [0] * 10
