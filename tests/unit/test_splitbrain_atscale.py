"""The at-scale split-brain scenarios' rules and metrics, without servers."""

from __future__ import annotations

import pytest

from zkconsumer.lab.metrics import Produced
from zkconsumer.lab.records import RunRecords
from zkconsumer.scenarios.splitbrain import (
    Kind,
    ScenarioParams,
    not_applicable,
    parse_list,
    plan,
    task_of,
    zombie_count,
)
from zkconsumer.spark.splitbrain.metrics import Window, run_metrics

P = ScenarioParams()


def test_zombie_plan_cuts_a_fraction_for_longer_than_the_session():
    pl = plan("zombie", "zk-range", 50, P, seed=3, session_timeout_ms=6000)
    assert len(pl.zombies) == 5
    cuts = [a for a in pl.actions if a.kind is Kind.CUT]
    heals = [a for a in pl.actions if a.kind is Kind.HEAL]
    assert {a.at_s for a in cuts} == {0.0} and {a.at_s for a in heals} == {12.0}
    assert {a.member for a in heals} == set(pl.zombies)
    # the same seed gives the same zombies to every protocol; another seed, others
    assert plan("zombie", "zk-leader-range", 50, P, 3, 6000).zombies == pl.zombies
    assert plan("zombie", "zk-range", 50, P, 4, 6000).zombies != pl.zombies


def test_zombie_count_is_at_least_one_and_at_most_half():
    assert zombie_count(2, 0.1) == 1
    assert zombie_count(200, 0.1) == 20
    assert zombie_count(4, 0.5) == 2


def test_stale_view_gives_every_member_its_own_delay_then_a_burst_of_joins():
    pl = plan("stale-view", "zk-range", 10, P, seed=1, session_timeout_ms=6000)
    delays = {a.member: a.value for a in pl.actions if a.kind is Kind.DELAY}
    assert len(delays) == 12 and all(0 <= d <= 300 for d in delays.values())
    assert len(set(delays.values())) > 6  # a distribution, not one value
    assert pl.joiners == ("m00010", "m00011")
    joins = [a.at_s for a in pl.actions if a.kind is Kind.JOIN]
    assert joins == [0.1, 0.4]


def test_storm_changes_fall_in_the_window_and_never_empty_the_group():
    params = ScenarioParams(storm_joins=4, storm_leaves=5, storm_window_s=2.0)
    pl = plan("storm", "zk-range", 4, params, seed=2, session_timeout_ms=6000)
    assert len(pl.joiners) == 4 and len(pl.leavers) == 3  # one of the four stays
    assert all(0.0 <= a.at_s <= 2.0 for a in pl.actions)
    assert len(pl.final_members()) == 4 + 4 - 3


def test_a_storm_owner_delay_slows_only_the_initial_members_from_before_the_storm():
    params = ScenarioParams(storm_joins=2, storm_leaves=1, storm_owner_delay_ms=600)
    pl = plan("storm", "zk-range", 3, params, seed=0, session_timeout_ms=6000)
    delays = {a.member: (a.at_s, a.value) for a in pl.actions if a.kind is Kind.DELAY}
    assert delays == {m: (0.0, 600) for m in ("m00000", "m00001", "m00002")}
    # the delays come first: a join at instant 0 is already seen late by the old members
    assert [a.kind for a in pl.actions[:3]] == [Kind.DELAY] * 3
    # without the knob (the committed runs) the plan has no delay at all, and the same seed
    # draws the same joins and leaves
    plain = plan("storm", "zk-range", 3, ScenarioParams(storm_joins=2, storm_leaves=1), 0, 6000)
    assert [a for a in pl.actions if a.kind is not Kind.DELAY] == list(plain.actions)
    with pytest.raises(ValueError, match="storm-owner-delay-ms must be >= 0, got -1"):
        ScenarioParams(storm_owner_delay_ms=-1).validate()


