"""The chaos schedule is a pure function of its inputs; the accounting counts exactly."""

from __future__ import annotations

import argparse

import pytest

from zkconsumer.cli import experiment
from zkconsumer.lab.chaos import ACTION_KINDS, Kind, ScheduleParams, action_counts, build_schedule
from zkconsumer.lab.chaos.accounting import consumption, parse_member_lines
from zkconsumer.lab.chaos.consumer import parse_value
from zkconsumer.lab.chaos.runner import aimed_at_exited
from zkconsumer.lab.chaos.schedule import Action, bounds, initial_members

PARAMS = ScheduleParams(session_timeout_s=4.0)


def main(argv: list[str]) -> int:
    """The ``experiment`` verb as ``zkconsumer`` builds it, without the other verbs."""
    parser = argparse.ArgumentParser(prog="zkconsumer")
    experiment.register(parser.add_subparsers(dest="verb"))
    args = parser.parse_args(argv)
    return int(args.func(args))


def test_same_seed_same_schedule_and_other_seeds_differ():
    first = build_schedule(7, 30, 4, PARAMS)
    assert first == build_schedule(7, 30, 4, PARAMS)
    assert all(build_schedule(s, 30, 4, PARAMS) != first for s in (1, 2, 3))
    assert build_schedule(7, 60, 4, PARAMS) != first


@pytest.mark.parametrize("seed", range(20))
def test_a_short_run_exercises_every_kind_of_action(seed):
    counts = action_counts(build_schedule(seed, 30, 4, PARAMS))
    assert set(counts) == {k.value for k in ACTION_KINDS}
    assert all(n >= 1 for n in counts.values()), counts


@pytest.mark.parametrize("seed,duration,members", [(1, 120, 6), (5, 30, 4), (9, 300, 3),
                                                   (3, 60, 2)])
def test_schedule_keeps_membership_bounds_and_heals_every_fault_before_the_end(
        seed, duration, members):
    schedule = build_schedule(seed, duration, members, PARAMS)
    low, high = bounds(members)
    alive = set(initial_members(members))
    held: set[str] = set()
    zk_down = False
    ever: set[str] = set(alive)
    assert [a.at for a in schedule] == sorted(a.at for a in schedule)
    for a in schedule:
        assert 0 < a.at <= duration
        if a.kind is Kind.JOIN:
            assert a.target not in ever, "a joining member always has a fresh name"
            alive.add(a.target)
            ever.add(a.target)
        elif a.kind in (Kind.LEAVE, Kind.KILL):
            assert a.target in alive and a.target not in held
            alive.remove(a.target)
        elif a.kind in (Kind.EXPIRE, Kind.PAUSE):
            assert a.target in alive and a.target not in held
            held.add(a.target)
            if a.kind is Kind.EXPIRE:
                assert a.hold_s > PARAMS.session_timeout_s
            else:
                assert a.hold_s < PARAMS.session_timeout_s
        elif a.kind is Kind.RESUME:
            held.remove(a.target)
        elif a.kind is Kind.ZK_LEADER_KILL:
            assert not zk_down, "one ZooKeeper server down at a time keeps the quorum"
            zk_down = True
        elif a.kind is Kind.ZK_RESTART:
            zk_down = False
        assert low <= len(alive) <= high
    assert not held and not zk_down


def test_long_schedule_is_busy():
    counts = action_counts(build_schedule(1, 120, 6, PARAMS))
    assert sum(counts.values()) >= 25
    assert counts["zk-leader-kill"] >= 2


def test_value_parsing():
    assert parse_value(b"k007:12") == ("k007", 12)
    assert parse_value(b"garbage") is None
    assert parse_value(None) is None


def test_a_line_cut_by_a_kill_is_not_consumed():
    lines = [b'{"t":"lc","w":"ready","ts":1}\n',
             b'{"t":"d","k":"k000","s":0,"p":0,"o":0}\n',
             b'{"t":"e","e":"rebalance_succeeded","ts":2}\n',
             b'{"t":"d","k":"k000","s":1,"p":0,"o":1}']          # no newline: SIGKILLed
    log = parse_member_lines("m00", lines)
    assert log.deliveries == [("k000", 0)]
    assert log.ready and not log.stopped
    assert log.events["rebalance_succeeded"] == 1


def test_consumption_counts_lost_duplicates_and_strangers():
    produced = [("k0", 0), ("k0", 1), ("k1", 0), ("k1", 1)]
    delivered = [("k0", 0), ("k0", 0), ("k0", 1), ("k1", 0), ("k0", 1), ("k9", 0)]
    c = consumption(produced, delivered)
    assert (c.produced, c.consumed_unique, c.lost, c.duplicates, c.unexpected) == (4, 3, 1, 2, 1)
    assert c.lost_sample == (("k1", 1),)


def test_cli_prints_the_seeded_schedule(capsys):
    argv = ["experiment", "chaos", "--duration", "30", "--members", "4", "--seed", "7",
            "--schedule"]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert main(argv) == 0
    assert capsys.readouterr().out == first
    assert "zk-leader-kill" in first and "expire" in first and "join" in first


def test_a_chaos_group_is_good_only_when_live_members_own_everything() -> None:
    from zkconsumer.admin.groups import GroupSnapshot, Member
    from zkconsumer.lab.chaos.settle import judge

    def member(cid: str) -> Member:
        return Member(cid, {"t": 1}, "static", {"t": [f"{cid}-0"]})

    def snap(owners: dict[int, str | None], *cids: str) -> GroupSnapshot:
        return GroupSnapshot("g", members=[member(c) for c in cids], partitions={"t": [0, 1]},
                             owners={("t", p): o for p, o in owners.items()})

    good, why, owners = judge(snap({0: "g_a-0", 1: "g_b-0"}, "g_a", "g_b"), {"g_a", "g_b"}, 2)
    assert (good, why, owners) == (True, "", ((0, "g_a-0"), (1, "g_b-0")))
    # a killed member still registered (its session not expired yet)
    assert judge(snap({0: "g_a-0", 1: "g_b-0"}, "g_a", "g_b"), {"g_a"}, 2)[1] == \
        "registered ['g_b'] not live, live [] not registered"
    # an unowned partition is a verify-tool violation
    assert judge(snap({0: "g_a-0", 1: None}, "g_a"), {"g_a"}, 2)[1].startswith("1 violations")
    # enough partitions for both, yet b owns none
    assert judge(snap({0: "g_a-0", 1: "g_a-0"}, "g_a", "g_b"), {"g_a", "g_b"}, 2)[1] == \
        "idle members ['g_b']"


def test_actions_on_a_member_that_exited_on_its_own_are_skipped_and_a_new_join_is_not():
    exited = {"m45"}
    for kind in (Kind.LEAVE, Kind.KILL, Kind.EXPIRE, Kind.PAUSE, Kind.RESUME):
        assert aimed_at_exited(Action(10.0, kind, "m45"), exited), kind
        assert not aimed_at_exited(Action(10.0, kind, "m46"), exited), kind
    # a join of that name starts a new incarnation; a leader kill is aimed at no member
    assert not aimed_at_exited(Action(10.0, Kind.JOIN, "m45"), exited)
    assert not aimed_at_exited(Action(10.0, Kind.ZK_LEADER_KILL, "leader"), exited)
