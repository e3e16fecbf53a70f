"""The fetcher manager against a real ZooKeeper and broker: leaders from ZooKeeper, data into
the right queues in order, auto.offset.reset, leaderless partitions, a clean stop."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError

from zkconsumer.admin import produce
from zkconsumer.config import ConsumerConfig
from zkconsumer.datapath.chunks import ChunkQueue
from zkconsumer.datapath.fetcher import FetcherManager
from zkconsumer.datapath.partition_leaders import fetcher_id
from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.datapath.records import MessageAndMetadata
from zkconsumer.datapath.stream import KafkaStream
from zkconsumer.zk import paths
from zkconsumer.zk.codec import BrokerRegistration, encode_broker

pytestmark = pytest.mark.timeout(60)

DEADLINE_S = 20.0


def wait_until(predicate: Callable[[], bool], what: str, timeout: float = DEADLINE_S) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def take(stream: KafkaStream, n: int) -> list[MessageAndMetadata]:
    """Exactly ``n`` messages; the stream's consumer.timeout.ms bounds each wait."""
    it = iter(stream)
    return [next(it) for _ in range(n)]


def config(zk_connect: str, group: str, **props: object) -> ConsumerConfig:
    return ConsumerConfig({"zookeeper.connect": zk_connect, "group.id": group,
                           "consumer.timeout.ms": "15000", "refresh.leader.backoff.ms": "100",
                           **{k.replace("_", "."): v for k, v in props.items()}})


@pytest.fixture
def manager_factory(kazoo_client: KazooClient) -> Iterator[Callable[..., FetcherManager]]:
    managers: list[FetcherManager] = []

    def make(cfg: ConsumerConfig, consumer_id: str = "c1") -> FetcherManager:
        manager = FetcherManager(cfg, consumer_id, kazoo_client)
        managers.append(manager)
        return manager

    yield make
    for manager in managers:
        manager.shutdown()


def test_every_message_reaches_its_queue_in_order_from_the_committed_offset(
        zk_connect: str, broker: Any, new_topic: Callable[..., str],
        unique: Callable[[str], str], manager_factory: Callable[..., FetcherManager]) -> None:
    topic = new_topic(3)
    for p in range(3):
        produce(broker.bootstrap, topic, [f"{p}-{i}" for i in range(10)], partition=p)
    cfg = config(zk_connect, unique("g"))
    q0, q1 = ChunkQueue(2, f"{topic}-0"), ChunkQueue(2, f"{topic}-1")
    committed = {0: 3, 1: 0, 2: 5}
    infos = [PartitionTopicInfo(topic, 0, q0, 3, 3, "c1-0"),
             PartitionTopicInfo(topic, 1, q0, 0, 0, "c1-0"),
             PartitionTopicInfo(topic, 2, q1, 5, 5, "c1-1")]
    manager = manager_factory(cfg)
    manager.start_connections(infos)

    got0 = take(KafkaStream(q0, cfg.consumer_timeout_ms), 7 + 10)
    got1 = take(KafkaStream(q1, cfg.consumer_timeout_ms), 5)
    for p, got in ((0, got0), (1, got0), (2, got1)):
        mine = [m for m in got if m.partition == p]
        assert [m.offset for m in mine] == list(range(committed[p], 10))
        assert [m.message for m in mine] == [f"{p}-{i}".encode() for i in range(committed[p], 10)]
        assert all(m.topic == topic and m.timestamp_ms for m in mine)
    assert [i.consumed_offset for i in infos] == [10, 10, 10]
    wait_until(lambda: all(i.high_watermark == 10 for i in infos), "high watermarks")
    assert [i.lag for i in infos] == [0, 0, 0]
    assert [i.messages_consumed for i in infos] == [7, 10, 5]


