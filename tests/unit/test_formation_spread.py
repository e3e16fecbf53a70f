"""Where a formed broker-side group's schedules stood, from a run's records (spark
formation-spread)."""

from __future__ import annotations

import pytest

from zkconsumer.results import capture, write_provenance
from zkconsumer.spark.herd.formation_spread import (
    broker_heartbeat_ms,
    quantiles,
    spread_rows,
    wrap,
)

WINDOW = {"run_id": "r1", "members": 3, "event": "leave", "event_ts": 110.0}


def rec(kind: str, ts: float, member: str, what: str | None = None) -> dict:
    return {"kind": kind, "ts": ts, "member": member, "what": what}


def test_wrap_puts_an_offset_within_half_an_interval():
    assert wrap(4.9, 5.0) == pytest.approx(-0.1)
    assert wrap(0.2, 1.0) == pytest.approx(0.2)
    assert wrap(-2.4, 1.0) == pytest.approx(-0.4)


def test_each_member_is_placed_against_the_formations_last_change():
    records = [
        rec("lc", 100.0, "a", "starting"), rec("lc", 100.0, "b", "starting"),
        rec("lc", 100.1, "c", "starting"),
        rec("rq", 100.25, "a"), rec("tl", 100.3, "a", "assigned"),
        rec("rq", 101.94, "b"), rec("tl", 102.0, "b", "assigned"),
        rec("tl", 105.25, "a", "revoked"),   # a's last record: the last change
        rec("tl", 112.0, "b", "assigned"),   # after the event: not the formation's
        rec("tl", 111.9, "c", "assigned"),   # c held nothing: its grant after the event
    ]
    rows = spread_rows(records, WINDOW, heartbeat_ms=5000)
    got = {(r["kind"], r["member"]): r["seconds"] for r in rows}
    assert got[("event_lag", "")] == pytest.approx(4.75)
    assert got[("schedule", "a")] == 0.0
    assert got[("schedule", "b")] == pytest.approx(1.75)  # 102.0 + 5 s, after 105.25
    assert got[("tick_lead", "a")] == pytest.approx(0.0)  # 105.25 - 100.25, modulo 1 s
    assert got[("tick_lead", "b")] == pytest.approx(0.06)
    assert got[("idle_grant", "c")] == pytest.approx(wrap(111.9 - 105.25, 5.0))
    assert all(r["run_id"] == "r1" and r["heartbeat_ms"] == 5000 for r in rows)


def test_a_run_without_a_formation_record_gives_no_rows():
    assert spread_rows([rec("lc", 100.0, "a", "starting")], WINDOW, 5000) == []


def test_quantiles_are_nearest_rank():
    rows = [{"kind": "schedule", "seconds": s / 100} for s in range(100)]
    assert quantiles(rows, "schedule") == (100, 0.05, 0.5, 0.95)
    assert quantiles(rows, "tick_lead") == (0, None, None, None)


def test_a_sweep_names_its_heartbeat_interval_or_is_refused(tmp_path):
    with pytest.raises(ValueError, match="neither a KIP-848 heartbeat interval nor a session"):
        broker_heartbeat_ms(tmp_path)  # no meta.json at all
    write_provenance(tmp_path, capture("zkconsumer spark herd", mode="real"))
    with pytest.raises(ValueError, match="neither a KIP-848 heartbeat interval nor a session"):
        broker_heartbeat_ms(tmp_path)
    # a classic group's members heartbeat at the lab's third of the session
    write_provenance(tmp_path, capture("zkconsumer spark herd", session_timeout_ms=6000))
    assert broker_heartbeat_ms(tmp_path) == (2000, True)
    write_provenance(tmp_path, capture("zkconsumer spark herd", session_timeout_ms=6000,
                                       consumer_heartbeat_interval_ms=1000))
    assert broker_heartbeat_ms(tmp_path) == (1000, False)  # KIP-848: not a classic group


