"""Which directories are Kafka directories: the project's builds and Apache's binary
distributions are both recognised, and anything else is refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from zkconsumer.errors import ServerError
from zkconsumer.testing.kafka import (
    KAFKA_HOME_ENV,
    KafkaBroker,
    KafkaLayout,
    check_kafka_home,
    distribution_env,
    find_kafka_home,
    kafka_layout,
    kafka_version,
    server_properties,
    version_matches,
)


def touch(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")


def official_distribution(root: Path, scala: str = "2.11", version: str = "0.10.2.2") -> Path:
    """The files of kafka_<scala>-<version>.tgz that layout recognition reads (jars left empty),
    with the extra jars a release ships beside the broker's."""
    for name in ("bin/kafka-server-start.sh", "bin/kafka-run-class.sh",
                 "bin/zookeeper-server-start.sh", "config/server.properties",
                 "config/log4j.properties",
                 f"libs/kafka_{scala}-{version}-javadoc.jar",
                 f"libs/kafka_{scala}-{version}-sources.jar",
                 f"libs/kafka_{scala}-{version}-test.jar",
                 f"libs/kafka-clients-{version}.jar", f"libs/kafka_{scala}-{version}.jar"):
        touch(root / name)
    return root


def shared_build(root: Path, version: str = "2.4.1") -> Path:
    for name in ("bin/broker.sh", "bin/env.sh", f"jars/kafka_2.11-{version}.jar"):
        touch(root / name)
    return root


def test_an_official_binary_distribution_is_a_kafka_directory(tmp_path):
    home = official_distribution(tmp_path / "kafka_2.11-0.10.2.2")
    assert kafka_layout(home) is KafkaLayout.DISTRIBUTION
    assert kafka_version(home) == "0.10.2.2"
    assert check_kafka_home(home) == home.resolve()
    broker = KafkaBroker("127.0.0.1:1", home)  # nothing starts before start()
    assert (broker.version, broker.name) == ("0.10.2.2", "apache-kafka-0.10.2.2")


def test_a_shared_build_is_a_kafka_directory(tmp_path):
    home = shared_build(tmp_path / "kafka-2.4.1")
    assert kafka_layout(home) is KafkaLayout.LAUNCHER
    assert kafka_version(home) == "2.4.1"


def test_a_directory_of_neither_layout_is_refused_naming_it_and_what_it_lacks(tmp_path):
    home = tmp_path / "kafka_2.12-2.4.1"
    touch(home / "bin" / "kafka-server-start.sh")
    touch(home / "libs" / "kafka_2.12-2.4.1-sources.jar")  # not the broker's jar
    assert kafka_layout(home) is None
    with pytest.raises(ServerError) as err:
        check_kafka_home(home)
    assert str(err.value) == (
        f"{str(home)!r} is not a Kafka directory: as an Apache Kafka binary distribution it "
        "lacks bin/kafka-run-class.sh, config/server.properties, "
        "libs/kafka_<scala>-<version>.jar; as a build laid out like ../shared/kafka-2.4.1 it "
        "lacks bin/broker.sh, jars/kafka_<scala>-<version>.jar (see docs/brokers.md)")
    with pytest.raises(ServerError, match=f"^Kafka directory '{tmp_path}/nope' does not exist$"):
        KafkaBroker("127.0.0.1:1", tmp_path / "nope")


def test_a_build_is_found_in_the_variable_or_beside_the_checkout(tmp_path):
    checkout_file = tmp_path / "work" / "checkout" / "zkconsumer" / "testing" / "kafka.py"
    touch(checkout_file)
    dist = official_distribution(tmp_path / "downloads" / "kafka_2.11-0.10.2.2")
    env = {KAFKA_HOME_ENV: str(dist)}
    assert find_kafka_home("0.10.2", checkout_file, env) == dist.resolve()
    assert find_kafka_home("2.4.1", checkout_file, env) is None  # the variable holds 0.10.2.2
    assert find_kafka_home("0.10.2", checkout_file, {}) is None
    beside = official_distribution(tmp_path / "work" / "shared" / "kafka-0.10.2")
    assert find_kafka_home("0.10.2", checkout_file, {}) == beside
    shared = shared_build(tmp_path / "work" / "shared" / "kafka-2.4.1")
    assert find_kafka_home("2.4.1", checkout_file, env) == shared
    with pytest.raises(ServerError, match="is not a Kafka directory"):
        find_kafka_home("0.10.2", checkout_file, {KAFKA_HOME_ENV: str(tmp_path / "downloads")})


@pytest.mark.parametrize(("found", "wanted", "matches"), [
    ("0.10.2.2", "0.10.2", True), ("0.10.2.2", "0.10.2.2", True), ("4.0.2", "4.0", True),
    ("0.10.20", "0.10.2", False), ("2.4.1", "0.10.2", False), ("2.4", "2.4.1", False)])
def test_a_build_name_matches_the_releases_it_prefixes(found, wanted, matches):
    assert version_matches(found, wanted) is matches


def test_a_distribution_broker_gets_the_launchers_settings_then_the_callers(tmp_path):
    text = server_properties(3, 9093, tmp_path / "data", "127.0.0.1:2181/k",
                             ["offsets.topic.num.partitions=1"])
    lines = text.splitlines()
    assert lines[:5] == ["broker.id=3", "listeners=PLAINTEXT://127.0.0.1:9093",
                         "advertised.listeners=PLAINTEXT://127.0.0.1:9093",
                         f"log.dirs={tmp_path / 'data'}", "zookeeper.connect=127.0.0.1:2181/k"]
    assert lines[-1] == "offsets.topic.num.partitions=1"  # last, so it wins over the default
    assert "offsets.topic.num.partitions=4" in lines and text.endswith("\n")


def test_a_distribution_runs_on_java_17_without_gc_log_flags(tmp_path):
    env = distribution_env({"KAFKA_OPTS": "-Dx=1", "KAFKA_HEAP_OPTS": "-Xmx2g"}, tmp_path)
    assert env["EXTRA_ARGS"] == "-name kafkaServer"  # no -loggc
    assert env["LOG_DIR"] == str(tmp_path)
    assert env["KAFKA_HEAP_OPTS"] == "-Xmx2g"
    assert env["KAFKA_OPTS"] == ("-Dx=1 --add-exports java.base/sun.nio.ch=ALL-UNNAMED "
                                 "--add-exports java.base/jdk.internal.ref=ALL-UNNAMED")
    assert distribution_env({}, tmp_path)["KAFKA_HEAP_OPTS"] == "-Xmx512m"
