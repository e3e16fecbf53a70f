"""Helpers for the connector scenarios: short-timeout configs, stream drains, owner snapshots."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from zkconsumer import ConsumerConfig, ConsumerTimeoutException, KafkaStream, MessageAndMetadata
from zkconsumer.zk import codec, paths
from zkconsumer.zk.client import started_client


def kazoo_for(hosts: str) -> contextlib.AbstractContextManager[KazooClient]:
    """A started kazoo client of ``hosts``, stopped and closed on exit."""
    return started_client(hosts)


def fast_config(zk_connect: str, group: str, **overrides: object) -> ConsumerConfig:
    """Short timeouts; retries x backoff (10 x 700 ms) outlast a dead member's 4 s session."""
    props: dict[str, object] = {
        "zookeeper.connect": zk_connect,
        "group.id": group,
        "auto.offset.reset": "smallest",
        "consumer.timeout.ms": 200,
        "zookeeper.session.timeout.ms": 4000,
        "rebalance.backoff.ms": 700,
        "rebalance.max.retries": 10,
        "auto.commit.interval.ms": 500,
        "refresh.leader.backoff.ms": 100,
        "fetch.wait.max.ms": 100,
    }
    props.update({k.replace("_", "."): v for k, v in overrides.items()})
    return ConsumerConfig(props)


def wait_until(predicate: Callable[[], Any], timeout: float = 30.0, what: str = "condition",
               interval: float = 0.1) -> Any:
    """Poll until ``predicate()`` is truthy; fail with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


class StreamDrain:
    """Iterates streams on named background threads and records every message received."""

    def __init__(self, streams: Iterable[KafkaStream], name: str = "drain") -> None:
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.messages: list[MessageAndMetadata] = []
        self.errors: list[BaseException] = []
        self._threads = [threading.Thread(target=self._run, args=(s,), name=f"{name}-{i}",
                                          daemon=True) for i, s in enumerate(streams)]
        for t in self._threads:
            t.start()

    def _run(self, stream: KafkaStream) -> None:
        it = iter(stream)
        while not self._stop.is_set():
            try:
                m = next(it)
            except ConsumerTimeoutException:
                continue
            except StopIteration:
                return
            except BaseException as exc:  # reported by the test, not swallowed
                self.errors.append(exc)
                return
            with self._lock:
                self.messages.append(m)

    def values(self) -> set[bytes]:
        with self._lock:
            return {m.message for m in self.messages if m.message is not None}

    def count(self) -> int:
        with self._lock:
            return len(self.messages)

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout)

    def ended(self) -> bool:
        return all(not t.is_alive() for t in self._threads)


def owners(client: KazooClient, group: str, topic: str) -> dict[int, str]:
    """Partition -> owner thread id, as ``/consumers/<g>/owners/<t>`` shows it now."""
    try:
        children = client.get_children(paths.topic_owners(group, topic))
    except NoNodeError:
        return {}
    result = {}
    for child in children:
        try:
            data, _ = client.get(paths.owner(group, topic, int(child)))
        except NoNodeError:
            continue
        result[int(child)] = data.decode()
    return result


def committed(client: KazooClient, group: str, topic: str, partitions: int) -> dict[int, int]:
    """Partition -> committed offset (-1 when none)."""
    result = {}
    for p in range(partitions):
        path = paths.offset(group, topic, p)
        try:
            data, _ = client.get(path)
            result[p] = codec.decode_offset(path, data)
        except NoNodeError:
            result[p] = -1
    return result


def live_threads(client: KazooClient, group: str) -> set[str]:
    """Thread ids of every registered member (static subscriptions)."""
    result: set[str] = set()
    try:
        members = client.get_children(paths.consumer_ids(group))
    except NoNodeError:
        return result
    for member in members:
        try:
            data, _ = client.get(paths.consumer_registration(group, member))
        except NoNodeError:
            continue
        reg = codec.decode_registration(member, data)
        for _topic, n in reg.subscription:
            result.update(f"{member}-{i}" for i in range(n))
    return result


def exactly_one_owner(client: KazooClient, group: str, topic: str, partitions: int,
                      expected_threads: set[str] | None = None) -> bool:
    """Every partition has one owner znode naming a live thread (of ``expected_threads``)."""
    current = owners(client, group, topic)
    alive = live_threads(client, group)
    if set(current) != set(range(partitions)):
        return False
    if not all(owner in alive for owner in current.values()):
        return False
    return expected_threads is None or set(current.values()) <= expected_threads


def request_counters(conns: Iterable[Any]) -> dict[str, dict[str, int]]:
    """Each connector's ZooKeeper requests by operation, by consumer id."""
    return {c.consumer_id: dict(c.metrics()["zookeeper"]["requests"]) for c in conns}


def settled_request_counters(conns: list[Any], quiet_s: float = 1.0,
                             timeout: float = 30.0) -> dict[str, dict[str, int]]:
    """The connectors' request counters once none has changed for ``quiet_s`` (leader lookups
    and watch re-arms run on other threads after an attempt ends)."""
    last, since = request_counters(conns), time.monotonic()
    deadline = since + timeout
    while time.monotonic() - since < quiet_s:
        assert time.monotonic() < deadline, "request counters never settled"
        time.sleep(0.1)
        now = request_counters(conns)
        if now != last:
            last, since = now, time.monotonic()
    return last


#: The ZooKeeper operations that read; the others a cost test counts write.
READS = ("getData", "getChildren", "exists")


def split_reads_writes(ops: dict[str, int]) -> tuple[int, int]:
    """(reads, writes) of a count of requests by operation."""
    reads = sum(n for op, n in ops.items() if op in READS)
    return reads, sum(ops.values()) - reads

