"""``offsets.storage=kafka`` and dual commit on real ZooKeeper and the embedded broker (Tansu).

The connector commits to the broker as a non-member (generation -1, no member id), reads back
from there, takes the larger offset when dual commit is on, and retries an unreachable
coordinator as the original did (a fault proxy in front of the broker) before failing loudly.
"""

from __future__ import annotations

import logging
import threading

import pytest
from connector_helpers import StreamDrain, committed, fast_config, wait_until

from zkconsumer import ZookeeperConsumerConnector
from zkconsumer.admin import produce
from zkconsumer.admin.kafka_group import commit_broker_offsets, fetch_broker_offsets
from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.events import EventBus
from zkconsumer.identity import TopicPartition
from zkconsumer.lab.splitbrain.proxies import broker_proxy
from zkconsumer.metrics import RebalanceMetrics, ZkRequestCounter
from zkconsumer.offsets.kafka import (
    BrokerOffsetChannel,
    KafkaOffsetStore,
    OffsetCommitFailed,
    OffsetFetchInterrupted,
)
from zkconsumer.zk import codec, paths
from zkconsumer.zk.session import ZkSession

PARTS = 2


def _consume(zk_connect, group, topic, want, **overrides):
    """One member consumes until ``want`` messages arrived, then shuts down (committing)."""
    conn = ZookeeperConsumerConnector(fast_config(zk_connect, group, **overrides))
    streams = conn.create_message_streams({topic: 1})
    drain = StreamDrain(streams[topic])
    try:
        wait_until(lambda: drain.count() >= want, 30, f"{want} messages")
    finally:
        drain.stop()
        conn.shutdown()
    assert drain.errors == []  # a drain thread that died would have dropped its stream
    return drain


def _first_offsets(drain):
    first: dict[int, int] = {}
    for m in drain.messages:
        first[m.partition] = min(first.get(m.partition, m.offset), m.offset)
    return first


def test_kafka_storage_commits_to_the_broker_only_and_the_next_member_resumes_there(
        zk_connect, broker, new_topic, unique, kazoo_client):
    topic, group = new_topic(PARTS), unique("kg")
    produce(broker.bootstrap, topic, [b"m%d" % i for i in range(40)])
    kafka_only = {"offsets_storage": "kafka", "dual_commit_enabled": "false"}
    first = _consume(zk_connect, group, topic, 40, **kafka_only)
    assert first.count() == 40
    stored = fetch_broker_offsets(broker.bootstrap, group, [(topic, p) for p in range(PARTS)])
    ends = {p: 1 + max(m.offset for m in first.messages if m.partition == p)
            for p in range(PARTS)}
    assert stored == {(topic, p): ends[p] for p in range(PARTS)}
    assert committed(kazoo_client, group, topic, PARTS) == dict.fromkeys(range(PARTS), -1)
    produce(broker.bootstrap, topic, [b"n%d" % i for i in range(10)])
    second = _consume(zk_connect, group, topic, 10, **kafka_only)
    assert second.values() == {b"n%d" % i for i in range(10)}
    assert _first_offsets(second) == {p: ends[p] for p in _first_offsets(second)}


def test_dual_commit_writes_both_and_a_fetch_takes_the_larger_offset(
        zk_connect, broker, new_topic, unique, kazoo_client):
    topic, group = new_topic(PARTS), unique("kg")
    produce(broker.bootstrap, topic, [b"m%d" % i for i in range(30)])
    first = _consume(zk_connect, group, topic, 30, offsets_storage="kafka")  # dual by default
    in_zk = committed(kazoo_client, group, topic, PARTS)
    in_kafka = fetch_broker_offsets(broker.bootstrap, group, [(topic, p) for p in range(PARTS)])
    assert first.count() == 30
    assert {(topic, p): o for p, o in in_zk.items()} == in_kafka
    # Partition 0: ZooKeeper ahead (a member still on ZooKeeper storage committed there);
    # partition 1: Kafka ahead. A dual-commit member must start at the larger of the two.
    produce(broker.bootstrap, topic, [b"n%d" % i for i in range(40)])
    kazoo_client.set(paths.offset(group, topic, 0), codec.encode_offset(in_zk[0] + 5))
    commit_broker_offsets(broker.bootstrap, group, {(topic, 1): in_zk[1] + 7})
    second = _consume(zk_connect, group, topic, 40 - 12, offsets_storage="kafka")
    assert _first_offsets(second) == {0: in_zk[0] + 5, 1: in_zk[1] + 7}
    assert second.count() == 40 - 12