@pytest.mark.parametrize("reset", ["smallest", "largest"])
def test_no_committed_offset_starts_where_auto_offset_reset_says(
        reset: str, zk_connect: str, broker: Any, new_topic: Callable[..., str],
        unique: Callable[[str], str], manager_factory: Callable[..., FetcherManager]) -> None:
    topic = new_topic(1)
    produce(broker.bootstrap, topic, ["old-0", "old-1", "old-2"], partition=0)
    cfg = config(zk_connect, unique("g"), auto_offset_reset=reset)
    queue = ChunkQueue(2, f"{topic}-0")
    info = PartitionTopicInfo(topic, 0, queue, -1, -1, "c1-0")
    manager_factory(cfg).start_connections([info])

    expected_start = 0 if reset == "smallest" else 3
    # As the original at addPartitions: both offsets are set as soon as the fetcher starts.
    wait_until(lambda: info.fetched_offset >= 0, "the start offset to be resolved")
    assert info.consumed_offset == expected_start
    produce(broker.bootstrap, topic, ["new-3"], partition=0)
    got = take(KafkaStream(queue, cfg.consumer_timeout_ms), 4 - expected_start)
    assert [m.offset for m in got] == list(range(expected_start, 4))
    assert got[-1].message == b"new-3"


def test_a_leaderless_partition_is_fetched_once_its_state_znode_appears(
        zk_connect: str, broker: Any, new_topic: Callable[..., str], unique: Callable[[str], str],
        kazoo_client: KazooClient, manager_factory: Callable[..., FetcherManager],
        caplog: pytest.LogCaptureFixture) -> None:
    topic = new_topic(2)
    state_path = paths.partition_state(topic, 1)
    state, _ = kazoo_client.get(state_path)
    kazoo_client.set(state_path, b"{not json")  # corrupt first, then missing
    produce(broker.bootstrap, topic, ["a", "b"], partition=0)
    produce(broker.bootstrap, topic, ["x", "y", "z"], partition=1)
    cfg = config(zk_connect, unique("g"), auto_offset_reset="smallest")
    queue = ChunkQueue(4, f"{topic}-0")
    infos = [PartitionTopicInfo(topic, p, queue, -1, -1, "c1-0") for p in (0, 1)]
    manager = manager_factory(cfg)
    stream = KafkaStream(queue, cfg.consumer_timeout_ms)

    with caplog.at_level(logging.ERROR, logger="zkconsumer.datapath.partition_leaders"):
        manager.start_connections(infos)
        assert [m.message for m in take(stream, 2)] == [b"a", b"b"]
        wait_until(lambda: manager.leaderless() == {(topic, 1)}, "partition 1 to wait for a leader")
        wait_until(lambda: caplog.text.count(state_path) >= 1, "the corrupt znode to be logged")
        kazoo_client.delete(state_path)
        time.sleep(0.3)  # a few leader-finder rounds (backoff 100 ms) over a missing znode
        assert caplog.text.count(state_path) == 1  # logged once, not on every retry
    assert infos[1].fetched_offset == -1 and len(queue) == 0

    kazoo_client.create(state_path, state)
    assert [m.message for m in take(stream, 3)] == [b"x", b"y", b"z"]
    assert manager.leaderless() == set()


def register_dead_broker(client: KazooClient) -> int:
    """Register a broker at an unreachable address under the first free id of 900-949
    (test_chaos.py takes 950-999): the create claims the id, so two test processes never
    share one."""
    for broker_id in range(900, 950):
        dead = BrokerRegistration(broker_id=broker_id, host="127.0.0.1", port=1,
                                  endpoints=("PLAINTEXT://127.0.0.1:1",))
        try:
            client.create(paths.broker(broker_id), encode_broker(dead), ephemeral=True)
        except NodeExistsError:
            continue
        return broker_id
    raise AssertionError("broker ids 900-949 are all registered")


