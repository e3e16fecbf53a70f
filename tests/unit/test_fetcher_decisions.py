"""The fetcher's pure decisions: fetcher ids as Kafka computes them, offset resets, settings."""

from __future__ import annotations

from zkconsumer.config import ConsumerConfig
from zkconsumer.datapath.fetcher import client_config, reset_offset
from zkconsumer.datapath.partition_leaders import fetcher_id
from zkconsumer.identity import java_string_hash


def test_java_string_hash_matches_java() -> None:
    assert java_string_hash("") == 0
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    assert java_string_hash("polygenelubricants") == -(2**31)  # Integer.MIN_VALUE
    assert java_string_hash("topic-with-a-long-name") < 0  # 32-bit overflow, signed


def test_fetcher_id_uses_java_int_arithmetic_and_kafkas_abs() -> None:
    # 31 * MIN_VALUE + 0 overflows back to MIN_VALUE, which Kafka's Utils.abs maps to 0;
    # a Python abs() would give 2**31 % 3 == 2.
    assert fetcher_id("polygenelubricants", 0, 3) == 0
    assert fetcher_id("hello", 0, 1) == 0
    # 31 * 99162322 + 1 = 3074031983 -> int32 -1220935313 -> abs 1220935313
    assert fetcher_id("hello", 1, 7) == 1220935313 % 7
    ids = {fetcher_id("t", p, 4) for p in range(8)}
    assert ids == {0, 1, 2, 3}  # consecutive partitions spread over the fetchers


def test_auto_offset_reset_picks_log_start_or_log_end() -> None:
    assert reset_offset("smallest", 3, 10) == 3
    assert reset_offset("largest", 3, 10) == 10


def test_client_settings_map_the_legacy_fetch_properties() -> None:
    config = ConsumerConfig({
        "zookeeper.connect": "127.0.0.1:2181", "group.id": "g", "client.id": "app",
        "fetch.message.max.bytes": "2097152", "fetch.min.bytes": "10", "fetch.wait.max.ms": "250",
        "socket.timeout.ms": "5000", "socket.receive.buffer.bytes": "131072"})
    settings = client_config(config, "h:9092")
    assert settings["bootstrap.servers"] == "h:9092"
    assert settings["client.id"] == "app"
    assert settings["max.partition.fetch.bytes"] == 2097152
    assert settings["fetch.min.bytes"] == 10
    assert settings["fetch.wait.max.ms"] == 250
    assert settings["socket.timeout.ms"] == 5000
    assert settings["socket.receive.buffer.bytes"] == 131072
    # librdkafka's prefetch: four fetch sizes (2 MiB each here), in KiB.
    assert settings["queued.max.messages.kbytes"] == 4 * 2048
    # No broker-side group, no commits by the client: the connector owns offsets.
    assert settings["enable.auto.commit"] is False
    assert settings["enable.auto.offset.store"] is False
    assert settings["auto.offset.reset"] == "error"  # applied by the fetcher, as the original
