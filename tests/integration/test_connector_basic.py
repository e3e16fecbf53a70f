"""One connector end to end: registration, ownership, consumption, commits, shutdown."""

from __future__ import annotations

import json

import pytest
from connector_helpers import StreamDrain, committed, fast_config, owners, wait_until

from zkconsumer import (
    ConsumerRebalanceFailedException,
    ConsumerTimeoutException,
    ZookeeperConsumerConnector,
)
from zkconsumer.admin import produce
from zkconsumer.errors import MessageStreamsExistException
from zkconsumer.zk import paths


def test_single_connector_consumes_commits_and_cleans_up(zk_connect, broker, new_topic, unique,
                                                        kazoo_client):
    topic, group = new_topic(4), unique("g")
    per_partition = {p: [f"{topic}-{p}-{i}".encode() for i in range(5)] for p in range(4)}
    for p, values in per_partition.items():
        produce(broker.bootstrap, topic, values, partition=p)
    cfg = fast_config(zk_connect, group, consumer_id="c1")
    with ZookeeperConsumerConnector(cfg) as conn:
        assert conn.consumer_id == f"{group}_c1"
        streams = conn.create_message_streams({topic: 2})
        assert list(streams) == [topic] and len(streams[topic]) == 2
        data, stat = kazoo_client.get(paths.consumer_registration(group, conn.consumer_id))
        reg = json.loads(data)
        assert reg["subscription"] == {topic: 2} and reg["pattern"] == "static"
        assert reg["version"] == 1 and isinstance(reg["timestamp"], str)
        assert stat.ephemeralOwner != 0
        assert owners(kazoo_client, group, topic) == {
            0: f"{group}_c1-0", 1: f"{group}_c1-0", 2: f"{group}_c1-1", 3: f"{group}_c1-1"}
        drain = StreamDrain(streams[topic])
        expected = {v for values in per_partition.values() for v in values}
        wait_until(lambda: drain.values() >= expected, 30, "all 20 messages")
        conn.commit_offsets()
        assert committed(kazoo_client, group, topic, 4) == {p: 5 for p in range(4)}
        m = conn.metrics()
        assert m["owned_partitions"] == 4 and m["messages_consumed"] >= 20
        assert m["zookeeper"]["requests"]["create"] >= 5
    wait_until(drain.ended, 10, "iterators to end after shutdown")
    assert not drain.errors
    assert kazoo_client.exists(paths.consumer_registration(group, f"{group}_c1")) is None
    assert owners(kazoo_client, group, topic) == {}


def test_consumer_timeout_twice_then_messages_and_an_empty_member_changes_nothing(
        zk_connect, broker, new_topic, unique, kazoo_client):
    """The original's testBasic, condensed."""
    topic, group = new_topic(2), unique("g")
    c1 = ZookeeperConsumerConnector(fast_config(zk_connect, group, consumer_id="consumer1"))
    c3 = ZookeeperConsumerConnector(fast_config(zk_connect, group, consumer_id="consumer3"))
    try:
        it = iter(c1.create_message_streams({topic: 1})[topic][0])
        for _ in range(2):  # the iterator stays usable after a timeout
            with pytest.raises(ConsumerTimeoutException):
                next(it)
        produce(broker.bootstrap, topic, ["x", "y"], partition=0)
        produce(broker.bootstrap, topic, ["z"], partition=1)
        got = set()
        while len(got) < 3:
            try:
                got.add(next(it).message)
            except ConsumerTimeoutException:
                pass
        assert got == {b"x", b"y", b"z"}
        before = owners(kazoo_client, group, topic)
        assert before == {0: f"{group}_consumer1-0", 1: f"{group}_consumer1-0"}
        assert c3.create_message_streams({}) == {}
        wait_until(lambda: c1.metrics()["rebalances"] >= 2, 20, "c1 to rebalance for c3")
        assert owners(kazoo_client, group, topic) == before
        with pytest.raises(MessageStreamsExistException):
            c3.create_message_streams({topic: 1})
        with pytest.raises(MessageStreamsExistException):
            c3.set_consumer_rebalance_listener(object())
    finally:
        c3.shutdown()
        c1.shutdown()
        c1.shutdown()  # idempotent


def test_rebalance_failure_raises_to_the_caller_and_a_later_trigger_recovers(
        zk_connect, broker, new_topic, unique, kazoo_client):
    topic, group = new_topic(2), unique("g")
    blocker = paths.owner(group, topic, 1)
    kazoo_client.create(blocker, b"someone-else-0", makepath=True)  # a stale foreign owner
    conn = ZookeeperConsumerConnector(fast_config(
        zk_connect, group, consumer_id="c", rebalance_max_retries=2, rebalance_backoff_ms=100))
    try:
        with pytest.raises(ConsumerRebalanceFailedException,
                           match=f"{group}_c can't rebalance after 2 retries"):
            conn.create_message_streams({topic: 1})
        assert owners(kazoo_client, group, topic) == {1: "someone-else-0"}, "rolled back"
        assert conn.metrics()["rebalance_failures"] == 1
        assert kazoo_client.exists(paths.consumer_registration(group, f"{group}_c"))
        kazoo_client.delete(blocker)
        # Any membership change wakes the (still running) rebalancer.
        kazoo_client.create(paths.consumer_registration(group, "nobody"),
                            b'{"version":1,"subscription":{},"pattern":"static"}',
                            ephemeral=True)
        wait_until(lambda: owners(kazoo_client, group, topic)
                   == {0: f"{group}_c-0", 1: f"{group}_c-0"}, 20, "recovery on the next trigger")
    finally:
        conn.shutdown()
