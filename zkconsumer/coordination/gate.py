"""The fetchers' switch, shared by the coordinator thread and the disconnection pause.

``zookeeper.pause.fetchers.on.disconnect`` must act while the coordinator thread is blocked in
a ZooKeeper request (that is what a disconnection does to it), so the pause runs on a thread of
its own and the two meet here, under one lock: while paused, nothing starts a fetcher; the
coordinator still records what it owns, and :meth:`FetchGate.resume` starts exactly that, from
the consumed offsets, if the *same* session came back. No ZooKeeper call happens here.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable

from zkconsumer.coordination.fetchers import PartitionFetchers
from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.identity import TopicPartition
from zkconsumer.membership.ownership import Ownership
from zkconsumer.subscription import Subscription

log = logging.getLogger(__name__)

#: Paused because the session was lost: only a new session (``reset``) ends it.
LOST = -1


class FetchGate:
    """Start/stop fetchers unless paused; pause and resume by session id."""

    def __init__(self, fetchers: PartitionFetchers, subscription: Subscription,
                 ownership: Ownership, is_shutting_down: Callable[[], bool]) -> None:
        self._fetchers = fetchers
        self._subscription = subscription
        self._ownership = ownership
        self._is_shutting_down = is_shutting_down
        self._lock = threading.Lock()
        self._paused_session: int | None = None
        self._epoch = 0  # sessions reset so far: a pause asked for before a reset is stale

    @property
    def epoch(self) -> int:
        """Taken when a disconnection is reported, handed to :meth:`pause` by its thread."""
        return self._epoch

    @property
    def paused(self) -> bool:
        return self._paused_session is not None

    def start(self, infos: Iterable[PartitionTopicInfo]) -> None:
        with self._lock:
            if self._paused_session is None and not self._is_shutting_down():
                self._fetchers.start(infos)

    def stop(self, partitions: Iterable[TopicPartition]) -> None:
        with self._lock:
            self._fetchers.stop(partitions)

    def stop_all(self) -> None:
        with self._lock:
            self._stop_and_clear()

    def _stop_and_clear(self) -> None:
        """Stop every fetcher, drop buffered chunks; a restart fetches from consumed offsets."""
        self._fetchers.stop_all()
        for queue in self._subscription.queues():
            queue.clear()
        for stream in self._subscription.streams():
            stream.clear()
        for info in self._ownership.current.infos.values():
            info.reset_fetch_offset(info.consumed_offset)

    def pause(self, session_id: int, epoch: int | None = None) -> bool:
        """Stop everything until :meth:`resume` with ``session_id`` (``LOST``: until reset).
        False if already paused for a session (a second SUSPENDED changes nothing), or if a
        new session was reset since ``epoch``: the pause runs on a thread of its own and may
        come after the new session started, which it must not freeze for good."""
        with self._lock:
            if epoch is not None and epoch != self._epoch:
                return False
            if self._paused_session is not None and session_id != LOST:
                return False
            self._paused_session = session_id
            self._stop_and_clear()
            return True

    def resume(self, session_id: int | None) -> list[PartitionTopicInfo] | None:
        """Restart what is owned if paused for ``session_id``; the infos restarted, else None."""
        with self._lock:
            if self._paused_session is None or self._paused_session != session_id:
                return None
            self._paused_session = None
            infos = list(self._ownership.current.infos.values())
            if not self._is_shutting_down():
                self._fetchers.start(infos)
            return infos

    def reset(self) -> None:
        """A new session: nothing is owned any more; unpause."""
        with self._lock:
            self._epoch += 1
            self._paused_session = None
            self._stop_and_clear()
            self._ownership.clear()
