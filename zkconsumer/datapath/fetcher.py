"""The fetcher manager: leader finder and fetcher threads of one connector.

The original's ``ConsumerFetcherManager``: partitions are grouped by (leader broker, fetcher id)
with ``fetcher id = abs(31 * hash(topic) + partition) % num.consumer.fetchers``; each group has
one thread named ``ConsumerFetcherThread-<consumerId>-<fetcherId>-<brokerId>`` (see
``fetcher_thread.py``), and the ``<consumerId>-leader-finder-thread`` (see ``leaders.py``) finds
leaders in ZooKeeper and hands partitions to them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from typing import Any

from zkconsumer.config import ConsumerConfig
from zkconsumer.datapath.fetcher_thread import (
    FetcherState,
    FetcherThread,
    client_config,
    reset_offset,
)
from zkconsumer.datapath.partition_leaders import (
    Leader,
    LeaderFinderThread,
    LeaderLookup,
    ZkReader,
    fetcher_id,
)
from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.events import EventBus, EventListener
from zkconsumer.identity import TopicPartition

__all__ = ["FetcherManager", "FetcherState", "FetcherThread", "client_config", "reset_offset"]

log = logging.getLogger(__name__)

JOIN_TIMEOUT_S = 15.0


class FetcherManager:
    """Owns the leader finder and the fetcher threads of one connector (``ConsumerFetcherManager``).

    ``start_connections`` is called after each rebalance with the partitions now owned, and
    ``stop_connections`` before the next one; when it returns, no thread of this manager will
    put into any queue again, so the rebalance can clear queues and commit safely.
    """

    def __init__(self, config: ConsumerConfig, consumer_id: str, zk: ZkReader,
                 join_timeout_s: float = JOIN_TIMEOUT_S) -> None:
        self.name = f"ConsumerFetcherManager-{int(time.time() * 1000)}"
        self.config = config
        self.consumer_id = consumer_id
        self._lookup = LeaderLookup(zk)
        self._join_timeout_s = join_timeout_s
        self._lock = threading.Lock()
        self._running = False
        self._closed = False
        self._generation = 0
        self._partitions: dict[TopicPartition, PartitionTopicInfo] = {}
        self._fetchers: dict[tuple[int, str, int], FetcherThread] = {}
        self._finder: LeaderFinderThread | None = None
        self._events = EventBus(consumer_id)  # a listener's bug never stops the fetchers
        self._emit = self._events.emit

    def add_event_listener(self, fn: EventListener) -> None:
        self._events.add_listener(fn)

    @property
    def running(self) -> bool:
        return self._running

    def start_connections(self, infos: Iterable[PartitionTopicInfo]) -> None:
        """Fetch these partitions from now on; returns at once (leaders are found in background)."""
        infos = list(infos)
        if self._closed:
            raise RuntimeError(f"{self.name} is shut down")
        if self._running:
            log.warning("start_connections while fetchers run: stopping them first")
            self.stop_connections()
        with self._lock:
            self._generation += 1
            generation = self._generation
            self._partitions = {(i.topic, i.partition): i for i in infos}
            self._running = True
            finder = LeaderFinderThread(
                f"{self.consumer_id}-leader-finder-thread", self._lookup,
                self.config.refresh_leader_backoff_ms,
                assign=lambda found: self._assign(generation, found),
                after_round=lambda: self._shutdown_idle(generation),
                on_error=lambda exc: self._emit("fetcher_error", thread=finder.name,
                                                error=repr(exc)))
            finder.add(self._partitions)
            self._finder = finder
        finder.start()
        log.info("%s: fetchers started for %d partitions", self.name, len(infos))
        self._emit("fetchers_started", partitions=sorted([i.topic, i.partition] for i in infos))

    def _assign(self, generation: int, found: dict[TopicPartition, Leader]) -> set[TopicPartition]:
        """Leader finder -> fetcher threads (``addFetcherForPartitions``)."""
        with self._lock:
            if not self._running or generation != self._generation:
                return set()
            groups: dict[tuple[int, str, int], dict[TopicPartition, PartitionTopicInfo]] = {}
            for tp, leader in found.items():
                info = self._partitions.get(tp)
                if info is not None:
                    fid = fetcher_id(tp[0], tp[1], self.config.num_consumer_fetchers)
                    groups.setdefault((leader.broker_id, leader.bootstrap, fid), {})[tp] = info
            for key, infos in groups.items():
                thread = self._fetchers.get(key)
                if thread is None or thread.state in (FetcherState.FAILED, FetcherState.STOPPED):
                    broker_id, bootstrap, fid = key
                    thread = FetcherThread(
                        f"ConsumerFetcherThread-{self.consumer_id}-{fid}-{broker_id}", fid,
                        Leader(broker_id, bootstrap), self.config,
                        on_partition_errors=lambda t, tps, g=generation: self._errors(g, tps),
                        on_failure=lambda t, exc, g=generation: self._failed(g, t, exc))
                    self._fetchers[key] = thread
                    thread.start()
                thread.add_partitions(infos)
        return set()

    def _errors(self, generation: int, tps: set[TopicPartition]) -> None:
        """A fetcher gave partitions back (``addPartitionsWithError``): find their leader again."""
        with self._lock:
            if self._running and generation == self._generation and self._finder is not None:
                self._finder.add(tp for tp in tps if tp in self._partitions)

    def _failed(self, generation: int, thread: FetcherThread, exc: BaseException) -> None:
        self._emit("fetcher_error", thread=thread.name, error=repr(exc),
                   partitions=sorted(list(tp) for tp in thread.partitions()))
        self._errors(generation, thread.partitions())

    def _shutdown_idle(self, generation: int) -> None:
        with self._lock:
            if generation != self._generation:
                return
            idle = [k for k, t in self._fetchers.items()
                    if not t.partitions() or t.state is FetcherState.FAILED]
            threads = [self._fetchers.pop(k) for k in idle]
        for thread in threads:
            thread.initiate_shutdown()
            thread.join(self._join_timeout_s)

    def fetcher_threads(self) -> list[dict[str, Any]]:
        """name, state, broker and partitions of each fetcher thread (for metrics and tests)."""
        with self._lock:
            threads = list(self._fetchers.values())
        return [{"name": t.name, "state": t.state.value, "broker_id": t.leader.broker_id,
                 "partitions": sorted(t.partitions())} for t in threads]

    def leaderless(self) -> set[TopicPartition]:
        """Partitions waiting for the leader finder."""
        finder = self._finder
        return finder.pending() if finder is not None else set()

    def stop_connections(self) -> None:
        """Stop the leader finder, then every fetcher; afterwards nothing more is enqueued."""
        with self._lock:
            self._running = False
            self._generation += 1
            finder, self._finder = self._finder, None
            fetchers = list(self._fetchers.values())
            self._fetchers.clear()
            infos = list(self._partitions.values())
            self._partitions = {}
        if finder is None and not fetchers:
            return
        if finder is not None:
            finder.shutdown()
        for thread in fetchers:
            thread.initiate_shutdown()
        deadline = time.monotonic() + self._join_timeout_s
        stuck = []
        for t in ([finder] if finder is not None else []) + fetchers:
            t.join(max(0.0, deadline - time.monotonic()))
            if t.is_alive():
                stuck.append(t.name)
        # A thread still alive has its stop event set; once no put is in progress, none can start.
        for queue in {id(i.queue): i.queue for i in infos}.values():
            queue.barrier()
        if stuck:
            log.error("%s: threads still running after %.0f s: %s (they will not enqueue)",
                      self.name, self._join_timeout_s, stuck)
        log.info("%s: fetchers stopped", self.name)
        self._emit("fetchers_stopped", partitions=sorted([i.topic, i.partition] for i in infos),
                   stuck_threads=stuck)

    def shutdown(self) -> None:
        """Stop everything; idempotent."""
        if self._closed:
            return
        self.stop_connections()
        self._closed = True
