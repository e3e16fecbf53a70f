"""One fetcher thread: a manual-assignment confluent-kafka consumer feeding chunk queues.

The original's ``ConsumerFetcherThread``. librdkafka does the fetch requests; the thread turns
each batch into one chunk per partition and puts it on that partition's queue, blocking while
the queue is full (back-pressure). ``auto.offset.reset`` is applied here, not by librdkafka
(which runs with ``auto.offset.reset=error``): to a partition without a committed offset when it
is added, and to an out-of-range fetch, setting both the fetch and the consume offset, as the
original did.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from itertools import accumulate, groupby
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message
from confluent_kafka import TopicPartition as KafkaTopicPartition

from zkconsumer.config import ConsumerConfig
from zkconsumer.datapath.chunks import FetchedDataChunk
from zkconsumer.datapath.partition_leaders import Leader
from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.datapath.records import speedups, speedups_enabled
from zkconsumer.identity import TopicPartition

log = logging.getLogger(__name__)
librdkafka_log = logging.getLogger(__name__ + ".librdkafka")

# Messages per consume() call: as many as a chunk, so that the thread releases and retakes the
# GIL (inside consume()) once per chunk rather than ten times.
CONSUME_MESSAGES = 5000
CHUNK_MESSAGES = 5000  # chunks are queued once this many messages are taken
# librdkafka stops fetching once this many fetch sizes wait in its queue and looks again every
# fetch.queue.backoff.ms. With one fetch size (as before) the queue ran dry between fetches at
# the rate one stream reaches on Apache Kafka 0.10.2 (a fetch response of 4 partitions is up
# to 4 fetch sizes, drained in milliseconds); with four, the next response arrives while the
# last is still being read (docs/peers.md, "The data path against the original").
PREFETCH_FETCHES = 4
POLL_S = 0.1  # longest wait inside consume(): bounds how long a stop or a new partition waits
WATERMARK_REFRESH_S = 1.0
OFFSET_QUERY_TIMEOUT_S = 10.0  # a ListOffsets for auto.offset.reset; the partition is retried
_WARN_EVERY_S = 10.0
_GONE = frozenset({KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_PARTITION,
                   KafkaError._UNKNOWN_TOPIC})
_OUT_OF_RANGE = frozenset({KafkaError.OFFSET_OUT_OF_RANGE, KafkaError._AUTO_OFFSET_RESET})
# Unbound accessors, so that per-message work runs in C (map) rather than in bytecode.
_M_ERROR, _M_TOPIC, _M_PARTITION, _M_OFFSET = Message.error, Message.topic, Message.partition, \
    Message.offset
# The same sort in C, one pass per batch (datapath/_speedups.c), when the records use it too.
runs_in_c = speedups.runs if speedups is not None and speedups_enabled() else None


def reset_offset(auto_offset_reset: str, low: int, high: int) -> int:
    """The offset ``auto.offset.reset`` picks: smallest -> log start, anything else -> log end."""
    return low if auto_offset_reset == "smallest" else high


def client_config(config: ConsumerConfig, bootstrap: str) -> dict[str, Any]:
    """librdkafka settings for one fetcher, from the legacy properties that govern a fetch."""
    fetch_max = max(config.fetch_message_max_bytes, 52_428_800)
    return {
        "bootstrap.servers": bootstrap,
        "group.id": config.group_id,  # required by the client; never joined (assign() only)
        "client.id": config.client_id,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": False,
        "auto.offset.reset": "error",
        "max.partition.fetch.bytes": config.fetch_message_max_bytes,
        # librdkafka's own prefetch, per fetcher thread: PREFETCH_FETCHES fetch sizes, a bound
        # of the same order as what the original's fetcher had in hand (docs/datapath.md).
        "queued.max.messages.kbytes": max(
            1, -(-PREFETCH_FETCHES * config.fetch_message_max_bytes // 1024)),
        "fetch.max.bytes": fetch_max,
        "receive.message.max.bytes": fetch_max + 1_000_000,
        "fetch.min.bytes": max(1, config.fetch_min_bytes),
        "fetch.wait.max.ms": config.fetch_wait_max_ms,
        # librdkafka pauses fetching for fetch.queue.backoff.ms (1 s by default) once its own
        # prefetch queue is full; a consumer that drains it quickly then stalls for a second.
        # The chunk queues are this consumer's back-pressure, so resume promptly instead.
        "fetch.queue.backoff.ms": 10,
        "socket.timeout.ms": max(10, config.socket_timeout_ms),
        "socket.receive.buffer.bytes": config.socket_receive_buffer_bytes,
        "logger": librdkafka_log,
    }


def split_chunks(messages: list[Message], limit: int) -> list[tuple[list[Message], int]]:
    """Consecutive pieces of at most ``limit`` value bytes; a larger message stands alone."""
    ends = list(accumulate(map(len, messages)))
    pieces, start, base = [], 0, 0
    while start < len(messages):
        end = max(bisect_right(ends, base + limit, lo=start), start + 1)
        pieces.append((messages[start:end], ends[end - 1] - base))
        base, start = ends[end - 1], end
    return pieces


class FetcherState(enum.Enum):
    NEW = "new"
    RUNNING = "running"
    STOPPED = "stopped"
    FAILED = "failed"  # an unexpected error ended the thread; its partitions went back


class _Assigned:
    """A partition this thread fetches.

    ``expected`` is the offset its next chunk must start at (the info's fetched offset, unless
    someone reset that); ``converted`` holds the client's messages sorted out but not queued
    yet, ``nbytes`` the size of their values, and ``next_offset`` the offset after them.
    """

    __slots__ = ("info", "ktp", "expected", "converted", "next_offset", "nbytes")

    def __init__(self, info: PartitionTopicInfo) -> None:
        self.info = info
        self.ktp = KafkaTopicPartition(info.topic, info.partition)
        self.expected = self.next_offset = info.fetched_offset
        self.converted: list[Message] = []
        self.nbytes = 0


class FetcherThread(threading.Thread):
    """One fetcher: a manual-assignment consumer on one broker feeding chunk queues."""

    def __init__(self, name: str, fetcher_id: int, leader: Leader, config: ConsumerConfig,
                 on_partition_errors: Callable[[FetcherThread, set[TopicPartition]], None],
                 on_failure: Callable[[FetcherThread, BaseException], None]) -> None:
        super().__init__(name=name, daemon=True)
        self.fetcher_id = fetcher_id
        self.leader = leader
        self._config = config
        self._client_config = client_config(config, leader.bootstrap)
        self._on_partition_errors = on_partition_errors
        self._on_failure = on_failure
        self._lock = threading.Lock()
        self._pending: dict[TopicPartition, PartitionTopicInfo] = {}
        self._assigned: dict[TopicPartition, _Assigned] = {}
        # Every topic this thread's client was ever asked for: with one, a message's topic need
        # not be read (even data in flight for a dropped partition belongs to that topic).
        self._topics: set[str] = set()
        self._stop_event = threading.Event()
        self._wakeup = threading.Event()
        self._consumer: Consumer | None = None
        self._last_warning = 0.0
        self._last_refresh = 0.0
        self.state = FetcherState.NEW

    # --- called by the manager -------------------------------------------------------------

    def add_partitions(self, infos: dict[TopicPartition, PartitionTopicInfo]) -> None:
        """Fetch these too; a partition already here keeps its current offset (as the original)."""
        with self._lock:
            for tp, info in infos.items():
                if tp not in self._assigned:
                    self._pending.setdefault(tp, info)
        self._wakeup.set()

    def partitions(self) -> set[TopicPartition]:
        with self._lock:
            return set(self._pending) | set(self._assigned)

    def initiate_shutdown(self) -> None:
        """Stop fetching; a blocked put gives up, so no chunk is queued after this returns."""
        self._stop_event.set()
        self._wakeup.set()
        with self._lock:
            infos = [a.info for a in self._assigned.values()] + list(self._pending.values())
        for info in infos:
            info.queue.wake_putters()

    # --- the thread ------------------------------------------------------------------------

    def _set_state(self, state: FetcherState) -> None:
        log.debug("%s: %s -> %s", self.name, self.state.name, state.name)
        self.state = state

    def run(self) -> None:
        self._set_state(FetcherState.RUNNING)
        try:
            self._consumer = Consumer(self._client_config)
            while not self._stop_event.is_set():
                self._step(self._consumer)
            self._set_state(FetcherState.STOPPED)
        except BaseException as exc:  # the thread's failure must reach the user as an event
            self._set_state(FetcherState.FAILED)
            log.exception("%s failed; its partitions go back to the leader finder", self.name)
            self._on_failure(self, exc)
        finally:
            if self._consumer is not None:
                try:
                    self._consumer.close()
                except Exception:  # already failing or stopping: nothing left to protect
                    log.debug("%s: closing the client failed", self.name, exc_info=True)

    def _step(self, consumer: Consumer) -> None:
        self._apply_pending(consumer)
        if not self._assigned:
            self._wakeup.wait(POLL_S)
            self._wakeup.clear()
            return
        msgs = consumer.consume(CONSUME_MESSAGES, 0)
        if not msgs:
            # Wake on the first message rather than waiting for a full batch, then take what
            # else has arrived: low latency when idle, large chunks under load.
            msgs = consumer.consume(1, POLL_S)
        if msgs:
            # Take batches until a chunk's worth is ready or nothing more is waiting: large
            # chunks under load, and a stop or a reset is noticed between batches.
            total = 0
            errors: list[Any] = []
            while msgs:
                total += len(msgs)
                self._convert(consumer, msgs, errors)
                if total >= CHUNK_MESSAGES or self._stop_event.is_set():
                    break
                msgs = consumer.consume(CONSUME_MESSAGES, 0)
            del msgs
            self._flush(consumer)
            for m in errors:
                self._handle_error(consumer, m)
        if time.monotonic() - self._last_refresh >= WATERMARK_REFRESH_S:
            self._refresh_watermarks(consumer)

    def _apply_pending(self, consumer: Consumer) -> None:
        if not self._pending:
            return
        with self._lock:
            pending, self._pending = self._pending, {}
        failed: set[TopicPartition] = set()
        start: list[KafkaTopicPartition] = []
        for tp, info in pending.items():
            if self._stop_event.is_set():
                return
            if info.fetched_offset < 0:
                try:
                    self._reset(consumer, info, "no committed offset")
                except KafkaException as exc:
                    self._warn("cannot resolve the start offset of [%s,%d] on %s: %s",
                               tp[0], tp[1], self.leader.bootstrap, exc)
                    failed.add(tp)
                    continue
            start.append(KafkaTopicPartition(info.topic, info.partition, info.fetched_offset))
            self._topics.add(info.topic)
            with self._lock:
                self._assigned[tp] = _Assigned(info)
        if start:
            consumer.incremental_assign(start)
            log.debug("%s: fetching %s", self.name,
                      [(k.topic, k.partition, k.offset) for k in start])
        if failed:
            self._on_partition_errors(self, failed)

    def _reset(self, consumer: Consumer, info: PartitionTopicInfo, why: str) -> int:
        """Apply auto.offset.reset to a partition: both offsets move (the original's reset)."""
        low, high = consumer.get_watermark_offsets(
            KafkaTopicPartition(info.topic, info.partition),
            timeout=min(OFFSET_QUERY_TIMEOUT_S, self._config.socket_timeout_ms / 1000.0),
            cached=False)
        offset = reset_offset(self._config.auto_offset_reset, low, high)
        log.info("%s for partition [%s,%d]: offset %d by auto.offset.reset=%s", why, info.topic,
                 info.partition, offset, self._config.auto_offset_reset)
        info.reset_fetch_offset(offset)
        info.reset_consume_offset(offset)
        info.high_watermark = high
        return offset

    def _convert(self, consumer: Consumer, msgs: list[Any], errors: list[Any]) -> None:
        """Sort a batch out per partition, appending each run to its ``converted`` list.

        librdkafka hands messages over in per-partition runs. Every per-message step here is a
        C-level ``map``: this is the hot loop of the fetcher thread, and Python bytecode per
        message would cost more than the client library itself (see docs/datapath.md). The
        client's Message objects are queued as they are; the stream builds MessageAndMetadata
        from them as the application takes them.
        """
        single = next(iter(self._topics)) if len(self._topics) == 1 else None
        if runs_in_c is not None and single is not None:
            runs = runs_in_c(msgs, _M_ERROR, _M_PARTITION)  # None: some message carries an error
            if runs is not None:
                whole = len(runs) == 1
                for part, start, end, nbytes in runs:
                    a = self._assigned.get((single, part))
                    if a is not None:  # None: data in flight for a dropped partition
                        self._convert_run(consumer, a, msgs if whole else msgs[start:end],
                                          nbytes)
                return
        if any(map(_M_ERROR, msgs)):  # KafkaError objects are truthy, None is not
            errs = list(map(_M_ERROR, msgs))
            errors.extend(m for m, e in zip(msgs, errs, strict=True) if e is not None)
            msgs = [m for m, e in zip(msgs, errs, strict=True) if e is None]
            if not msgs:
                return
        n = len(msgs)
        parts = list(map(_M_PARTITION, msgs))
        if single is not None and parts.count(parts[0]) == n:  # the usual case: one run
            a = self._assigned.get((single, parts[0]))
            if a is not None:
                self._convert_run(consumer, a, msgs)
            return
        keys: list[Any] = parts if single is not None else list(
            zip(map(_M_TOPIC, msgs), parts, strict=True))
        start = 0
        for key, run in groupby(keys):
            end = start + len(list(run))
            a = self._assigned.get((single, key) if single is not None else key)
            # None: no longer ours, data that was in flight when the partition was dropped.
            if a is not None:
                self._convert_run(consumer, a, msgs[start:end])
            start = end

    def _convert_run(self, consumer: Consumer, a: _Assigned, run: list[Any],
                     nbytes: int | None = None) -> None:
        """Append one partition's run; ``nbytes`` is the size of its values, if known."""
        info = a.info
        if info.fetched_offset != a.expected:  # someone reset the fetch offset: follow it
            self._seek(consumer, a, info.fetched_offset)
            return
        if _M_OFFSET(run[0]) < a.next_offset:  # fetched before a seek took effect
            run = run[bisect_left(list(map(_M_OFFSET, run)), a.next_offset):]
            nbytes = None
            if not run:
                return
        a.converted += run
        a.next_offset = _M_OFFSET(run[-1]) + 1
        # len(Message) is its value's size, 0 for a tombstone
        a.nbytes += sum(map(len, run)) if nbytes is None else nbytes

    def _flush(self, consumer: Consumer) -> None:
        """Queue each partition's converted messages as chunks (blocking while full).

        A chunk holds at most ``fetch.message.max.bytes`` of values, as the original's did (one
        fetch per partition, bounded by that size): with ``queued.max.message.chunks`` this
        bounds what a stream's queue holds. A message larger than the fetch size is queued as
        the original's chunk without valid bytes, and fetched again, until the size is raised.
        """
        limit = self._config.fetch_message_max_bytes
        for a in list(self._assigned.values()):
            if not a.converted:
                continue
            messages, a.converted = a.converted, []
            nbytes, a.nbytes = a.nbytes, 0
            info = a.info
            if info.fetched_offset != a.expected:  # reset while converting: drop, follow it
                self._seek(consumer, a, info.fetched_offset)
                continue
            pieces = [(messages, nbytes)] if nbytes <= limit else split_chunks(messages, limit)
            for piece, size in pieces:
                if size > limit:  # one message alone, over the fetch size
                    offset = _M_OFFSET(piece[0])
                    if not info.queue.put(FetchedDataChunk([], info, offset, 0, oversized=True),
                                          self._stop_event):
                        return
                    self._seek(consumer, a, offset)
                    break
                if not info.queue.put(FetchedDataChunk(piece, info, a.expected, size),
                                      self._stop_event):
                    return
                a.expected = _M_OFFSET(piece[-1]) + 1
                info.reset_fetch_offset(a.expected)
            high = consumer.get_watermark_offsets(a.ktp, cached=True)[1]
            if high >= 0:
                info.high_watermark = high

    def _seek(self, consumer: Consumer, a: _Assigned, offset: int) -> None:
        ktp = KafkaTopicPartition(a.info.topic, a.info.partition, offset)
        try:
            consumer.seek(ktp)
        except KafkaException:  # not fetching yet (or stopped after an error): restart it
            consumer.incremental_unassign([KafkaTopicPartition(ktp.topic, ktp.partition)])
            consumer.incremental_assign([ktp])
        a.expected = a.next_offset = offset
        a.converted = []
        a.nbytes = 0
        log.debug("%s: [%s,%d] now fetching from %d", self.name, ktp.topic, ktp.partition, offset)

    def _handle_error(self, consumer: Consumer, m: Any) -> None:
        err = m.error()
        code = err.code()
        tp = (m.topic(), m.partition()) if m.topic() is not None else None
        a = self._assigned.get(tp) if tp is not None else None
        if code == KafkaError._PARTITION_EOF:
            return
        if a is not None and tp is not None and code in _OUT_OF_RANGE:
            log.warning("Current offset %d for partition [%s,%d] out of range", a.expected,
                        tp[0], tp[1])
            try:
                self._seek(consumer, a, self._reset(consumer, a.info, "offset out of range"))
            except KafkaException as exc:
                self._warn("cannot reset [%s,%d]: %s", tp[0], tp[1], exc)
                self._drop(consumer, {tp})
        elif a is not None and tp is not None and code in _GONE:
            log.warning("%s: [%s,%d]: %s; looking for its leader again", self.name, tp[0], tp[1],
                        err.str())
            self._drop(consumer, {tp})
        elif err.fatal():
            raise KafkaException(err)
        else:  # transport errors and the like: librdkafka reconnects with backoff
            self._warn("%s: fetch from broker %d (%s) failed: %s", self.name, self.leader.broker_id,
                       self.leader.bootstrap, err.str())

    def _drop(self, consumer: Consumer, tps: set[TopicPartition]) -> None:
        """Stop fetching partitions and hand them back for leader discovery."""
        with self._lock:
            gone = [self._assigned.pop(tp) for tp in tps if tp in self._assigned]
        if gone:
            consumer.incremental_unassign([a.ktp for a in gone])
        self._on_partition_errors(self, tps)

    def _refresh_watermarks(self, consumer: Consumer) -> None:
        self._last_refresh = time.monotonic()
        for a in list(self._assigned.values()):
            high = consumer.get_watermark_offsets(a.ktp, cached=True)[1]
            if high >= 0:
                a.info.high_watermark = high

    def _warn(self, msg: str, *args: object) -> None:
        """A warning at most every few seconds: a dead broker must not flood the log."""
        now = time.monotonic()
        if now - self._last_warning >= _WARN_EVERY_S:
            self._last_warning = now
            log.warning(msg, *args)
        else:
            log.debug(msg, *args)