def _store(session, zk_connect, group, bootstrap, **overrides):
    cfg = fast_config(zk_connect, group, offsets_storage="kafka",
                      offsets_channel_backoff_ms=200, offsets_channel_socket_timeout_ms=1000,
                      **overrides)
    stopping = threading.Event()
    channel = BrokerOffsetChannel(group, "retry-test", lambda: bootstrap,
                                  cfg.offsets_channel_socket_timeout_ms)
    store = KafkaOffsetStore(session, cfg, EventBus(f"{group}_c"), RebalanceMetrics(),
                             stopping.is_set, channel=channel)
    return store, stopping


def _infos(topic, offsets):
    return [PartitionTopicInfo(topic, p, None, o, o, f"t-{p}")  # type: ignore[arg-type]
            for p, o in offsets.items()]


@pytest.fixture
def zk_session(zk_connect):
    session = ZkSession(zk_connect, 6000, 6000, ZkRequestCounter(), name="offsets-test")
    session.start()
    yield session
    session.close()


def test_an_unreachable_coordinator_is_retried_then_the_commit_fails_naming_what_was_lost(
        zk_connect, broker, new_topic, unique, zk_session, kazoo_client, caplog):
    topic, group = new_topic(PARTS), unique("kg")
    proxy = broker_proxy(broker.bootstrap, "offsets-retry")
    try:
        store, _ = _store(zk_session, zk_connect, group, proxy.address,
                          offsets_commit_max_retries=2)
        assert store.commit_retrying(_infos(topic, {0: 3, 1: 4}), retries=2) == {
            TopicPartition(topic, 0): 3, TopicPartition(topic, 1): 4}
        proxy.blackhole()
        caplog.set_level(logging.WARNING, logger="zkconsumer.offsets.kafka")
        with pytest.raises(OffsetCommitFailed) as err:
            store.commit_retrying(_infos(topic, {0: 9, 1: 11}), retries=2)
        assert f"group {group!r}: offset commit to Kafka failed after 3 attempt(s)" in str(
            err.value)
        assert str(err.value).endswith(f"for {topic}-0, {topic}-1")
        warnings = [r for r in caplog.records if "error while committing offsets" in r.message]
        assert len(warnings) == 3
        # A rebalance's commit is one attempt, and it is reported instead of raised.
        caplog.clear()
        assert store.commit(_infos(topic, {0: 9, 1: 11})) == {}
        assert len([r for r in caplog.records
                    if "error while committing offsets" in r.message]) == 1
        # Dual commit wrote ZooKeeper only for what Kafka took: nothing moved past 3 / 4.
        assert committed(kazoo_client, group, topic, PARTS) == {0: 3, 1: 4}
        proxy.heal()
        proxy.close_connections()
        # What a release does before the next owner may claim: timed-out commits are sent or
        # failed by now, so none lands after the next owner's (offsets never go back to them).
        store.barrier()
        assert store.channel.settle(0)
        # synchronous: it returns once the broker stored both (and ZooKeeper was written)
        assert store.commit_retrying(_infos(topic, {0: 12, 1: 13}), retries=2) == {
            TopicPartition(topic, 0): 12, TopicPartition(topic, 1): 13}
        stored = fetch_broker_offsets(broker.bootstrap, group, [(topic, 0), (topic, 1)])
        assert stored == {(topic, 0): 12, (topic, 1): 13}
        assert committed(kazoo_client, group, topic, PARTS) == {0: 12, 1: 13}
    finally:
        proxy.stop()


def test_a_fetch_retries_until_the_coordinator_answers_and_stops_on_shutdown(
        zk_connect, broker, new_topic, unique, zk_session):
    topic, group = new_topic(PARTS), unique("kg")
    commit_broker_offsets(broker.bootstrap, group, {(topic, 0): 6, (topic, 1): 2})
    proxy = broker_proxy(broker.bootstrap, "offsets-fetch")
    try:
        store, stopping = _store(zk_session, zk_connect, group, proxy.address,
                                 dual_commit_enabled="false")
        proxy.blackhole()
        got: dict[str, object] = {}
        tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
        reader = threading.Thread(target=lambda: got.update(r=store.read(tps)), daemon=True)
        reader.start()
        # a third request means two of them timed out: the fetch is still waiting
        wait_until(lambda: store.channel.requests >= 3, 30, "two fetches to time out")
        assert reader.is_alive() and "r" not in got
        proxy.heal()
        proxy.close_connections()
        reader.join(20)
        assert got["r"] == {tps[0]: 6, tps[1]: 2}
        # Shutting down ends a fetch that cannot succeed instead of blocking forever.
        proxy.blackhole()
        stopping.set()
        with pytest.raises(OffsetFetchInterrupted, match="shut down while fetching offsets"):
            store.read(tps)
    finally:
        proxy.stop()
