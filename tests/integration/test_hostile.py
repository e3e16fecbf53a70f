"""Corrupt and foreign znodes, unreachable servers, a topic deleted under a running group.

Every scenario runs a real connector against the session's ZooKeeper and broker, damages what it
reads with a second client, and checks what a user notices: the group keeps consuming, healthy
partitions resume from their committed offsets, each bad znode is reported once (not on every
rebalance), and unreachable servers give clear errors or warnings instead of crashes.
"""

from __future__ import annotations

import logging
import socket
import threading
import time

import pytest
from connector_helpers import StreamDrain, committed, fast_config, owners, wait_until
from kazoo.client import KazooClient

from zkconsumer import ZookeeperConsumerConnector
from zkconsumer.admin import produce
from zkconsumer.errors import ZooKeeperUnavailable
from zkconsumer.faults import FaultProxy
from zkconsumer.zk import codec, paths


class Events:
    """Collects a connector's events (thread-safe) for assertions."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.items: list[dict] = []

    def __call__(self, event: dict) -> None:
        with self._lock:
            self.items.append(event)

    def of(self, kind: str) -> list[dict]:
        with self._lock:
            return [e for e in self.items if e["type"] == kind]

    def corrupt_paths(self) -> list[str]:
        return [e["path"] for e in self.of("corrupt_znode")]


def _values(topic: str, partition: int, n: int) -> list[bytes]:
    return [f"{topic}-{partition}-{i}".encode() for i in range(n)]


def test_foreign_registrations_and_a_topic_without_partitions_are_skipped_and_reported_once(
        zk_connect, broker, new_topic, unique, kazoo_client, caplog):
    """With the opt-in skipping policy (the default, fail as the original does, is tested in
    test_original_interop.py)."""
    topic, group = new_topic(4), unique("g")
    broken_topic = unique("topic")  # exists only as a znode without "partitions"
    kazoo_client.create(paths.topic(broken_topic), b'{"version":1}', makepath=True)
    for p in range(4):
        produce(broker.bootstrap, topic, _values(topic, p, 3), partition=p)
    events = Events()
    conn = ZookeeperConsumerConnector(fast_config(
        zk_connect, group, consumer_id="healthy",
        **{"zkconsumer.unreadable.registration.policy": "skip"}))
    conn.add_event_listener(events)
    caplog.set_level(logging.WARNING, logger="zkconsumer.zk.corrupt")
    try:
        streams = conn.create_message_streams({topic: 1, broken_topic: 1})
        drain = StreamDrain([*streams[topic], *streams[broken_topic]])
        ids = paths.consumer_ids(group)
        foreign = {
            f"{ids}/not-json": b"\x00\xffgarbage",
            f"{ids}/wrong-shape": b'{"version":1,"subscription":["t"]}',
            f"{ids}/traversal": b'{"version":1,"subscription":{"../../brokers":1},'
                                b'"pattern":"static","timestamp":"1"}',
            f"{ids}/bad name": b'{"version":1,"subscription":{"t":1},"pattern":"static"}',
        }
        # A broker registration nobody can parse: ignored, the real broker still serves.
        bad_broker = paths.broker(6000 + int(group.rsplit("-", 1)[1]) % 1000)
        kazoo_client.create(bad_broker, b'{"version":2,"endpoints":"PLAINTEXT"}',
                            ephemeral=True)
        for path, data in foreign.items():  # each one is a membership change: a rebalance
            kazoo_client.create(path, data)
        wait_until(lambda: set(events.corrupt_paths()) >= set(foreign), 30,
                   "every foreign registration to be reported")
        # The healthy member still owns every partition of the healthy topic and consumes it.
        mine = {p: f"{group}_healthy-0" for p in range(4)}
        wait_until(lambda: owners(kazoo_client, group, topic) == mine, 30,
                   "the healthy member to own every partition once the rebalances settle")
        assert owners(kazoo_client, group, broken_topic) == {}
        expected = {v for p in range(4) for v in _values(topic, p, 3)}
        wait_until(lambda: drain.values() >= expected, 30, "the healthy topic's messages")
        # More rebalances re-read the same bytes: still one report per znode.
        # Its own registration overwritten: the next attempt writes it back.
        own = paths.consumer_registration(group, conn.consumer_id)
        kazoo_client.set(own, b"{}")
        before = conn.metrics()["rebalances"]
        kazoo_client.create(f"{ids}/{group}_late", codec.encode_registration(
            codec.ConsumerRegistration(((topic, 1),))), ephemeral=True)
        kazoo_client.delete(f"{ids}/{group}_late")
        wait_until(lambda: conn.metrics()["rebalances"] >= before + 1, 30, "another rebalance")
        reported = events.corrupt_paths()
        assert sorted(reported) == sorted({*foreign, paths.topic(broken_topic), bad_broker,
                                           own}), reported
        assert codec.decode_registration(own, kazoo_client.get(own)[0]).subscription == (
            (topic, 1), (broken_topic, 1))
        wait_until(lambda: owners(kazoo_client, group, topic) == mine, 30, "ownership again")
        logged = [r.getMessage() for r in caplog.records if "corrupt znode" in r.getMessage()]
        assert len(logged) == len(reported) and all(
            any(path in line for line in logged) for path in reported)
        assert conn.metrics()["rebalance_failures"] == 0
        drain.stop()
        assert not drain.errors
    finally:
        conn.shutdown()


def test_garbage_offsets_and_owners_never_cost_healthy_partitions_their_offsets(
        zk_connect, broker, new_topic, unique, kazoo_client):
    topic, group = new_topic(4), unique("g")
    for p in range(4):
        produce(broker.bootstrap, topic, _values(topic, p, 5), partition=p)
    kazoo_client.create(paths.offset(group, topic, 0), b"2", makepath=True)
    kazoo_client.create(paths.offset(group, topic, 1), b"not-a-number", makepath=True)
    kazoo_client.create(paths.offset(group, topic, 2), b"3", makepath=True)
    # p3: no offset. A persistent owner znode of garbage (no member writes persistent owners).
    kazoo_client.create(paths.owner(group, topic, 3), b"\xff\xfe", makepath=True)
    # An ephemeral owner held by a live foreign session: a conflict until that session ends.
    hostile = KazooClient(hosts=zk_connect)
    hostile.start(timeout=15)
    hostile.create(paths.owner(group, topic, 2), b"<script>", ephemeral=True)
    events = Events()
    conn = ZookeeperConsumerConnector(fast_config(zk_connect, group, consumer_id="c"))
    conn.add_event_listener(events)
    result: dict = {}
    starter = threading.Thread(target=lambda: result.setdefault(
        "streams", conn.create_message_streams({topic: 1})), daemon=True)
    try:
        starter.start()
        wait_until(lambda: events.of("owner_conflict"), 30, "the foreign owner to conflict")
        hostile.stop()
        hostile.close()
        starter.join(60)
        assert "streams" in result, "the first rebalance did not succeed after the conflict"
        assert owners(kazoo_client, group, topic) == {p: f"{group}_c-0" for p in range(4)}
        drain = StreamDrain(result["streams"][topic])
        # p0 and p2 resume from their commits; p1 (garbage) and p3 (none) start at smallest.
        expected = ({*_values(topic, 0, 5)[2:], *_values(topic, 1, 5), *_values(topic, 2, 5)[3:],
                     *_values(topic, 3, 5)})
        wait_until(lambda: drain.values() >= expected, 30, "the expected messages")
        time.sleep(0.5)  # anything delivered below a committed offset would show up here
        assert drain.values() == expected
        conn.commit_offsets()
        assert committed(kazoo_client, group, topic, 4) == {p: 5 for p in range(4)}
        reported = set(events.corrupt_paths())
        assert {paths.offset(group, topic, 1), paths.owner(group, topic, 3),
                paths.owner(group, topic, 2)} <= reported
        assert len(events.corrupt_paths()) == len(reported)  # once each
        drain.stop()
    finally:
        conn.shutdown()
        if hostile.connected:
            hostile.stop()
            hostile.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_zookeeper_is_a_clear_error_after_the_connection_timeout(unique):
    connect = f"127.0.0.1:{_free_port()}/some/chroot"
    conn = ZookeeperConsumerConnector({"zookeeper.connect": connect, "group.id": unique("g"),
                                       "zookeeper.connection.timeout.ms": 1500})
    started = time.monotonic()
    with pytest.raises(ZooKeeperUnavailable) as info:
        conn.create_message_streams({"t": 1})
    assert time.monotonic() - started >= 1.4  # it waited the configured time, no less
    assert connect in str(info.value) and "zookeeper.connection.timeout.ms" in str(info.value)
    conn.shutdown()


@pytest.mark.filterwarnings("ignore:No chroot path exists")
def test_missing_chroot_is_a_clear_error(zk_connect, unique):
    connect = f"{zk_connect}/{unique('no-such-chroot')}"
    conn = ZookeeperConsumerConnector({"zookeeper.connect": connect, "group.id": unique("g")})
    with pytest.raises(ZooKeeperUnavailable, match="does not exist"):
        conn.start()
    conn.shutdown()


def test_unreachable_broker_is_retried_with_a_warning_until_it_answers(
        zk_connect, broker, new_topic, unique, kazoo_client, caplog):
    topic, group = new_topic(2), unique("g")
    for p in range(2):
        produce(broker.bootstrap, topic, _values(topic, p, 3), partition=p)
    host, port = broker.bootstrap.split(",")[0].rsplit(":", 1)
    proxy = FaultProxy(host, int(port), name="hostile-broker").start()
    proxy.refuse(True)
    # A second broker id reachable only through the proxy leads both partitions.
    bogus_id = 7000 + int(unique("b").rsplit("-", 1)[1]) % 1000
    reg = codec.BrokerRegistration(bogus_id, "127.0.0.1", proxy.port,
                                   (f"PLAINTEXT://{proxy.address}",))
    kazoo_client.create(paths.broker(bogus_id), codec.encode_broker(reg), ephemeral=True)
    for p in range(2):
        kazoo_client.set(paths.partition_state(topic, p), codec.encode_partition_state(
            codec.PartitionState(leader=bogus_id, isr=(bogus_id,))))
    caplog.set_level(logging.WARNING, logger="zkconsumer")
    conn = ZookeeperConsumerConnector(fast_config(
        zk_connect, group, consumer_id="c", socket_timeout_ms=1000, refresh_leader_backoff_ms=200))
    try:
        streams = conn.create_message_streams({topic: 1})
        drain = StreamDrain(streams[topic])
        assert owners(kazoo_client, group, topic) == {0: f"{group}_c-0", 1: f"{group}_c-0"}
        lookups = conn.metrics()["zookeeper"]["requests"]["getData"]
        wait_until(lambda: any(proxy.address in r.getMessage() and r.levelno == logging.WARNING
                               for r in caplog.records), 30, "a warning naming the broker")
        # The leader finder keeps coming back (every refresh.leader.backoff.ms) ...
        wait_until(lambda: conn.metrics()["zookeeper"]["requests"]["getData"] >= lookups + 4, 30,
                   "leader lookups to be retried")
        assert drain.count() == 0 and not drain.errors
        assert conn.metrics()["rebalancer_state"] == "idle"
        # ... and once the broker answers, everything is delivered.
        proxy.refuse(False)
        expected = {v for p in range(2) for v in _values(topic, p, 3)}
        wait_until(lambda: drain.values() >= expected, 60, "delivery after the broker is back")
        drain.stop()
        assert not drain.errors
    finally:
        conn.shutdown()
        proxy.stop()
        for p in range(2):
            kazoo_client.set(paths.partition_state(topic, p), codec.encode_partition_state(
                codec.PartitionState(leader=0, isr=(0,))))


def test_a_topic_deleted_while_consumed_is_dropped_by_a_rebalance(
        zk_connect, broker, new_topic, unique, kazoo_client):
    kept, doomed, group = new_topic(2), new_topic(2), unique("g")
    conn = ZookeeperConsumerConnector(fast_config(zk_connect, group, consumer_id="c"))
    try:
        streams = conn.create_message_streams({kept: 1, doomed: 1})
        drain = StreamDrain([*streams[kept], *streams[doomed]])
        assert len(conn.owned_partitions()) == 4
        before = conn.metrics()["rebalances"]
        kazoo_client.delete(paths.topic(doomed), recursive=True)
        wait_until(lambda: {tp.topic for tp in conn.owned_partitions()} == {kept}
                   and conn.metrics()["rebalances"] > before, 30,
                   "a rebalance to drop the deleted topic's partitions")
        assert owners(kazoo_client, group, doomed) == {}
        assert owners(kazoo_client, group, kept) == {0: f"{group}_c-0", 1: f"{group}_c-0"}
        produce(broker.bootstrap, kept, ["after-delete"], partition=1)
        wait_until(lambda: b"after-delete" in drain.values(), 30, "the kept topic to flow")
        drain.stop()
        assert not drain.errors
    finally:
        conn.shutdown()