def test_members_spread_over_tasks_round_robin():
    pl = plan("storm", "zk-range", 6, P, seed=0, session_timeout_ms=6000)
    by_task = [pl.for_task(t, 2) for t in range(2)]
    assert sum(len(x) for x in by_task) == len(pl.actions)
    assert all(by_task), "both tasks have actions to carry out"
    assert [task_of(a.member, 2) for a in by_task[0]] == [0] * len(by_task[0])
    assert [task_of(a.member, 2) for a in by_task[1]] == [1] * len(by_task[1])
    assert task_of("m00007", 3) == 1


def test_zombie_has_no_meaning_for_broker_groups_and_bad_input_is_named():
    assert "no ZooKeeper session to lose" in not_applicable("eager-range", "zombie")
    assert not_applicable("zk-leader-range", "zombie") is None
    assert not_applicable("cooperative-sticky", "storm") is None
    with pytest.raises(ValueError, match="zombie for cooperative-sticky"):
        plan("zombie", "cooperative-sticky", 4, P, 0, 6000)
    with pytest.raises(ValueError, match="'split'"):
        not_applicable("zk-range", "split")
    with pytest.raises(ValueError, match="cut factor must be > 1"):
        plan("zombie", "zk-range", 4, ScenarioParams(cut_factor=0.5), 0, 6000)
    with pytest.raises(ValueError, match="max-retries must be >= 1, got 0"):
        ScenarioParams(max_retries=0).validate()
    with pytest.raises(ValueError, match="zk-rnge"):
        parse_list("zk-range,zk-rnge", ("zk-range",), "protocols")


def _records(lines):
    rec = RunRecords()
    for line in lines:
        rec.add(line)
    return rec


def tl(ts, m, what, *ps):
    return {"k": "tl", "ts": ts, "m": m, "i": 0, "w": what, "ps": list(ps)}


def co(ts, m, what):
    return {"k": "co", "ts": ts, "m": m, "i": 0, "w": what}


def d(ts, m, p, o):
    return {"k": "d", "ts": ts, "m": m, "i": 0, "p": p, "o": o, "v": p * 1000 + o}


def test_a_legacy_zombie_double_owns_delivers_twice_and_commits_late():
    # m00000 (the zombie) fetches p0 throughout the cut (0..12 s) and stops at 13; m00001 takes
    # p0 over at 8 s; both deliver offset 5 of p0.
    pl = plan("zombie", "zk-range", 2, ScenarioParams(zombie_fraction=0.5), 0, 6000)
    assert pl.zombies == ("m00000",) or pl.zombies == ("m00001",)
    z = pl.zombies[0]
    o = "m00001" if z == "m00000" else "m00000"
    t0 = 100.0
    rec = _records([
        tl(90, z, "fetching", 0), tl(90, o, "fetching", 1),
        d(101, z, 0, 4), d(109, z, 0, 5), d(110, o, 0, 5), d(111, z, 0, 6),
        tl(108, o, "fetching", 0), co(107, o, "attempt"), co(108, o, "rebalance_succeeded"),
        co(112.5, z, "commit_ok"), tl(113, z, "revoked", 0),
        co(113, z, "attempt"), co(113.2, z, "rebalance_succeeded"),
    ])
    produced = [Produced(0, o_, 0 * 1000 + o_) for o_ in (4, 5, 6)]
    m = run_metrics(rec, pl, Window(t0, 120.0, drained_ts=125.0), 2, produced,
                    offsets_went_back=1, verify_ok=True)
    assert m["double_owned_partition_s"] == 5.0           # 108 -> 113 on p0
    assert m["zombie_deliveries"] == 2                     # offsets 5 and 6 while o owned p0
    assert m["delivered_twice"] == 1                       # p0:5
    assert m["zombie_commits_accepted"] == 1
    assert m["zombie_stop_s"] == 13.0
    assert m["attempts_max"] == 1 and m["conflicts"] == 0
    assert m["lost"] == 0 and m["offsets_went_back"] == 1 and m["verify_ok"] is True


