"""Partition leaders from ZooKeeper, and the leader-finder thread that hands them to fetchers.

The original ``LeaderFinderThread`` read every broker's endpoint from ZooKeeper
(``getAllBrokerEndPointsForChannel``: the children of ``/brokers/ids``, then each one) and then
asked a broker for topic metadata. This project reads the brokers the same way and then the
leader too from ZooKeeper, where a ZooKeeper-mode cluster's controller keeps it
(``/brokers/topics/<t>/partitions/<p>/state``): one ``getData`` per partition looked up where
the original sent one metadata request to a broker (docs/connector.md, deviations). Everything
else is the original's loop: wait until some partition has no fetcher, look its leader up, hand
the partitions that have one to the fetcher manager, put back those that failed, sleep
``refresh.leader.backoff.ms``, repeat.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from kazoo.exceptions import KazooException, NoNodeError

from zkconsumer.errors import CorruptZnode
from zkconsumer.identity import TopicPartition, java_string_hash
from zkconsumer.zk import paths
from zkconsumer.zk.codec import decode_broker, decode_partition_state

log = logging.getLogger(__name__)

def fetcher_id(topic: str, partition: int, num_fetchers: int) -> int:
    """``Utils.abs(31 * topic.hashCode + partition) % num.consumer.fetchers``, in Java ints.

    The same partitions land on the same fetcher thread as in the original, which matters to
    anyone comparing thread names or per-thread metrics with a Kafka consumer.
    """
    n = (31 * java_string_hash(topic) + partition) & 0xFFFFFFFF
    if n >= 1 << 31:
        n -= 1 << 32
    n = 0 if n == -(1 << 31) else abs(n)  # Kafka's Utils.abs maps Integer.MIN_VALUE to 0
    return n % num_fetchers


class ZkReader(Protocol):
    """What the lookup needs from a ZooKeeper client (a started ``KazooClient`` fits)."""

    def get(self, path: str) -> tuple[bytes, Any]: ...

    def get_children(self, path: str) -> list[str]: ...


@dataclass(frozen=True)
class Leader:
    """A partition's leader: its broker id and the PLAINTEXT ``host:port`` to fetch from."""

    broker_id: int
    bootstrap: str


class LeaderLookup:
    """Reads leaders from ZooKeeper; a partition without one is simply absent from the answer.

    No state znode, ``"leader": -1`` (no leader elected), a leader not registered in
    ``/brokers/ids`` and a corrupt value all mean "not now": the leader finder retries them.
    A corrupt znode is logged once per path and value, not on every retry.
    """

    def __init__(self, zk: ZkReader) -> None:
        self._zk = zk
        self._reported: set[tuple[str, bytes | None]] = set()

    def find(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, Leader]:
        wanted = list(partitions)
        if not wanted:
            return {}
        brokers = self._brokers()
        found: dict[TopicPartition, Leader] = {}
        for topic, partition in wanted:
            leader_id = self._leader_id(topic, partition)
            if leader_id is None:
                continue
            leader = brokers.get(leader_id)
            if leader is None:
                log.debug("leader broker %d is not registered", leader_id)
                continue
            found[(topic, partition)] = leader
        return found

    def _brokers(self) -> dict[int, Leader]:
        """Every registered broker, read as the original's leader finder read them each round."""
        try:
            ids = self._zk.get_children(paths.BROKER_IDS)
        except NoNodeError:
            return {}
        brokers: dict[int, Leader] = {}
        for bid in sorted(i for i in ids if i.isdigit()):
            leader = self._broker(int(bid))
            if leader is not None:
                brokers[int(bid)] = leader
        return brokers

    def _read(self, path: str) -> bytes | None:
        try:
            data, _stat = self._zk.get(path)
        except NoNodeError:
            return None
        return data  # type: ignore[no-any-return]

    def _corrupt(self, path: str, data: bytes | None, exc: CorruptZnode) -> None:
        if (path, data) not in self._reported:
            self._reported.add((path, data))
            log.error("%s; treating the partition as leaderless until it changes", exc)

    def _leader_id(self, topic: str, partition: int) -> int | None:
        path = paths.partition_state(topic, partition)
        data = self._read(path)
        if data is None:
            log.debug("no leader for [%s,%d]: %s does not exist", topic, partition, path)
            return None
        try:
            state = decode_partition_state(path, data)
        except CorruptZnode as exc:
            self._corrupt(path, data, exc)
            return None
        if state.leader < 0:
            log.debug("no leader for [%s,%d]: leader is %d", topic, partition, state.leader)
            return None
        return state.leader

    def _broker(self, broker_id: int) -> Leader | None:
        path = paths.broker(broker_id)
        data = self._read(path)
        if data is None:
            log.debug("leader broker %d is not registered (%s missing)", broker_id, path)
            return None
        try:
            reg = decode_broker(path, broker_id, data)
        except CorruptZnode as exc:
            self._corrupt(path, data, exc)
            return None
        return Leader(broker_id, reg.bootstrap)


