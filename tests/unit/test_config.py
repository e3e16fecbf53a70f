"""ConsumerConfig: legacy names, the original's defaults, errors naming property and value."""

from __future__ import annotations

import pytest

from zkconsumer import ConsumerConfig
from zkconsumer.errors import InvalidConfig

BASE = {"zookeeper.connect": "127.0.0.1:2181", "group.id": "g"}


def cfg(**props: object) -> ConsumerConfig:
    return ConsumerConfig({**BASE, **{k.replace("_", "."): v for k, v in props.items()}})


def test_defaults_are_the_originals():
    c = ConsumerConfig(BASE)
    assert c.as_properties() == {
        "zookeeper.connect": "127.0.0.1:2181", "zookeeper.session.timeout.ms": 6000,
        "zookeeper.connection.timeout.ms": 6000, "zookeeper.sync.time.ms": 2000,
        "group.id": "g", "consumer.id": None, "socket.timeout.ms": 30000,
        "socket.receive.buffer.bytes": 65536, "fetch.message.max.bytes": 1048576,
        "num.consumer.fetchers": 1, "auto.commit.enable": True, "auto.commit.interval.ms": 60000,
        "queued.max.message.chunks": 2, "rebalance.max.retries": 4, "fetch.min.bytes": 1,
        "fetch.wait.max.ms": 100, "rebalance.backoff.ms": 2000, "refresh.leader.backoff.ms": 200,
        "offsets.channel.backoff.ms": 1000, "offsets.channel.socket.timeout.ms": 10000,
        "offsets.commit.max.retries": 5, "offsets.storage": "zookeeper",
        "dual.commit.enabled": False,
        "auto.offset.reset": "largest",
        "consumer.timeout.ms": -1, "client.id": "g", "exclude.internal.topics": True,
        "partition.assignment.strategy": "range", "zkconsumer.session.lost.policy": "legacy",
        "zkconsumer.unreadable.registration.policy": "fail",
        "coordination.mode": "legacy", "zookeeper.pause.fetchers.on.disconnect": False,
        "zookeeper.auth": None, "zookeeper.acl": "open",
    }


def test_derived_defaults_follow_their_source_property():
    c = cfg(zookeeper_session_timeout_ms=4000, zookeeper_sync_time_ms=300, group_id="grp")
    assert c.zookeeper_connection_timeout_ms == 4000
    assert c.rebalance_backoff_ms == 300  # KAFKA-2589: not a fixed 2000
    assert c.client_id == "grp"


def test_strings_and_typed_values_are_both_accepted():
    c = ConsumerConfig({**BASE, "auto.commit.enable": "false", "rebalance.max.retries": "7",
                        "consumer.timeout.ms": 2000, "exclude.internal.topics": False})
    assert (c.auto_commit_enable, c.rebalance_max_retries) == (False, 7)
    assert (c.consumer_timeout_ms, c.exclude_internal_topics) == (2000, False)
    assert c.get("rebalance.max.retries") == 7


@pytest.mark.parametrize("props, fragment", [
    ({"partition.assignment.strategy": "sticky"},
     "Wrong value sticky of partition.assignment.strategy"),
    ({"auto.offset.reset": "earliest"}, "Wrong value earliest of auto.offset.reset"),
    ({"rebalance.backoff.ms": -5}, "rebalance.backoff.ms must be >= 0, got -5"),
    ({"zookeeper.session.timeout.ms": -1}, "zookeeper.session.timeout.ms must be >= 1, got -1"),
    ({"socket.timeout.ms": 0}, "socket.timeout.ms must be >= 1, got 0"),
    ({"group.id": "bad/name"}, "group.id 'bad/name' is illegal"),
    ({"group.id": "a b"}, "group.id 'a b' is illegal"),
    ({"client.id": "x*"}, "client.id 'x*' is illegal"),
    ({"auto.commit.enable": "yes"}, "'auto.commit.enable', boolean values must be"),
    ({"rebalance.max.retries": "four"}, "rebalance.max.retries must be an integer, got 'four'"),
    ({"offsets.storage": "etcd"}, "Wrong value etcd of offsets.storage"),
    ({"offsets.storage": "kafka", "coordination.mode": "leader"},
     "offsets.storage=kafka needs coordination.mode=legacy, got coordination.mode=leader"),
    ({"offsets.commit.max.retries": -1}, "offsets.commit.max.retries must be >= 0, got -1"),
    ({"offsets.channel.backoff.ms": "soon"},
     "offsets.channel.backoff.ms must be an integer, got 'soon'"),
    ({"offsets.channel.socket.timeout.ms": 0},
     "offsets.channel.socket.timeout.ms must be >= 1, got 0"),
    ({"fetch.wait.max.ms": 5000, "socket.timeout.ms": 1000}, "socket.timeout.ms should always"),
    ({"auto.comit.enable": "true"}, "unknown consumer properties: 'auto.comit.enable'"),
])
def test_bad_values_name_the_property_and_the_value(props, fragment):
    with pytest.raises(InvalidConfig) as err:
        ConsumerConfig({**BASE, **props})
    assert fragment in str(err.value)


@pytest.mark.parametrize("missing", ["group.id", "zookeeper.connect"])
def test_required_properties(missing):
    props = dict(BASE)
    del props[missing]
    with pytest.raises(InvalidConfig, match=f"Missing required property '{missing}'"):
        ConsumerConfig(props)


def test_negative_consumer_timeout_means_block_forever_and_is_legal():
    assert cfg(consumer_timeout_ms=-1).consumer_timeout_ms == -1


def test_kafka_storage_turns_dual_commit_on_unless_told_otherwise():
    c = ConsumerConfig({**BASE, "offsets.storage": "Kafka", "offsets.commit.max.retries": "2",
                        "offsets.channel.backoff.ms": 50})
    assert (c.offsets_storage, c.dual_commit_enabled) == ("kafka", True)
    assert (c.offsets_commit_max_retries, c.offsets_channel_backoff_ms) == (2, 50)
    assert c.offsets_channel_socket_timeout_ms == 10000
    off = ConsumerConfig({**BASE, "offsets.storage": "kafka", "dual.commit.enabled": "false"})
    assert (off.offsets_storage, off.dual_commit_enabled) == ("kafka", False)


def test_unused_legacy_keys_load_and_the_config_is_immutable():
    c = ConsumerConfig({**BASE, "fetch.max.bytes": "100", "mirror.consumer.numthreads": 5,
                        "external.thing": "x"})
    with pytest.raises(AttributeError):
        c.group_id = "other"  # type: ignore[misc]
    assert c == ConsumerConfig(c) and hash(c) == hash(ConsumerConfig(c))


def test_unreadable_registration_policy_is_fail_or_skip_and_named_when_wrong():
    base = {"zookeeper.connect": "zk:2181", "group.id": "g"}
    assert ConsumerConfig(base).unreadable_registration_policy == "fail"
    skip = ConsumerConfig({**base, "zkconsumer.unreadable.registration.policy": "skip"})
    assert skip.unreadable_registration_policy == "skip"
    with pytest.raises(InvalidConfig, match="ignore of zkconsumer.unreadable.registration.policy"):
        ConsumerConfig({**base, "zkconsumer.unreadable.registration.policy": "ignore"})