def test_a_fenced_zombie_that_stops_before_the_takeover_double_owns_nothing():
    pl = plan("zombie", "zk-leader-range", 2, ScenarioParams(zombie_fraction=0.5), 0, 6000)
    z = pl.zombies[0]
    o = "m00001" if z == "m00000" else "m00000"
    rec = _records([tl(90, z, "fetching", 0), tl(90, o, "fetching", 1),
                    tl(104, z, "revoked", 0), tl(108, o, "fetching", 0), d(109, o, 0, 1)])
    m = run_metrics(rec, pl, Window(100.0, 120.0), 2, [Produced(0, 1, 1)])
    assert m["double_owned_partition_s"] == 0.0 and m["zombie_deliveries"] == 0
    assert m["zombie_stop_s"] == 4.0 and m["zombie_commits_accepted"] == 0
    assert m["lost"] == 0


def test_a_storm_that_gives_up_leaves_partitions_unowned_until_the_repair():
    pl = plan("storm", "zk-range", 3, ScenarioParams(storm_joins=1, storm_leaves=1), 0, 6000)
    rec = _records([
        tl(90, "m00000", "fetching", 0, 1), tl(90, "m00001", "fetching", 2),
        tl(101, "m00000", "revoked", 0, 1), tl(101, "m00001", "revoked", 2),
        co(101, "m00000", "attempt"), co(101.1, "m00000", "owner_conflict"),
        co(101.1, "m00000", "rollback"), co(102, "m00000", "rebalance_failed"),
        co(101, "m00001", "attempt"), tl(101.5, "m00001", "fetching", 2),
        co(101.5, "m00001", "rebalance_succeeded"),
        tl(130, "m00001", "fetching", 0, 1),
    ])
    m = run_metrics(rec, pl, Window(100.0, 112.0, repair_ts=122.0), 3, [])
    # p0 and p1 nobody's from 101 on; every member done at 102; unowned until the repair at 122
    assert m["unowned_partition_s"] == 40.0
    assert m["rebalances_given_up"] == 1 and m["gave_up_members"] == 1
    assert m["conflicts"] == 1 and m["rollbacks"] == 1
    assert m["time_to_stable_s"] is None


def test_lost_counts_acknowledged_records_nobody_delivered():
    pl = plan("storm", "zk-range", 2, ScenarioParams(storm_joins=1, storm_leaves=0), 0, 6000)
    rec = _records([tl(90, "m00000", "fetching", 0), d(91, "m00000", 0, 0)])
    m = run_metrics(rec, pl, Window(100.0, 110.0), 1, [Produced(0, 0, 0), Produced(0, 1, 1)])
    assert m["lost"] == 1 and m["produced"] == 2 and m["lost_for_good"] is None


def test_an_undelivered_record_below_the_committed_offset_is_lost_for_good():
    # p0: offsets 0..3 produced, 0 and 2 delivered; the group committed 3 (next to read), so 1
    # is skipped for good and 3 waits for an owner; p1: 0 undelivered, nothing committed
    pl = plan("storm", "zk-range", 2, ScenarioParams(storm_joins=1, storm_leaves=0), 0, 6000)
    rec = _records([tl(90, "m00000", "fetching", 0), d(91, "m00000", 0, 0),
                    d(92, "m00000", 0, 2)])
    produced = [Produced(0, o, o) for o in range(4)] + [Produced(1, 0, 1000)]
    m = run_metrics(rec, pl, Window(100.0, 110.0), 2, produced, committed={0: 3})
    assert (m["lost"], m["lost_for_good"]) == (3, 1)
    assert run_metrics(rec, pl, Window(100.0, 110.0), 2, produced,
                       committed={})["lost_for_good"] == 0