class FinderState(enum.Enum):
    NEW = "new"
    WAITING = "waiting"  # no partition without a fetcher
    LOOKING = "looking"  # reading ZooKeeper, handing partitions to fetchers
    BACKOFF = "backoff"  # sleeping refresh.leader.backoff.ms
    STOPPED = "stopped"


class LeaderFinderThread(threading.Thread):
    """The original's ``<consumerId>-leader-finder-thread``, owned by the fetcher manager.

    ``assign(found)`` is called with partitions whose leader is known and returns those it could
    not hand to a fetcher (they are retried). ``after_round()`` runs after every round (the
    manager shuts idle fetcher threads there, as the original did).
    """

    def __init__(self, name: str, lookup: LeaderLookup, backoff_ms: int,
                 assign: Callable[[dict[TopicPartition, Leader]], set[TopicPartition]],
                 after_round: Callable[[], None],
                 on_error: Callable[[BaseException], None]) -> None:
        super().__init__(name=name, daemon=True)
        self._lookup = lookup
        self._backoff_s = backoff_ms / 1000.0
        self._assign = assign
        self._after_round = after_round
        self._on_error = on_error
        self._cond = threading.Condition()
        self._no_leader: set[TopicPartition] = set()
        self._stop_event = threading.Event()
        self.state = FinderState.NEW

    def add(self, partitions: Iterable[TopicPartition]) -> None:
        """Partitions that need a (new) leader: the original's ``addPartitionsWithError``."""
        with self._cond:
            self._no_leader.update(partitions)
            self._cond.notify_all()

    def pending(self) -> set[TopicPartition]:
        with self._cond:
            return set(self._no_leader)

    def shutdown(self) -> None:
        """Ask the thread to stop; it finishes the round it is in (join it to wait)."""
        self._stop_event.set()
        with self._cond:
            self._cond.notify_all()

    def _set_state(self, state: FinderState) -> None:
        if state is not self.state:
            log.debug("%s: %s -> %s", self.name, self.state.name, state.name)
            self.state = state

    def run(self) -> None:
        try:
            while not self._stop_event.is_set():
                self._round()
        except BaseException as exc:  # a dead finder must be visible, not just logged
            log.exception("%s died", self.name)
            self._on_error(exc)
        finally:
            self._set_state(FinderState.STOPPED)

    def _round(self) -> None:
        with self._cond:
            self._set_state(FinderState.WAITING)
            while not self._no_leader and not self._stop_event.is_set():
                self._cond.wait()
            if self._stop_event.is_set():
                return
            wanted = set(self._no_leader)
        self._set_state(FinderState.LOOKING)
        try:
            found = self._lookup.find(sorted(wanted))
        except KazooException as exc:  # connection loss etc.: retry after the backoff
            log.warning("Failed to find leader for %s: %s", sorted(wanted), exc)
            found = {}
        if len(found) < len(wanted):
            log.info("%s: no leader yet for %s", self.name, sorted(wanted - found.keys()))
        if found:
            with self._cond:
                self._no_leader.difference_update(found)
            failed = self._assign(found)
            if failed:
                log.warning("Failed to add leader for partitions %s; will retry", sorted(failed))
                self.add(failed)
        self._after_round()
        self._set_state(FinderState.BACKOFF)
        deadline = time.monotonic() + self._backoff_s
        while not self._stop_event.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            self._stop_event.wait(remaining)
