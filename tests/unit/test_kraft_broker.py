"""A Kafka directory of version 4 or later is started as a KRaft node (Kafka 4 has no ZooKeeper
mode), and the KIP-848 group settings the lab gives it follow the run's timings."""

from __future__ import annotations

import pytest

from zkconsumer.errors import ServerError
from zkconsumer.testing.kraft import KraftBroker, consumer_group_props, is_kraft_version
from zkconsumer.testing.servers import kafka_broker


def _kafka_dir(root, version: str):
    home = root / f"kafka-{version}"
    (home / "bin").mkdir(parents=True)
    (home / "jars").mkdir()
    (home / "bin" / "broker.sh").write_text("#!/bin/sh\n")
    (home / "jars" / f"kafka_2.13-{version}.jar").write_text("")
    return home


@pytest.mark.parametrize(("version", "kraft"), [
    ("0.10.2.2", False), ("2.4.1", False), ("3.9.1", False), ("4.0.2", True), ("4.1.0", True),
    ("10.0.0", True),
])
def test_kafka_4_and_later_run_only_as_kraft_nodes(version, kraft):
    assert is_kraft_version(version) is kraft


def test_a_version_without_a_major_number_is_named():
    with pytest.raises(ServerError, match="Kafka version 'trunk' does not start with a major"):
        is_kraft_version("trunk")


def test_the_broker_spec_starts_the_kind_the_directory_holds(tmp_path):
    new, old = _kafka_dir(tmp_path, "4.0.2"), _kafka_dir(tmp_path, "2.4.1")
    kraft = kafka_broker("127.0.0.1:2181", f"kafka:{new}", ["a=1"], ["b=2"])
    zk_mode = kafka_broker("127.0.0.1:2181", f"kafka:{old}", ["a=1"], ["b=2"])
    try:
        assert isinstance(kraft, KraftBroker)
        assert kraft.props == ("a=1", "b=2")
        assert kraft.name == "apache-kafka-4.0.2"
        assert type(zk_mode).__name__ == "KafkaBroker"
        assert zk_mode.props == ("a=1",), "KIP-848 settings are not given to a 2.4.1 broker"
    finally:
        kraft.close()
        zk_mode.close()


def test_a_zookeeper_mode_directory_is_refused_as_a_kraft_broker(tmp_path):
    with pytest.raises(ServerError, match="holds Apache Kafka 2.4.1, which runs with ZooKeeper"):
        KraftBroker(None, _kafka_dir(tmp_path, "2.4.1"))


def test_the_group_session_follows_the_run_and_the_heartbeat_only_when_asked():
    assert consumer_group_props(6000, None) == (
        "group.consumer.session.timeout.ms=6000", "group.consumer.min.session.timeout.ms=6000")
    assert consumer_group_props(6000, 1000)[2:] == (
        "group.consumer.heartbeat.interval.ms=1000",
        "group.consumer.min.heartbeat.interval.ms=1000")
    assert consumer_group_props(60000, 8000)[1:] == (
        "group.consumer.min.session.timeout.ms=45000",
        "group.consumer.heartbeat.interval.ms=8000",
        "group.consumer.min.heartbeat.interval.ms=5000")


@pytest.mark.parametrize(("session", "heartbeat", "message"), [
    (6000, 6000, r"heartbeat interval \(6000 ms\) must be shorter than the session timeout "
                 r"\(6000 ms\)"),
    (4000, None, r"heartbeat interval \(5000 ms\) must be shorter"),
    (6000, 0, "must be >= 1 ms, got 0"),
])
def test_a_heartbeat_the_broker_would_refuse_is_named(session, heartbeat, message):
    with pytest.raises(ServerError, match=message):
        consumer_group_props(session, heartbeat)