def test_a_storm_may_start_from_one_member_but_a_split_needs_two():
    from zkconsumer.cli.main import build_parser
    from zkconsumer.spark.splitbrain.job import grid

    def cells(*argv: str) -> list:
        return grid(build_parser().parse_args(["spark", "split-brain", "--mode", "sim",
                                                "--out", "unused", *argv]))

    [cell] = cells("--members", "1", "--scenarios", "storm", "--protocols", "zk-range")
    assert (cell.scenario, cell.members) == ("storm", 1)
    with pytest.raises(ValueError, match=r"--members '1,4': zombie and stale-view need at "
                                         r"least 2 members"):
        cells("--members", "1,4", "--scenarios", "zombie,storm,stale-view")
    with pytest.raises(ValueError, match="'0': expected comma-separated integers >= 1"):
        cells("--members", "0", "--scenarios", "storm")
    storm = plan("storm", "zk-range", 1, ScenarioParams(storm_joins=2, storm_leaves=3), 0, 6000)
    assert sorted(a.kind.value for a in storm.actions) == ["join", "join"]  # nobody can leave


def test_formation_auto_forms_leader_mode_member_by_member_only_under_a_small_budget():
    from zkconsumer.scenarios.splitbrain import Formation, formation_for

    auto, one, together = Formation.AUTO, Formation.ONE_AT_A_TIME, Formation.TOGETHER
    assert formation_for(auto, "zk-leader-range", 1) is one
    assert formation_for(auto, "zk-leader-range", 2) is one
    assert formation_for(auto, "zk-leader-range", 3) is together
    assert formation_for(auto, "zk-range", 1) is together
    assert formation_for(one, "zk-range", 1) is one
    assert formation_for(together, "zk-leader-range", 1) is together
    assert formation_for(one, "eager-range", 1) is together  # broker groups: always together


def test_the_reproduce_line_names_a_formation_only_when_one_was_chosen():
    from zkconsumer.cli.main import build_parser
    from zkconsumer.spark.splitbrain.job import command_line

    def line(*argv: str) -> str:
        return command_line(build_parser().parse_args(
            ["spark", "split-brain", "--mode", "real", "--out", "o", *argv]))

    assert "--formation" not in line()
    assert line("--formation", "one-at-a-time").endswith("--out o --formation one-at-a-time")


def test_the_reproduce_line_names_the_calibration_file_the_simulator_used():
    from zkconsumer.cli.main import build_parser
    from zkconsumer.spark.splitbrain.job import command_line

    args = build_parser().parse_args(["spark", "split-brain", "--mode", "sim", "--out", "o",
                                      "--calibration", "results/cal.json"])
    assert command_line(args).endswith("--out o --calibration results/cal.json")
    args = build_parser().parse_args(["spark", "split-brain", "--mode", "sim", "--out", "o"])
    assert "--calibration" not in command_line(args)



def test_the_process_start_skew_is_the_spread_of_each_processs_first_initial_rebalance():
    from zkconsumer.spark.splitbrain.metrics import process_start_skew_ms

    def started(ts, m, i=0):
        return {"k": "co", "ts": ts, "m": m, "i": i, "w": "rebalance_started"}

    # two processes: m00000, m00002 in one, m00001, m00003 in the other (task_of); m00003's
    # restart (incarnation 1) and the joiner m00004 are not initial starts
    rec = _records([started(10.000, "m00000"), started(10.004, "m00002"),
                    started(10.120, "m00001"), started(10.125, "m00003"),
                    started(12.0, "m00000"), started(9.0, "m00003", i=1),
                    started(9.5, "m00004"), co(9.9, "m00001", "attempt")])
    initial = ("m00000", "m00001", "m00002", "m00003")
    assert process_start_skew_ms(rec, initial, 2) == 120.0
    assert process_start_skew_ms(rec, initial, 1) is None
    assert process_start_skew_ms(_records([started(10.0, "m00000")]), initial, 2) is None
