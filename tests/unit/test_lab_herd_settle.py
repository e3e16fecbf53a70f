"""The herd sweep's settling rules on hand-written records (no server, no member)."""

from __future__ import annotations

from zkconsumer.lab.herd import settle
from zkconsumer.lab.records import (
    Coord,
    CoordEvent,
    Decision,
    Lifecycle,
    LifecycleEntry,
    RequestSample,
)

ATTEMPT, OK, WATCH = Coord.ATTEMPT.value, Coord.REBALANCE_SUCCEEDED.value, Coord.WATCH_FIRED.value


def co(ts: float, member: str, what: str, incarnation: int = 0) -> CoordEvent:
    return CoordEvent(ts, member, incarnation, what)


def test_counters_quiet_needs_an_old_sample_and_a_fresh_one() -> None:
    samples = [(1.0, 10), (2.0, 12), (3.0, 12), (4.0, 12)]
    assert settle.unchanged_since(samples, since=2.5, fresh_after=3.5)
    assert not settle.unchanged_since(samples, since=1.5, fresh_after=3.5)   # moved at 2.0
    assert not settle.unchanged_since(samples, since=2.5, fresh_after=4.5)   # last too old
    assert not settle.unchanged_since([(3.0, 1)], since=2.5, fresh_after=2.9)  # nothing older


def test_a_group_is_formed_once_every_current_incarnation_rebalanced() -> None:
    coord = [co(1.0, "m00", OK), co(1.2, "m01", ATTEMPT), co(1.5, "m01", OK, incarnation=0)]
    assert settle.all_rebalanced(coord, [("m00", 0), ("m01", 0)])
    # a restarted member's new incarnation has not rebalanced yet
    assert not settle.all_rebalanced(coord, [("m00", 0), ("m01", 1)])


def test_a_kip848_member_given_nothing_is_formed_once_it_joined_and_the_group_noticed_it() -> None:
    # more members than partitions: the idle KIP-848 member gets no rebalance callback, only
    # its "joined" record; a joiner with nothing is the group reacting to the join
    coord = [co(1.0, "m00", OK), co(1.4, "m01", "joined")]
    assert settle.all_rebalanced(coord, [("m00", 0), ("m01", 0)])
    assert not settle.all_rebalanced(coord[:1], [("m00", 0), ("m01", 0)])
    assert settle.coordination_quiet(coord, now=4.0, quiet_s=2.0, since=1.2)


def test_coordination_is_quiet_only_after_quiet_s_and_a_reaction_by_someone_else() -> None:
    coord = [co(10.0, "m00", ATTEMPT), co(11.0, "m00", OK), co(14.0, "m01", WATCH)]
    assert settle.coordination_quiet(coord, now=13.0, quiet_s=2.0)   # a watch is not activity
    assert not settle.coordination_quiet(coord, now=12.5, quiet_s=2.0)
    # since the event at 10.5, only the leaver m00 did anything: the group has not reacted
    assert not settle.coordination_quiet(coord, now=20.0, quiet_s=2.0, since=10.5, leaver="m00")
    assert settle.coordination_quiet(coord, now=20.0, quiet_s=2.0, since=10.5, leaver="m01")


def test_a_leaders_decision_is_the_group_noticing_a_leave_that_moves_nothing() -> None:
    # m08 owned nothing and left at 10.5; the leader m00 published a generation without it and
    # no member had anything to hand over: no coordination record, one decision.
    coord = [co(1.0, "m00", OK), co(10.6, "m03", WATCH)]
    decided = [Decision(10.7, "m00", 0, "digest")]
    assert not settle.coordination_quiet(coord, now=20.0, quiet_s=2.0, since=10.5, leaver="m08")
    assert settle.coordination_quiet(coord, now=20.0, quiet_s=2.0, since=10.5, leaver="m08",
                                     decisions=decided)
    assert not settle.coordination_quiet(coord, now=11.5, quiet_s=2.0, since=10.5, leaver="m08",
                                         decisions=decided)  # decided 0.8 s ago: not quiet yet


def test_requests_are_quiet_when_every_current_member_held_still() -> None:
    def sample(ts: float, member: str, total: int) -> RequestSample:
        return RequestSample(ts, member, 0, {"getData": total})

    requests = [sample(1.0, "m00", 5), sample(3.9, "m00", 5), sample(1.0, "m01", 7),
                sample(3.9, "m01", 9)]
    assert not settle.requests_quiet(requests, [("m00", 0), ("m01", 0)], now=4.0, hold_s=2.0,
                                     fresh_s=0.5)
    assert settle.requests_quiet(requests, [("m00", 0)], now=4.0, hold_s=2.0, fresh_s=0.5)
    assert not settle.requests_quiet(requests, [("m02", 0)], now=4.0, hold_s=2.0, fresh_s=0.5)


def test_watch_notifications_must_all_arrive_but_a_leavers_own_may_be_lost() -> None:
    coord = [co(0.5, "m00", WATCH), co(1.1, "m00", WATCH), co(1.2, "m01", WATCH)]
    assert settle.notifications_delivered(coord, since=1.0, sent=2, closed=0)
    assert not settle.notifications_delivered(coord, since=1.0, sent=3, closed=0)
    assert settle.notifications_delivered(coord, since=1.0, sent=3, closed=1)


def test_a_leavers_revocation_is_not_a_rebalance_it_took_part_in() -> None:
    coord = [co(1.0, "m02", ATTEMPT), co(1.5, "m00", Coord.REBALANCE_STARTED.value),
             co(2.0, "m01", OK), co(2.5, "m01", WATCH), co(9.0, "m03", ATTEMPT)]
    assert settle.members_rebalanced(coord, 0.5, 5.0, leaver="m02") == ["m00", "m01"]
    assert settle.members_rebalanced(coord, 0.5, 5.0) == ["m00", "m01", "m02"]
    assert settle.coordination_end(coord, 0.5, 5.0) == 1.5   # the watch at 2.5 is not
    assert settle.coordination_end(coord, 5.0, 6.0) is None


def test_the_first_failed_member_is_named_with_the_first_line_of_its_error() -> None:
    ok = LifecycleEntry(1.0, "m00", 0, Lifecycle.STOPPING)
    bad = LifecycleEntry(2.0, "m03", 1, Lifecycle.ERROR, "KazooTimeoutError\n  at ...")
    assert settle.member_failure([ok]) is None
    assert settle.member_failure([ok, bad]) == "member m03.1 failed: KazooTimeoutError"
