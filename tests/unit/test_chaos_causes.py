"""Every duplicate of a chaos run tied to its cause (``lab/chaos/causes.py``), hand-made files."""

from __future__ import annotations

import json

import pytest

from zkconsumer.lab.chaos.causes import duplicate_causes, estimate_start, parse_timeline
from zkconsumer.lab.chaos.schedule import Action, Kind

T0 = 1_000.0  # wall clock of the schedule's 0


def lines(*recs: dict, cut: bool = False) -> list[bytes]:
    out = [json.dumps(r).encode() + b"\n" for r in recs]
    if cut:
        out.append(b'{"t":"d","k":"x"')  # a line cut short by SIGKILL
    return out


def d(k: str, s: int, p: int = 0) -> dict:
    return {"t": "d", "k": k, "s": s, "p": p, "o": s}


def e(what: str, ts: float, **kw: object) -> dict:
    return {"t": "e", "e": what, "ts": T0 + ts, **kw}


SCHEDULE = [
    Action(2.0, Kind.JOIN, "m02"),
    Action(5.0, Kind.KILL, "m00"),
    Action(10.0, Kind.EXPIRE, "m01", hold_s=7.0),
    Action(20.0, Kind.ZK_LEADER_KILL, "leader"),
]


def timelines():
    # m00 delivers a0, a1 and is SIGKILLed before committing them; m02 takes over
    m00 = parse_timeline("m00", lines(e("rebalance_succeeded", 0.1), d("a", 0), d("a", 1),
                                      cut=True))
    # m01 is cut off at 12.7 (the expiry's hold began at 10) and keeps delivering b5, b6;
    # later, in a new session, it loses its connection in the leader kill right after c9
    m01 = parse_timeline("m01", lines(
        e("rebalance_succeeded", 0.2), d("b", 4),
        e("session_state", 12.7, state="SUSPENDED"), d("b", 5), d("b", 6),
        e("session_state", 18.0, state="CONNECTED", new=True), e("rebalance_started", 18.1),
        e("rebalance_succeeded", 18.3), d("c", 9),
        e("session_state", 20.4, state="SUSPENDED"), e("session_state", 21.0, state="CONNECTED"),
        {"t": "lc", "w": "stopped", "ts": T0 + 30}))
    # m02 joined at 2 (first line at 3.1) and re-delivered everything above
    m02 = parse_timeline("m02", lines(
        e("session_state", 3.1, state="CONNECTED"), e("rebalance_succeeded", 9.0),
        d("a", 0), d("a", 1), e("rebalance_succeeded", 16.0), d("b", 5), d("b", 6),
        e("rebalance_succeeded", 22.0), d("c", 9), {"t": "lc", "w": "stopped", "ts": T0 + 30}))
    return [m00, m01, m02]


def test_the_schedule_is_placed_between_the_kills_and_the_joins() -> None:
    est = estimate_start(timelines(), SCHEDULE)
    assert est.high == pytest.approx(T0 + 1.1)   # m02's first line 3.1 s in, joined at 2
    assert est.low == pytest.approx(T0 - 4.9)    # m00's last line 0.1 s in, killed at 5
    assert est.start == pytest.approx(T0 - 1.9)


def test_each_duplicate_is_attributed_to_the_fault_of_its_first_deliverer() -> None:
    from zkconsumer.lab.chaos.causes import StartEstimate

    report = duplicate_causes(timelines(), SCHEDULE, StartEstimate(T0, T0, T0))
    assert report.duplicates == 5
    assert report.by_cause["kill"] == 2           # a0, a1: m00 killed before committing
    assert report.by_cause["expire"] == 2         # b5, b6: delivered while cut off
    assert report.by_cause["zk-leader-kill"] == 1  # c9: the leader kill cut m01 off after it
    assert sum(report.by_cause.values()) == 5
    assert [(ep["cause"], ep["member"], ep["duplicates"]) for ep in report.episodes] == [
        ("kill", "m00", 2), ("expire", "m01", 2), ("zk-leader-kill", "m01", 1)]


def test_a_release_without_a_commit_is_a_rebalance_with_its_context() -> None:
    from zkconsumer.lab.chaos.causes import StartEstimate

    m00 = parse_timeline("m00", lines(e("rebalance_succeeded", 0.1), d("z", 1),
                                      e("rebalance_started", 6.0),
                                      {"t": "lc", "w": "stopped", "ts": T0 + 9}))
    m01 = parse_timeline("m01", lines(e("rebalance_succeeded", 7.0), d("z", 1),
                                      {"t": "lc", "w": "stopped", "ts": T0 + 9}))
    report = duplicate_causes([m00, m01], SCHEDULE, StartEstimate(T0, T0, T0))
    assert report.by_cause["rebalance"] == 1
    [ep] = report.episodes
    assert (ep["fault_kind"], ep["fault_at_s"], ep["fault_target"]) == ("kill", 5.0, "m00")


def test_a_session_closed_by_a_clean_leave_is_the_leave_and_a_hold_end_is_named() -> None:
    from zkconsumer.lab.chaos.causes import StartEstimate

    schedule = [Action(5.0, Kind.EXPIRE, "m00", hold_s=7.0), Action(12.0, Kind.RESUME, "m00"),
                Action(20.0, Kind.LEAVE, "m01")]
    # m01 is told to leave at 20: its session is reported LOST while it closes, before stopped
    m01 = parse_timeline("m01", lines(e("rebalance_succeeded", 0.1), d("y", 1),
                                      e("session_state", 20.3, state="LOST"),
                                      {"t": "lc", "w": "stopped", "ts": T0 + 20.5}))
    # m02 re-delivers a partition after a rebalance that follows m00's return at 12
    m02 = parse_timeline("m02", lines(e("rebalance_succeeded", 1.0), d("x", 3),
                                      e("rebalance_started", 12.4), e("rebalance_succeeded", 12.6),
                                      d("x", 3), d("y", 1)))
    report = duplicate_causes([m01, m02], schedule, StartEstimate(T0, T0, T0))
    assert report.by_cause["leave"] == 1 and report.by_cause["rebalance"] == 1
    rebalance = next(ep for ep in report.episodes if ep["cause"] == "rebalance")
    assert (rebalance["fault_kind"], rebalance["fault_target"]) == ("end of expire", "m00")
