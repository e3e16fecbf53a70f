"""How drivers turn what their clients report into lab records (no servers)."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import pytest

from zkconsumer.errors import ConsumerRebalanceFailedException
from zkconsumer.lab.drivers import DRIVERS, get_driver
from zkconsumer.lab.drivers.base import Driver, MemberSpec, parse_seq
from zkconsumer.lab.drivers.broker import consumer_config, request_counts
from zkconsumer.lab.drivers.zk import EventRecorder, connector_config
from zkconsumer.lab.member import run_member
from zkconsumer.lab.records import RecordTail, RecordWriter, Timeline
from zkconsumer.scenarios.timing import Timing


def spec(tmp_path: Path, protocol: str = "zk-range") -> MemberSpec:
    return MemberSpec(protocol=protocol, member="m03", incarnation=1, topic="t", group="g",
                      partitions=8, zk_connect="127.0.0.1:2181", bootstrap="127.0.0.1:9092",
                      records_path=str(tmp_path / "m03.1.jsonl"),
                      timing=Timing(session_timeout_ms=4000))


def test_member_spec_survives_the_trip_into_a_process(tmp_path: Path) -> None:
    s = spec(tmp_path)
    assert MemberSpec.from_json(s.to_json()) == s


def test_librdkafka_statistics_are_summed_over_every_broker_handle() -> None:
    stats = {"brokers": {
        "127.0.0.1:9092/111": {"req": {"Fetch": 42, "FindCoordinator": 1, "Metadata": 1}},
        "GroupCoordinator": {"req": {"JoinGroup": 3, "SyncGroup": 2, "Heartbeat": 12,
                                     "LeaveGroup": 1, "OffsetCommit": 2}},
    }}
    counts = request_counts(json.dumps(stats))
    assert counts["JoinGroup"] == 3 and counts["Heartbeat"] == 12 and counts["LeaveGroup"] == 1
    assert counts["FindCoordinator"] == 1 and "Fetch" not in counts


def test_a_kip848_members_heartbeats_join_its_request_counts() -> None:
    """librdkafka's statistics have no ConsumerGroupHeartbeat: the member counts the protocol
    debug log's "Sent ConsumerGroupHeartbeatRequest" lines and adds them to every sample."""
    from zkconsumer.lab.drivers.broker import HeartbeatCounter

    counter = HeartbeatCounter()
    logger = counter.logger("m03-i1")
    logger.debug("GroupCoordinator/0: Sent ConsumerGroupHeartbeatRequest (v1, 64 bytes @ 0, "
                 "CorrId 3)")
    logger.debug("GroupCoordinator/0: Received ConsumerGroupHeartbeatResponse (v1, 77 bytes)")
    logger.debug("127.0.0.1:9092/0: Sent FetchRequest (v17, 94 bytes @ 0, CorrId 4)")
    logger.debug("GroupCoordinator/0: Sent ConsumerGroupHeartbeatRequest (v1, 96 bytes @ 0, "
                 "CorrId 6)")
    assert counter.sent == 2
    stats = {"brokers": {"GroupCoordinator": {"req": {"OffsetFetch": 1}}}}
    counts = request_counts(json.dumps(stats), counter.sent)
    assert counts["ConsumerGroupHeartbeat"] == 2 and counts["OffsetFetch"] == 1
    assert "ConsumerGroupHeartbeat" not in request_counts(json.dumps(stats))


def test_only_kip848_members_turn_on_the_protocol_debug_log(tmp_path: Path) -> None:
    kip848 = consumer_config(spec(tmp_path, "consumer-uniform"), "uniform", False, "consumer")
    classic = consumer_config(spec(tmp_path, "eager-range"), "range", False)
    assert (kip848["debug"], kip848["log_level"]) == ("protocol", 7)
    assert "debug" not in classic and classic["log_level"] == 3


def test_both_sides_get_the_same_session_timeout(tmp_path: Path) -> None:
    zk = connector_config(spec(tmp_path), "range")
    broker = consumer_config(spec(tmp_path, "static-range"), "range", static=True)
    assert zk["zookeeper.session.timeout.ms"] == broker["session.timeout.ms"] == 4000
    assert broker["group.instance.id"] == "m03"       # the same id across incarnations
    assert zk["consumer.id"] == "m03-i1"


def test_connector_events_become_timeline_and_coordination_records(tmp_path: Path) -> None:
    s = spec(tmp_path)
    writer = RecordWriter(s.records_path, s.member, s.incarnation)
    rec = EventRecorder(s, writer)
    rec({"type": "attempt_started", "ts": 1.0, "attempt": 0})
    rec({"type": "owner_conflict", "ts": 1.1, "topic": "t", "partition": 3})
    rec({"type": "fetchers_started", "ts": 2.0, "partitions": [["t", 3], ["other", 1], ["t", 2]]})
    rec({"type": "fetchers_stopped", "ts": 3.0, "partitions": ["t/2", "t/3"]})
    writer.close()
    tail = RecordTail(tmp_path)
    tail.poll()
    tl = [(e.ts, e.what, e.partitions) for e in tail.records.timeline]
    assert tl == [(2.0, Timeline.ASSIGNED, (2, 3)), (2.0, Timeline.FETCHING, (2, 3)),
                  (3.0, Timeline.REVOKED, (2, 3))]
    assert [c.what for c in tail.records.coord] == ["attempt", "owner_conflict"]


