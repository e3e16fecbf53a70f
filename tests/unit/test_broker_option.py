"""``--broker`` names a broker the same way everywhere, and a bad one is refused before anything
starts, naming the bad value."""

from __future__ import annotations

import argparse

import pytest

from zkconsumer.cli.experiment_args import finish_command
from zkconsumer.lab.broker_option import broker_conflict, broker_spec, check_servers


def test_tansu_and_a_kafka_directory_are_accepted(tmp_path):
    home = tmp_path / "kafka"
    (home / "bin").mkdir(parents=True)
    (home / "jars").mkdir()
    (home / "bin" / "broker.sh").write_text("#!/bin/sh\n")
    (home / "jars" / "kafka_2.11-2.4.1.jar").write_text("")
    assert broker_spec("tansu") == "tansu"
    assert broker_spec(f"kafka:{home}") == f"kafka:{home}"


@pytest.mark.parametrize(("spec", "message"), [
    ("redpanda", "'redpanda': choose tansu, kafka or kafka:DIR"),
    ("kafka:/nowhere/kafka-9", "Kafka directory '/nowhere/kafka-9' does not exist"),
])
def test_a_bad_broker_is_refused_naming_it(spec, message):
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        broker_spec(spec)


def test_kafka_without_a_home_says_which_variable_to_set(monkeypatch):
    monkeypatch.delenv("ZKCONSUMER_KAFKA_HOME", raising=False)
    with pytest.raises(argparse.ArgumentTypeError, match="ZKCONSUMER_KAFKA_HOME"):
        broker_spec("kafka")


def test_starting_a_broker_and_naming_a_running_one_conflict():
    both = argparse.Namespace(broker="tansu", bootstrap="127.0.0.1:9092", zookeeper="zk:2181")
    assert broker_conflict(both) == ("--broker starts a broker; --bootstrap names a running "
                                     "one: give one of them")
    assert check_servers(argparse.Namespace(broker=None, bootstrap="b:1", zookeeper=None)) == (
        "--zookeeper and --bootstrap go together (or neither: embedded servers)")
    assert check_servers(argparse.Namespace(broker="tansu", bootstrap=None,
                                            zookeeper=None)) is None


def test_the_rerun_command_names_the_broker():
    args = argparse.Namespace(zookeeper=None, bootstrap=None, broker="kafka:../k", out="o")
    assert finish_command(["zkconsumer", "x"], args) == "zkconsumer x --broker kafka:../k --out o"
