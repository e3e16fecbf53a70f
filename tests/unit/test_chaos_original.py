"""Original members in a chaos group: their kind, lifetime and driver lines read as record lines
(``lab/chaos/original.py``, ``spec.member_kind``), and the duplicates per kind (``per_kind``)."""

from __future__ import annotations

import json

import pytest

from zkconsumer.cli.experiment_chaos import chaos_kafka_home
from zkconsumer.lab.chaos.accounting import parse_member_lines
from zkconsumer.lab.chaos.causes import duplicate_causes, parse_timeline, per_kind
from zkconsumer.lab.chaos.original import NO_LEAVE_S, lifetime_s, translate, translate_log
from zkconsumer.lab.chaos.schedule import Action, Kind
from zkconsumer.lab.chaos.spec import ChaosSpec, member_kind

TS = 1_000.0


def test_kinds_spread_the_originals_evenly_over_initial_and_joining_members():
    kinds = [member_kind(i, 6, 3) for i in range(12)]
    assert kinds == ["zkconsumer", "original"] * 6
    assert [member_kind(i, 5, 2) for i in range(5)].count("original") == 2
    assert {member_kind(i, 4, 0) for i in range(8)} == {"zkconsumer"}
    assert {member_kind(i, 4, 4) for i in range(8)} == {"original"}
    spec = ChaosSpec(members=6, original_members=3, kafka_home="k")
    assert [spec.kind_of(f"m{i:02d}") for i in (0, 1, 7)] == ["zkconsumer", "original",
                                                              "original"]


def test_a_spec_with_originals_needs_a_kafka_directory_and_no_more_originals_than_members():
    with pytest.raises(ValueError, match="3 original members need a Kafka 0.10.2"):
        ChaosSpec(members=6, original_members=3).validate()
    with pytest.raises(ValueError, match=r"between 0 and the members \(2\), got 3"):
        ChaosSpec(members=2, original_members=3, kafka_home="k").validate()


def test_originals_are_refused_on_tansu_naming_the_broker():
    with pytest.raises(ValueError, match="--original-members 2 needs --broker kafka:DIR .*'tansu'"):
        chaos_kafka_home(None, 2)
    assert chaos_kafka_home("tansu", 0) is None


def test_a_lifetime_ends_at_the_scheduled_leave_in_whole_seconds():
    assert lifetime_s(10.0, 25.2) == 16
    assert lifetime_s(10.0, 10.3) == 1
    assert lifetime_s(3.0, None) == NO_LEAVE_S


def test_driver_lines_become_record_lines_the_accounting_reads():
    out = [translate(line, TS) for line in (
        "READY streams=1",
        "REBALANCE_RELEASE Map()",
        "REBALANCE_ASSIGN g_m01 Map(t -> Map(0 -> g_m01-0))",
        "MSG stream=0 topic=t partition=0 offset=41 key=k007 value=k007:12",
        "MSG stream=0 topic=t partition=0 offset=42 key=null value=not-ours",
        "SHUTDOWN",
        "something else")]
    assert out == [
        {"t": "lc", "w": "ready", "ts": TS},
        {"t": "e", "e": "rebalance_started", "ts": TS},
        {"t": "e", "e": "rebalance_succeeded", "ts": TS},
        {"t": "d", "k": "k007", "s": 12, "p": 0, "o": 41},
        {"t": "d", "k": None, "s": None, "p": 0, "o": 42},
        {"t": "lc", "w": "stopped", "ts": TS},
        None]
    parsed = parse_member_lines("m01", [json.dumps(r).encode() + b"\n" for r in out if r])
    assert parsed.deliveries == [("k007", 12)]
    assert parsed.ready and parsed.stopped
    assert parsed.events["rebalance_started"] == 1


def test_the_zookeeper_clients_state_changes_are_session_events():
    line = ("[2026-11-27 10:16:19,507] INFO zookeeper state changed ({}) "
            "(org.I0Itec.zkclient.ZkClient)")
    assert translate_log(line.format("Disconnected"), TS, False) == {
        "t": "e", "e": "session_state", "ts": TS, "state": "SUSPENDED", "new": False}
    assert translate_log(line.format("Expired"), TS, False)["state"] == "LOST"
    assert translate_log(line.format("SyncConnected"), TS, True)["new"] is True
    assert translate_log(line.format("SyncConnected"), TS, False)["new"] is False
    assert translate_log(line.format("SaslAuthenticated"), TS, False) is None
    assert translate_log("INFO begin rebalancing consumer", TS, False) is None


def test_duplicates_are_counted_for_the_kind_of_the_member_whose_delivery_did_not_stick():
    def rec(*rs: dict) -> list[bytes]:
        return [json.dumps(r).encode() + b"\n" for r in rs]

    # m01 (original) delivers a:0 and a:1 and is killed; m02 (zkconsumer) delivers them again
    m01 = parse_timeline("m01", rec({"t": "e", "e": "rebalance_succeeded", "ts": TS + 0.1},
                                    {"t": "d", "k": "a", "s": 0}, {"t": "d", "k": "a", "s": 1}))
    m02 = parse_timeline("m02", rec({"t": "e", "e": "rebalance_succeeded", "ts": TS + 7.0},
                                    {"t": "d", "k": "a", "s": 0}, {"t": "d", "k": "a", "s": 1},
                                    {"t": "d", "k": "a", "s": 2},
                                    {"t": "lc", "w": "stopped", "ts": TS + 9.0}))
    schedule = [Action(2.0, Kind.JOIN, "m02"), Action(5.0, Kind.KILL, "m01")]
    report = duplicate_causes([m01, m02], schedule)
    kinds = per_kind([m01, m02], report, {"m01": "original", "m02": "zkconsumer"})
    assert kinds["original"]["members"] == 1
    assert kinds["original"]["deliveries"] == 2
    assert kinds["original"]["duplicates"] == 2
    assert kinds["original"]["by_cause"]["kill"] == 2
    assert kinds["zkconsumer"]["deliveries"] == 3
    assert kinds["zkconsumer"]["duplicates"] == 0


def test_a_settle_without_one_live_owner_is_mid_rebalance_when_a_live_member_was_inside_one():
    from zkconsumer.lab.chaos.settle_check import classify, inside_at, rebalance_events

    def rec(*rs: dict) -> list[bytes]:
        return [json.dumps(r).encode() + b"\n" for r in rs]

    busy, busy_last = rebalance_events(rec(
        {"t": "e", "e": "rebalance_started", "ts": 10.0},
        {"t": "e", "e": "attempt_failed", "ts": 11.0},
        {"t": "e", "e": "rebalance_succeeded", "ts": 20.0}))
    assert [inside_at(busy, t) for t in (5.0, 10.5, 15.0, 25.0)] == [False, True, True, False]
    gone = rebalance_events(rec({"t": "e", "e": "rebalance_started", "ts": 12.0}))  # killed
    settles = [{"ts": 8.0, "good": True, "why": ""},
               {"ts": 15.0, "good": False, "why": "unowned"},
               {"ts": 30.0, "good": False, "why": "unowned"}]
    got = classify(settles, {"m01": (busy, busy_last), "m02": gone})
    assert (got["settles"], got["good"], got["mid_rebalance"], got["other"]) == (3, 1, 1, 1)
    assert got["not_good"] == [
        {"ts": 15.0, "why": "unowned", "inside_rebalance": ["m01"]},
        {"ts": 30.0, "why": "unowned", "inside_rebalance": []}]