def test_every_protocol_has_a_driver_and_broker_attempts_are_joingroups() -> None:
    for name in ("zk-range", "zk-roundrobin", "eager-range", "eager-roundrobin",
                 "cooperative-sticky", "static-range"):
        d = get_driver(name)
        assert d.attempt_counter == (None if d.family == "zookeeper" else "JoinGroup")


@pytest.mark.parametrize(("name", "assignor", "static"), [
    ("consumer-uniform", "uniform", False), ("consumer-range", "range", False),
    ("static-consumer-uniform", "uniform", True), ("static-consumer-range", "range", True),
])
def test_kip848_members_leave_session_heartbeat_and_assignment_to_the_coordinator(
        tmp_path: Path, name: str, assignor: str, static: bool) -> None:
    d = get_driver(name)
    assert (d.family, d.attempt_counter, d.option("group.protocol")) == (
        "broker", None, "consumer"), "no JoinGroup to count: members count reconciliations"
    assert d.option("static") == ("true" if static else "")
    conf = consumer_config(spec(tmp_path, name), assignor, static, "consumer")
    assert conf["group.protocol"] == "consumer" and conf["group.remote.assignor"] == assignor
    # librdkafka refuses these with group.protocol=consumer: the broker holds them.
    assert not {"session.timeout.ms", "heartbeat.interval.ms",
                "partition.assignment.strategy"} & set(conf)
    assert conf.get("group.instance.id") == ("m03" if static else None)


def test_a_kip848_member_records_each_reconciliation_and_only_what_it_gives_up(
        tmp_path: Path) -> None:
    from confluent_kafka import TopicPartition

    from zkconsumer.lab.drivers.broker import BrokerCallbacks

    s = spec(tmp_path, "consumer-uniform")
    writer = RecordWriter(s.records_path, s.member, s.incarnation)
    cb = BrokerCallbacks(s, writer, count_attempts=True)
    cb.on_assign(None, [TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("x", 5)])
    cb.on_revoke(None, [TopicPartition("t", 1)])
    cb.on_assign(None, [])
    writer.close()
    tail = RecordTail(tmp_path)
    tail.poll()
    assert [(e.what, e.partitions) for e in tail.records.timeline] == [
        (Timeline.ASSIGNED, (0, 1)), (Timeline.FETCHING, (0, 1)), (Timeline.REVOKED, (1,))]
    assert [c.what for c in tail.records.coord].count("attempt") == 2


def test_a_kip848_member_given_nothing_is_recorded_joined_once_its_first_heartbeat_was_answered(
        tmp_path: Path) -> None:
    """librdkafka calls no rebalance callback for an empty KIP-848 assignment: the member's
    second heartbeat (one is kept in flight) says the first was answered."""
    from confluent_kafka import TopicPartition

    from zkconsumer.lab.drivers.broker import BrokerCallbacks, HeartbeatCounter

    s = spec(tmp_path, "consumer-range")
    writer = RecordWriter(s.records_path, s.member, s.incarnation)
    beats = HeartbeatCounter()
    cb = BrokerCallbacks(s, writer, count_attempts=True, heartbeats=beats)
    stats = json.dumps({"brokers": {}})
    beats.sent = 1
    cb.on_stats(stats)  # its first heartbeat is not answered yet
    beats.sent = 2
    cb.on_stats(stats)
    beats.sent = 3
    cb.on_stats(stats)
    placed = BrokerCallbacks(s, writer, count_attempts=True, heartbeats=beats)
    placed.on_assign(None, [TopicPartition("t", 0)])
    placed.on_stats(stats)  # a member given something was told so by its callback
    writer.close()
    tail = RecordTail(tmp_path)
    tail.poll()
    assert [c.what for c in tail.records.coord] == ["joined", "attempt", "rebalance_succeeded"]
    assert [(e.what, e.partitions) for e in tail.records.timeline] == [
        (Timeline.ASSIGNED, (0,)), (Timeline.FETCHING, (0,))]  # "joined" changes no timeline


def test_values_that_are_not_sequence_numbers_are_not_ours() -> None:
    assert (parse_seq(b"17"), parse_seq(b"hello"), parse_seq(None)) == (17, None, None)


def _give_up(spec: MemberSpec, writer: RecordWriter, stop: object) -> None:
    raise ConsumerRebalanceFailedException("m03 can't rebalance after 1 retries")


def _break(spec: MemberSpec, writer: RecordWriter, stop: object) -> None:
    raise RuntimeError("a harness bug")


@pytest.mark.parametrize(("body", "level", "traceback_logged"),
                         [(_give_up, logging.WARNING, False), (_break, logging.ERROR, True)])
def test_a_member_that_gives_up_logs_one_line_and_a_broken_one_its_traceback(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        body: object, level: int, traceback_logged: bool) -> None:
    """Running out of rebalance.max.retries is a measured outcome of the experiments; only an
    unexpected failure deserves a traceback. Both end in the member's ERROR lifecycle record."""
    monkeypatch.setitem(DRIVERS, "test-protocol",
                        Driver(name="test-protocol", family="zookeeper",
                               body=body, attempt_counter=None))  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="zkconsumer.lab.member"):
        run_member(spec(tmp_path, "test-protocol"), threading.Event())
    [record] = [r for r in caplog.records if r.name == "zkconsumer.lab.member"]
    assert record.levelno == level
    assert (record.exc_info is not None) == traceback_logged
    text = Path(spec(tmp_path).records_path).read_text()
    lines = [json.loads(line) for line in text.splitlines()]
    assert [line["w"] for line in lines if line["k"] == "lc"] == ["starting", "error", "stopped"]
