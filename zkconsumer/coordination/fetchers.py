"""Per-partition fetcher control, so that a handover stops only the partitions that move.

The legacy ``FetcherManager`` starts and stops a connector's partitions as one set, which is
all the eager protocol needs. The leader mode's cooperative handover and its pause on
disconnection need finer control, so :class:`PartitionFetchers` composes one
``FetcherManager`` per owned partition (each with its leader finder and fetcher thread): the
group as a whole runs one fetcher per partition, whatever its size. It offers the manager's
``start_connections`` / ``stop_connections`` / ``shutdown`` too, so the connector's shutdown
path is the same in both modes.

Stopping a partition returns once its fetcher can no longer enqueue. Chunks it enqueued before
stay in the (shared) stream queue; :func:`disown` makes the iterator skip them: it sets the
partition's consumed offset past any real offset, and the iterator skips messages below the
consumed offset. The chunk an iterator is in the middle of is not interrupted, so up to one
chunk of a released partition may still be returned (and be delivered again by the next
owner: at-least-once).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from zkconsumer.config import ConsumerConfig
from zkconsumer.datapath.fetcher import FetcherManager
from zkconsumer.datapath.partition_leaders import ZkReader
from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.identity import TopicPartition

log = logging.getLogger(__name__)

#: Larger than any Kafka offset: the iterator skips every message of a disowned partition.
DISOWNED_OFFSET = 1 << 62


def disown(info: PartitionTopicInfo) -> None:
    """After its last commit: queued chunks of this partition will be skipped, not returned."""
    info.reset_consume_offset(DISOWNED_OFFSET)
    info.reset_fetch_offset(DISOWNED_OFFSET)


class PartitionFetchers:
    """One ``FetcherManager`` per partition; methods run on the coordinator thread."""

    def __init__(self, config: ConsumerConfig, consumer_id: str, zk: ZkReader) -> None:
        self._config = config
        self._consumer_id = consumer_id
        self._zk = zk
        self._lock = threading.Lock()
        self._managers: dict[TopicPartition, FetcherManager] = {}
        self._listeners: list[Callable[[dict[str, Any]], None]] = []
        self._closed = False

    def add_event_listener(self, fn: Callable[[dict[str, Any]], None]) -> None:
        self._listeners.append(fn)

    def _forward(self, event: dict[str, Any]) -> None:
        for fn in list(self._listeners):
            try:
                fn(event)
            except Exception:
                log.exception("event listener %r failed on %s", fn, event.get("type"))

    def fetching(self) -> set[TopicPartition]:
        with self._lock:
            return set(self._managers)

    def start(self, infos: Iterable[PartitionTopicInfo]) -> None:
        """Start fetching these partitions (a partition already fetched is left alone)."""
        for info in infos:
            tp = TopicPartition(info.topic, info.partition)
            with self._lock:
                if self._closed or tp in self._managers:
                    continue
                manager = FetcherManager(self._config, self._consumer_id, self._zk)
                manager.add_event_listener(self._forward)
                self._managers[tp] = manager
            manager.start_connections([info])

    def stop(self, partitions: Iterable[TopicPartition]) -> None:
        """Stop these partitions' fetchers; afterwards none of them enqueues again."""
        with self._lock:
            managers = [self._managers.pop(tp) for tp in partitions if tp in self._managers]
        if len(managers) == 1:
            managers[0].shutdown()
            return
        # Each stop waits for its fetcher thread's current fetch: stop them side by side.
        threads = [threading.Thread(target=m.shutdown, name=f"{self._consumer_id}-stop-{i}",
                                    daemon=True) for i, m in enumerate(managers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def stop_all(self) -> None:
        self.stop(self.fetching())

    # The FetcherManager interface the connector's shutdown uses.

    def start_connections(self, infos: Iterable[PartitionTopicInfo]) -> None:
        self.start(infos)

    def stop_connections(self) -> None:
        self.stop_all()

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
        self.stop_all()
