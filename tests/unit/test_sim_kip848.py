"""The KIP-848 model's timing: schedules tied to the formation, the broker's heartbeat interval,
and the joiner that waits for its own next heartbeat (zkconsumer.sim.kip848)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from zkconsumer.results import capture, write_provenance
from zkconsumer.results.distributions import CellKey
from zkconsumer.sim import SimConfig, simulate
from zkconsumer.sim.formation import KIP848_IDLE_SCHEDULES_S, KIP848_SCHEDULES_S
from zkconsumer.sim.kip848 import JOINER_START_S
from zkconsumer.spark.herd.scoring import RunSet, set_heartbeat_ms

LAG_S = 3.2  # the event this long after the formation's last change


def _kip848(members: int, event: str, seed: int, hb_ms: int = 5000,
            tied: bool = True) -> SimConfig:
    return SimConfig("kip848", members, 24, event, seed=seed, heartbeat_interval_ms=hb_ms,
                     session_timeout_ms=6000, member_order="start", victim_rank=0,
                     event_after_change_s=(LAG_S, LAG_S) if tied else None)


@pytest.mark.parametrize("hb_ms", [5000, 1000])
def test_a_leave_is_taken_at_the_recipients_next_heartbeat_after_the_formation(hb_ms):
    """12 members over 24 partitions: the leaver's two go to members that held two, at their
    own next heartbeat, which the formation set just before its last change."""
    hb = hb_ms / 1000.0
    lo, hi = KIP848_SCHEDULES_S
    for seed in range(10):
        t = simulate(_kip848(12, "leave", seed, hb_ms)).time_to_stable_s
        next_beat = -LAG_S % hb
        assert next_beat + lo - 0.01 <= t <= next_beat + hi + 0.01, (seed, t)


def test_a_member_the_formation_gave_nothing_heartbeats_after_the_last_change():
    """48 members over 24 partitions: the leaver's partition goes to an idle member, whose
    schedule is its first heartbeat's, after the last change."""
    lo, hi = KIP848_IDLE_SCHEDULES_S
    times = [simulate(_kip848(48, "leave", seed)).time_to_stable_s for seed in range(10)]
    assert all(1.8 + lo - 0.01 <= t <= 1.8 + hi + 0.01 for t in times), times


def test_a_joiner_gets_its_partition_at_its_own_next_heartbeat():
    """The owner releases it within the first interval; nothing hastens the joiner's next
    heartbeat, one interval after its first."""
    for hb_ms in (5000, 1000):
        for seed in range(5):
            r = simulate(_kip848(12, "join", seed, hb_ms))
            assert hb_ms / 1000 < r.time_to_stable_s < hb_ms / 1000 + 3 * JOINER_START_S
            assert r.members_paused == 1 and r.conflicts == 0


def test_a_joiner_of_a_group_with_more_members_than_partitions_moves_nothing():
    for seed in range(5):
        r = simulate(_kip848(48, "join", seed))
        assert r.members_paused == 0 and r.max_unowned_s == 0.0
        assert r.time_to_stable_s < 3 * JOINER_START_S  # the joiner's first heartbeat only


def test_without_the_formation_the_schedules_are_anywhere_in_the_interval():
    times = {round(simulate(_kip848(12, "leave", seed, tied=False)).time_to_stable_s, 1)
             for seed in range(20)}
    assert max(times) - min(times) > 2.0  # spread over the 5 s interval


def test_the_scorer_draws_with_the_heartbeat_interval_the_runs_broker_gave(tmp_path: Path):
    run_set = RunSet("kafka-4.0", "apache-kafka-4.0.2", "runs", ("consumer-uniform",),
                     "spark herd --mode real")
    key = CellKey("kafka-4.0", "apache-kafka-4.0.2", "consumer-uniform", 12, 24, "join")
    folder = tmp_path / "runs" / "consumer-uniform-n12"
    folder.mkdir(parents=True)
    assert set_heartbeat_ms(tmp_path, run_set, key) is None  # no meta.json: the lab's
    write_provenance(folder, capture("zkconsumer spark herd", consumer_heartbeat_interval_ms=1000))
    assert set_heartbeat_ms(tmp_path, run_set, key) == 1000
    write_provenance(folder, capture("zkconsumer spark herd", mode="real"))
    assert set_heartbeat_ms(tmp_path, run_set, key) is None  # a classic group's run


def test_the_sweep_draws_kip848_with_the_brokers_heartbeat_and_classic_with_the_clients():
    from zkconsumer.spark.herd.grid import Cell
    from zkconsumer.spark.herd.sweep import SimSettings

    settings = SimSettings()
    kip = settings.config(Cell("kip848", 64, 128, "join", 0))
    eager = settings.config(Cell("eager-range", 64, 128, "join", 0))
    assert kip.heartbeat_interval_ms == 5000  # Apache Kafka 4's group.consumer default
    client_default = SimConfig("eager-range", 4, 8, "join").heartbeat_interval_ms
    assert eager.heartbeat_interval_ms == client_default
    assert SimSettings(consumer_heartbeat_interval_ms=1000).config(
        Cell("kip848", 64, 128, "join", 0)).heartbeat_interval_ms == 1000


def test_a_static_leavers_partitions_wait_for_its_session_from_its_last_heartbeat():
    """Epoch -2 keeps the leaver's assignment; its session, started by its last regular
    heartbeat (formed just after the last change), runs out 6 s later, and the recipients take
    the partitions at their first heartbeat after that: one interval later than a dynamic
    leave's."""
    lo, hi = KIP848_SCHEDULES_S
    next_beat = -LAG_S % 5.0
    for seed in range(10):
        cfg = _kip848(12, "leave", seed)
        static = simulate(dataclasses.replace(cfg, protocol="kip848-static"))
        assert next_beat + 5.0 + lo - 0.01 <= static.time_to_stable_s <= next_beat + 5.0 + hi \
            + 0.01, (seed, static.time_to_stable_s)
        # nothing else differs: the same partitions move, once, with the same requests but
        # the fenced member's heartbeat schedule
        dynamic = simulate(cfg)
        assert (static.members_paused, static.conflicts, static.rebalance_attempts) == \
            (dynamic.members_paused, dynamic.conflicts, dynamic.rebalance_attempts)


def test_a_static_joiner_joins_as_any_member():
    for seed in range(5):
        cfg = _kip848(12, "join", seed)
        assert simulate(dataclasses.replace(cfg, protocol="kip848-static")).row() | {
            "protocol": "kip848"} == simulate(cfg).row()


def test_the_server_side_range_assignor_shifts_the_members_after_a_joiner():
    """Apache Kafka 4.0's range assignor deals ranges over random member ids: a joiner lands at
    a random rank and the members after it give partitions up and take their neighbours', an
    answer for each (two reconciliations or more); the uniform assignor moves one partition,
    once."""
    paused, attempts = [], []
    for seed in range(10):
        cfg = _kip848(12, "join", seed)
        uniform = simulate(cfg)
        assert (uniform.members_paused, uniform.rebalance_attempts) == (1, 1)
        ranged = simulate(dataclasses.replace(cfg, protocol="kip848-range"))
        paused.append(ranged.members_paused)
        attempts.append(ranged.rebalance_attempts)
        assert ranged.conflicts == 0 and ranged.time_to_stable_s is not None
    assert max(paused) > 1 and max(attempts) >= 2
    # how many shift depends on the joiner's rank: the draws differ
    assert len(set(paused)) > 1
