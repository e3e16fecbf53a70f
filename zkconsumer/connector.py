"""ZookeeperConsumerConnector: wires session, coordination mode, offsets and fetchers; lifecycles.

The coordination itself is a mode's (``coordination.mode``, looked up in ``modes.py``): the legacy
mode (``rebalance/``: decisions in ``plan.py``, ZooKeeper steps in ``attempt.py``, the thread in
``rebalancer.py``) or the leader mode (``coordination/``). The connector drives either through
``membership.mode.CoordinationMode``. It creates the pieces in the original's order (spec
detailed §3.1-3.3), exposes the public API, and stops everything in reverse order on
:meth:`shutdown` (§3.8).

Threads it owns, started by :meth:`start` / ``create_message_streams*`` and never in
``__init__``: the kazoo session's threads, the mode's thread (``<consumer id>_watcher_executor``,
the legacy rebalancer, or ``<consumer id>_coordinator``), ``kafka-consumer-autocommit-<consumer
id>`` (with ``auto.commit.enable``) and, through the fetchers, the leader finder and fetcher
threads.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any

from zkconsumer.config import ConsumerConfig
from zkconsumer.datapath.stream import KafkaStream
from zkconsumer.errors import MessageStreamsExistException
from zkconsumer.events import EventBus, EventListener
from zkconsumer.identity import TopicPartition
from zkconsumer.membership import wiring
from zkconsumer.membership.mode import NOT_JOINED_STATE, CoordinationMode, Fetchers, MemberParts
from zkconsumer.membership.ownership import Ownership
from zkconsumer.membership.rebalance_listener import (
    ConsumerRebalanceListener,
    as_rebalance_listener,
)
from zkconsumer.metrics import RebalanceMetrics, ZkRequestCounter
from zkconsumer.modes import get_mode
from zkconsumer.offsets.auto_commit import AutoCommitter
from zkconsumer.offsets.store import OffsetStore
from zkconsumer.subscription import Subscription
from zkconsumer.topic_filter import TopicFilter
from zkconsumer.zk import paths
from zkconsumer.zk.session import SessionEvent, ZkSession

log = logging.getLogger(__name__)

SHUTDOWN_DEADLINE_S = 15.0


def make_consumer_id(config: ConsumerConfig) -> str:
    """``<group>_<consumer.id>``, else ``<group>_<host>-<epoch ms>-<8 hex of a UUID>`` (§1.4)."""
    if config.consumer_id is not None:
        suffix = config.consumer_id
    else:
        # Java's Long.toHexString(uuid.getMostSignificantBits).substring(0, 8)
        hex8 = f"{uuid.uuid4().int >> 64:x}"[:8]
        suffix = f"{socket.gethostname()}-{int(time.time() * 1000)}-{hex8}"
    return paths.validate_member(f"{config.group_id}_{suffix}")


class ZookeeperConsumerConnector:
    """Kafka 0.8-0.10's high-level consumer, coordinated through ZooKeeper.

    >>> with ZookeeperConsumerConnector(cfg) as conn:              # doctest: +SKIP
    ...     streams = conn.create_message_streams({"orders": 2})
    ...     for m in streams["orders"][0]: ...
    """

    def __init__(self, config: ConsumerConfig | Mapping[str, object]) -> None:
        self.config = config if isinstance(config, ConsumerConfig) else ConsumerConfig(config)
        self._consumer_id = make_consumer_id(self.config)
        self._events = EventBus(self._consumer_id)
        self._zk_counter = ZkRequestCounter()
        self._metrics = RebalanceMetrics()
        self._ownership = Ownership()
        self._lock = threading.RLock()
        self._shutdown_started = threading.Event()
        self._listener: ConsumerRebalanceListener | None = None
        self._started = False
        self._session: ZkSession | None = None
        self._fetchers: Fetchers | None = None
        self._offsets: OffsetStore | None = None
        self._auto_commit: AutoCommitter | None = None
        self._mode_spec = get_mode(self.config.coordination_mode)
        self._mode: CoordinationMode | None = None  # created with the streams
        self._subscription: Subscription | None = None

    # --- properties and listeners ----------------------------------------------------------------

    @property
    def consumer_id(self) -> str:
        return self._consumer_id

    @property
    def zk_client_id(self) -> tuple[int, bytes] | None:
        """(session id, password) of the live session: lets tests and the lab expire it."""
        return self._session.client_id if self._session is not None else None

    def add_event_listener(self, fn: EventListener) -> None:
        """Receive every structured event (see ``zkconsumer.events``); keep ``fn`` quick."""
        self._events.add_listener(fn)

    def set_consumer_rebalance_listener(self, listener: ConsumerRebalanceListener) -> None:
        """``before_releasing_partitions`` / ``before_starting_fetchers``; before any stream.

        A listener defining only one of the two gets a no-op for the other; one defining
        neither is refused (TypeError).
        """
        with self._lock:
            if self._subscription is not None:
                raise MessageStreamsExistException(
                    f"{type(self).__name__} can only set consumer rebalance listener before "
                    "creating streams")
            self._listener = as_rebalance_listener(listener)

    # --- lifecycle -------------------------------------------------------------------------------

    def __enter__(self) -> ZookeeperConsumerConnector:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def start(self) -> None:
        """Connect to ZooKeeper, create the fetcher manager, start auto-commit (§3.1)."""
        with self._lock:
            if self._started:
                return
            if self._shutdown_started.is_set():
                raise RuntimeError(f"{self._consumer_id} is shut down")
            cfg, spec = self.config, self._mode_spec
            session = wiring.make_session(cfg, self._zk_counter, self._consumer_id,
                                          spec.session_class)
            session.add_state_listener(self._on_session_event)
            log.info("[%s] Connecting to zookeeper instance at %s", self._consumer_id,
                     cfg.zookeeper_connect)
            session.start()
            self._session = session
            self._fetchers = spec.make_fetchers(cfg, self._consumer_id, session)
            self._fetchers.add_event_listener(self._events.forward)
            self._offsets = spec.make_offsets(cfg, session, self._events, self._metrics,
                                              self._shutdown_started.is_set)
            if cfg.auto_commit_enable:
                self._auto_commit = AutoCommitter(
                    f"kafka-consumer-autocommit-{self._consumer_id}", cfg.auto_commit_interval_ms,
                    lambda: self.commit_offsets(), self._events)
                self._auto_commit.start()
            self._started = True

    def create_message_streams(self, topic_count_map: Mapping[str, int]
                               ) -> dict[str, list[KafkaStream]]:
        """Register, subscribe and rebalance once (in this call); one stream per thread."""
        if topic_count_map is None:
            raise TypeError("topicCountMap is null")
        with self._lock:
            self._check_no_streams("ZookeeperConsumerConnector can create message streams at "
                                   "most once")
            sub = Subscription.static(self._consumer_id, dict(topic_count_map), self.config)
            self._wire(sub)
        self._first_rebalance()
        return {topic: list(streams) for topic, streams in sub.streams_by_topic.items()}

    def create_message_streams_by_filter(self, topic_filter: TopicFilter, num_streams: int = 1
                                         ) -> list[KafkaStream]:
        """Wildcard subscription; each stream may carry messages of several topics (§3.7)."""
        if isinstance(num_streams, bool) or not isinstance(num_streams, int) or num_streams < 1:
            raise ValueError(f"num_streams must be >= 1, got {num_streams!r}")
        with self._lock:
            self._check_no_streams("Each consumer connector can create message streams by "
                                   "filter at most once.")
            sub = Subscription.wildcard(self._consumer_id, topic_filter, num_streams, self.config)
            self._wire(sub)
        self._first_rebalance()
        return sub.streams()

    def _check_no_streams(self, message: str) -> None:
        if self._subscription is not None:
            raise MessageStreamsExistException(message)
        self.start()

    def _wire(self, sub: Subscription) -> None:
        """Create the configured mode for ``sub``: register, watch, start its thread."""
        assert self._session and self._fetchers and self._offsets
        self._subscription = sub
        self._mode = self._mode_spec.create(MemberParts(
            consumer_id=self._consumer_id, config=self.config, session=self._session,
            subscription=sub, ownership=self._ownership, offsets=self._offsets,
            fetchers=self._fetchers, events=self._events, metrics=self._metrics,
            listener=self._listener, is_shutting_down=self._shutdown_started.is_set))
        self._mode.start()

    def _first_rebalance(self) -> None:
        assert self._mode is not None
        self._mode.first_rebalance()

    def _on_session_event(self, event: SessionEvent) -> None:
        """kazoo's thread: record and hand over; the mode's thread does the ZooKeeper work."""
        self._events.emit("session_state", state=event.state, session_id=event.session_id,
                          new_session=event.new_session)
        mode = self._mode
        if mode is not None:
            mode.on_session_event(event)

    # --- offsets, ownership, metrics -------------------------------------------------------------

    def commit_offsets(self, retry_on_failure: bool = True) -> None:
        """Write the consumed offset of every owned partition that changed since last written.

        With ``offsets.storage=kafka`` a failed commit is retried ``offsets.commit.max.retries``
        times when ``retry_on_failure`` (the auto-commit task's case), then raises
        ``OffsetCommitFailed``. (The original's public flag was inverted: it passed
        ``retryOnFailure`` on as ``isAutoCommit``, so asking for retries disabled them.)
        """
        if self._offsets is None:
            return
        self._offsets.commit_retrying(
            self._ownership.current.infos.values(),
            self.config.offsets_commit_max_retries if retry_on_failure else 0)

    def owned_partitions(self) -> dict[TopicPartition, str]:
        """{TopicPartition: owning thread id} of the current generation."""
        return self._ownership.current.assignment()

    def metrics(self) -> dict[str, Any]:
        """A snapshot: rebalances, ownership, consumption, lag, ZooKeeper requests by operation."""
        gen = self._ownership.current
        messages, size = self._ownership.totals()
        partitions = {
            f"{tp.topic}/{tp.partition}": {
                "thread_id": info.thread_id, "consumed_offset": info.consumed_offset,
                "fetched_offset": info.fetched_offset, "high_watermark": info.high_watermark,
                "lag": info.lag,
            }
            for tp, info in sorted(gen.infos.items())
        }
        mode = self._mode
        queues = self._subscription.queues() if self._subscription is not None else []
        return {
            "consumer_id": self._consumer_id,
            "group_id": self.config.group_id,
            **self._metrics.snapshot(),
            "owned_partitions": len(gen.infos),
            "generation": gen.number,
            "messages_consumed": messages,
            "bytes_consumed": size,
            # Value bytes waiting in the streams' chunk queues, now and at most so far: bounded
            # by streams x queued.max.message.chunks x fetch.message.max.bytes.
            "queued_bytes": sum(q.queued_bytes for q in queues),
            "queued_bytes_peak": sum(q.peak_bytes for q in queues),
            "partitions": partitions,
            "zookeeper": self._zk_counter.snapshot(),
            "rebalancer_state": mode.state if mode is not None else NOT_JOINED_STATE,
            "coordination": (mode.describe() if mode is not None
                             else {"mode": self._mode_spec.name}),
        }

    # --- shutdown --------------------------------------------------------------------------------

    def shutdown(self, timeout: float = SHUTDOWN_DEADLINE_S) -> None:
        """Stop everything in reverse order within ``timeout``; idempotent (§3.8)."""
        with self._lock:
            if self._shutdown_started.is_set():
                return
            self._shutdown_started.set()
        started = time.monotonic()
        log.info("[%s] ZKConsumerConnector shutting down", self._consumer_id)
        session = self._session
        # If ZooKeeper is unreachable, blocked requests are interrupted by closing the session.
        watchdog = threading.Timer(timeout, session.close) if session is not None else None
        if watchdog is not None:
            watchdog.daemon = True
            watchdog.start()
        steps: list[tuple[str, Any]] = [
            ("coordination", lambda: self._mode and self._mode.stop(timeout / 2)),
            ("auto-commit", lambda: self._auto_commit and self._auto_commit.stop(timeout / 4)),
            ("fetchers", lambda: self._fetchers and self._fetchers.stop_connections()),
            ("queues", self._send_shutdown_to_all_queues),
            ("commit", lambda: self.config.auto_commit_enable
             and self.commit_offsets(retry_on_failure=False)),
            ("znodes", self._delete_own_znodes),
            ("offsets channel", lambda: self._offsets and self._offsets.close()),
            ("session", lambda: session and session.close()),
            ("fetcher manager", lambda: self._fetchers and self._fetchers.shutdown()),
        ]
        for name, step in steps:
            try:
                step()
            except Exception as exc:
                log.exception("[%s] error during consumer connector shutdown (%s)",
                              self._consumer_id, name)
                self._events.emit("error", where=f"shutdown:{name}", error=repr(exc))
        if watchdog is not None:
            watchdog.cancel()
        duration = (time.monotonic() - started) * 1000
        self._events.emit("shutdown", duration_ms=duration)
        log.info("[%s] ZKConsumerConnector shutdown completed in %.0f ms", self._consumer_id,
                 duration)

    def _send_shutdown_to_all_queues(self) -> None:
        if self._subscription is not None:
            for queue in self._subscription.queues():
                queue.clear()
                queue.put_shutdown()

    def _delete_own_znodes(self) -> None:
        """Owner znodes and registration go now rather than when the session closes."""
        session = self._session
        if session is None or self._subscription is None or not session.connected:
            return
        group = self.config.group_id
        if self._mode is not None:
            self._mode.release_all()
        gen = self._ownership.clear()
        if self._offsets is not None:
            self._offsets.barrier()
        if gen.session_id is not None:  # an expired session's znodes are gone already
            session.delete_all_in_session(
                (paths.owner(group, tp.topic, tp.partition) for tp in gen.infos), gen.session_id)
        session.delete(paths.consumer_registration(group, self._consumer_id))