def test_meta_json_records_the_kip848_heartbeat_of_a_kafka_4_run_only(tmp_path):
    import argparse

    from zkconsumer.cli.experiment import kip848_heartbeat

    new, old = _kafka_dir(tmp_path, "4.0.2"), _kafka_dir(tmp_path, "2.4.1")
    assert kip848_heartbeat(argparse.Namespace(broker=f"kafka:{new}",
                                               consumer_heartbeat_ms=1000)) == {
        "consumer_heartbeat_interval_ms": 1000,
        "consumer_heartbeat_source": "--consumer-heartbeat-ms"}
    assert kip848_heartbeat(argparse.Namespace(broker=f"kafka:{new}",
                                               consumer_heartbeat_ms=None)) == {
        "consumer_heartbeat_interval_ms": 5000, "consumer_heartbeat_source": "broker default"}
    assert kip848_heartbeat(argparse.Namespace(broker=f"kafka:{old}",
                                               consumer_heartbeat_ms=None)) == {}
    assert kip848_heartbeat(argparse.Namespace(broker="tansu", consumer_heartbeat_ms=1000)) == (
        "--consumer-heartbeat-ms is a setting of the Apache Kafka 4 broker the run starts: give "
        "--broker kafka:DIR with a Kafka 4 directory")


def test_only_a_kafka_4_spec_gets_kip848_settings(tmp_path, monkeypatch):
    from zkconsumer.testing.servers import is_kraft_spec

    monkeypatch.delenv("ZKCONSUMER_BOOTSTRAP", raising=False)
    new, old = _kafka_dir(tmp_path, "4.0.2"), _kafka_dir(tmp_path, "2.4.1")
    assert is_kraft_spec(f"kafka:{new}") is True
    assert [is_kraft_spec(s) for s in (f"kafka:{old}", "tansu", None, "127.0.0.1:9092")] == [
        False, False, False, False]
    monkeypatch.setenv("ZKCONSUMER_BOOTSTRAP", f"kafka:{new}")
    assert is_kraft_spec(None) is True


def test_spark_jobs_give_kafka_4_the_kip848_settings_and_record_the_heartbeat(tmp_path):
    import argparse

    from zkconsumer.spark.brokers import broker_command, broker_meta, kraft_props

    new, old = _kafka_dir(tmp_path, "4.0.2"), _kafka_dir(tmp_path, "2.4.1")

    def args(broker, hb, session=6000, bootstrap=None):
        return argparse.Namespace(broker=broker, consumer_heartbeat_ms=hb, bootstrap=bootstrap,
                                  session_timeout_ms=session)

    assert kraft_props(args(f"kafka:{new}", 1000)) == (
        "group.consumer.session.timeout.ms=6000", "group.consumer.min.session.timeout.ms=6000",
        "group.consumer.heartbeat.interval.ms=1000",
        "group.consumer.min.heartbeat.interval.ms=1000")
    assert broker_meta(args(f"kafka:{new}", 1000)) == {
        "broker": "apache-kafka-4.0.2", "consumer_heartbeat_interval_ms": 1000,
        "consumer_heartbeat_source": "--consumer-heartbeat-ms"}
    assert broker_meta(args(f"kafka:{old}", None)) == {"broker": "apache-kafka-2.4.1"}
    assert broker_meta(args(None, None)) == {"broker": "tansu-0.6.0"}
    assert broker_command(args(f"kafka:{new}", 1000)) == [
        "--broker", f"kafka:{new}", "--consumer-heartbeat-ms", "1000"]
    assert kraft_props(args(f"kafka:{old}", None)) == ()
    with pytest.raises(ValueError, match="--consumer-heartbeat-ms 1000: a setting of the Apache "
                                         "Kafka 4 broker"):
        kraft_props(args(f"kafka:{old}", 1000))
    with pytest.raises(ValueError, match=r"heartbeat interval \(5000 ms\) must be shorter than "
                                         r"the session timeout \(4000 ms\)"):
        kraft_props(args(f"kafka:{new}", None, session=4000))