def test_a_classic_formation_names_the_members_answered_a_look_after_the_first():
    window = dict(WINDOW, members=4, event="join")
    records = [rec("tl", 100.00, "a", "assigned"), rec("tl", 100.12, "b", "assigned"),
               rec("tl", 100.66, "c", "assigned"),   # a task answered late: not a straggler
               rec("tl", 101.00, "d", "assigned")]   # a look after the first: the straggler
    rows = spread_rows(records, window, heartbeat_ms=2000, classic=True)
    assert [(r["member"], r["seconds"]) for r in rows if r["kind"] == "straggler"] == \
        [("d", 1.0)]
    # the event follows the stragglers' answer, the group's last change
    assert [r["seconds"] for r in rows if r["kind"] == "event_lag"] == [9.0]
    # without stragglers, or for a KIP-848 group (schedules of their own), no such rows
    on_time = spread_rows(records[:3], window, heartbeat_ms=2000, classic=True)
    assert not [r for r in on_time if r["kind"] == "straggler"]
    assert not [r for r in spread_rows(records, window, heartbeat_ms=2000)
                if r["kind"] == "straggler"]


def test_each_task_ticks_against_task_0_whose_clients_started_last():
    def rq(ts: float, member: str, task: str) -> dict:
        return dict(rec("rq", ts, member), task=task)

    records = [
        rec("lc", 100.0, "a", "starting"), rec("lc", 100.0, "b", "starting"),
        rec("lc", 100.0, "c", "starting"),
        rq(103.12, "a", "0"), rq(103.10, "b", "0"),   # task 0's latest tick: 0.12 past a second
        rq(103.08, "c", "1"),                          # task 1's: 40 ms earlier
        rec("tl", 104.2, "a", "assigned"),
        rq(104.12, "a", "0"), rq(104.10, "b", "0"), rq(104.08, "c", "1"),
        rq(110.5, "c", "1"),                           # after the last change: not the formation's
    ]
    rows = spread_rows(records, WINDOW, heartbeat_ms=2000)
    ticks = [(r["member"], r["seconds"]) for r in rows if r["kind"] == "task_tick"]
    assert ticks == [("task 1", pytest.approx(-0.04))]


def test_a_run_places_its_event_on_the_producers_clock_for_every_family():
    """Record n is sent n / rate after the producer's first: the quickest delivery before the
    event gives the producer's start; a ZooKeeper group gets that row and its event lag only."""
    def d(ts: float, seq: int) -> dict:
        return dict(rec("d", ts, "a", None), seq=seq)

    window = dict(WINDOW, family="zookeeper")   # event at 110.0
    records = [rec("tl", 101.0, "a", "assigned"), rec("tl", 102.5, "b", "assigned"),
               d(100.53, 20), d(100.611, 24),   # starts 100.03 and 100.011: the least
               d(110.2, 405)]                   # after the event: not counted
    rows = spread_rows(records, window, heartbeat_ms=2000, classic=True, rate=40.0)
    assert [r["seconds"] for r in rows if r["kind"] == "producer_event"] == \
        [pytest.approx(9.989)]
    assert [r["kind"] for r in rows] == ["event_lag", "producer_event"]  # no heartbeats
    # no delivery before the event: no row
    assert not [r for r in spread_rows(records[:2], window, 2000, rate=40.0)
                if r["kind"] == "producer_event"]


def test_a_zookeeper_formation_is_read_as_the_runs_speed():
    """Each member's first attempt to its first plan, before the event; the run's median."""
    window = dict(WINDOW, family="zookeeper")   # event at 110.0
    records = [
        rec("tl", 104.0, "a", "assigned"),
        rec("co", 101.0, "a", "attempt"), rec("dc", 101.9, "a"),
        rec("co", 103.0, "a", "attempt"), rec("dc", 103.1, "a"),   # a's second: not counted
        rec("co", 101.2, "b", "attempt"), rec("dc", 102.4, "b"),
        rec("co", 101.5, "c", "attempt"), rec("dc", 102.0, "c"),
        rec("co", 110.1, "d", "attempt"), rec("dc", 110.2, "d"),   # the joiner, after the event
    ]
    rows = spread_rows(records, window, heartbeat_ms=2000, rate=40.0)
    assert [r["seconds"] for r in rows if r["kind"] == "formation_read"] == \
        [pytest.approx(0.9)]   # median of 0.9, 1.2 and 0.5
    # a broker group's runs have no such row
    assert not [r for r in spread_rows(records, WINDOW, heartbeat_ms=2000)
                if r["kind"] == "formation_read"]