def test_an_unreachable_leader_is_retried_without_crashing(
        zk_connect: str, broker: Any, new_topic: Callable[..., str], unique: Callable[[str], str],
        kazoo_client: KazooClient, manager_factory: Callable[..., FetcherManager],
        caplog: pytest.LogCaptureFixture) -> None:
    topic = new_topic(1)
    produce(broker.bootstrap, topic, ["m0", "m1"], partition=0)
    dead_id = register_dead_broker(kazoo_client)
    state_path = paths.partition_state(topic, 0)
    good_state, _ = kazoo_client.get(state_path)
    kazoo_client.set(state_path, good_state.replace(b'"leader":%d' % broker.broker_id,
                                                    b'"leader":%d' % dead_id))
    cfg = config(zk_connect, unique("g"), auto_offset_reset="smallest",
                 socket_timeout_ms="1000", fetch_wait_max_ms="100")
    queue = ChunkQueue(2, f"{topic}-0")
    info = PartitionTopicInfo(topic, 0, queue, -1, -1, "c1-0")
    manager = manager_factory(cfg)
    errors: list[dict[str, Any]] = []
    manager.add_event_listener(lambda e: errors.append(e) if e["type"] == "fetcher_error" else None)

    with caplog.at_level(logging.WARNING, logger="zkconsumer"):
        manager.start_connections([info])
        wait_until(lambda: "127.0.0.1:1" in caplog.text, "a warning about the dead broker")
    assert info.fetched_offset == -1
    kazoo_client.set(state_path, good_state)  # the "controller" elects the live broker
    assert [m.message for m in take(KafkaStream(queue, cfg.consumer_timeout_ms), 2)] == [
        b"m0", b"m1"]
    assert errors == []  # a broker that cannot be reached is not a thread failure


def test_stop_connections_returns_and_nothing_more_is_enqueued(
        zk_connect: str, broker: Any, new_topic: Callable[..., str], unique: Callable[[str], str],
        manager_factory: Callable[..., FetcherManager]) -> None:
    topic = new_topic(2)
    for p in (0, 1):
        produce(broker.bootstrap, topic, [f"{p}-{i}" for i in range(40)], partition=p,
                connections=4)
    cfg = config(zk_connect, unique("g"), num_consumer_fetchers="2")
    queue = ChunkQueue(1, f"{topic}-0")  # one chunk: the fetchers block on a full queue
    infos = [PartitionTopicInfo(topic, p, queue, 0, 0, "c1-0") for p in (0, 1)]
    manager = manager_factory(cfg, consumer_id="stopper")
    events: list[dict[str, Any]] = []
    manager.add_event_listener(events.append)
    manager.start_connections(infos)
    wait_until(lambda: len(queue) == 1, "the queue to fill")
    names = {t["name"] for t in manager.fetcher_threads()}
    assert names == {f"ConsumerFetcherThread-stopper-{fetcher_id(topic, p, 2)}-"
                     f"{broker.broker_id}" for p in (0, 1)}
    assert "stopper-leader-finder-thread" in {t.name for t in threading.enumerate()}

    manager.stop_connections()
    # every thread ended before the join deadline (none left behind as stuck), the fetchers
    # blocked on the full queue included
    assert events[-1]["type"] == "fetchers_stopped" and events[-1]["stuck_threads"] == []
    alive = {t.name for t in threading.enumerate()}
    assert not any(n.startswith(("ConsumerFetcherThread-stopper", "stopper-leader"))
                   for n in alive)
    fetched = [i.fetched_offset for i in infos]
    queued = queue.clear()
    assert queued == 1
    # Room again, and more data on the broker: a fetcher still running would put it now.
    produce(broker.bootstrap, topic, ["late"], partition=0)
    time.sleep(0.5)
    assert len(queue) == 0 and [i.fetched_offset for i in infos] == fetched
    assert [e["type"] for e in events] == ["fetchers_started", "fetchers_stopped"]
    assert events[0]["partitions"] == [[topic, 0], [topic, 1]]
    assert all(isinstance(e["ts"], float) for e in events)
    assert manager.fetcher_threads() == []
