"""Offsets in Kafka (``offsets.storage=kafka``), with or without ``dual.commit.enabled``.

The original (spec detailed §5.6, Kafka storage) sent OffsetCommit / OffsetFetch for its group to
the group coordinator it found with a GroupCoordinatorRequest, without ever joining the group:
generation -1 and no member id, the "simple consumer" form a broker accepts while the group has no
broker-side members. Here the requests go through a confluent-kafka ``Consumer`` with the group's
``group.id`` that never subscribes and commits explicit offsets: librdkafka then sends
OffsetCommit with generation -1 and an empty member id (its ``cgrp`` debug log says "Committing
offsets ... with generation-id -1 in join-state init"), and Apache Kafka accepts it only while the
group has no broker-side member (UNKNOWN_MEMBER_ID otherwise; tests pin both). The admin
client's ``alter_consumer_group_offsets`` would send the same request, but librdkafka 2.x aborts
the process (``rd_kafka_enq_once_del_source_return`` assertion) when such a request times out
against an unreachable coordinator, so it is not used.

What follows the original:

* a commit sends every owned partition's consumed offset (unfiltered, KAFKA-1510) and fails if
  any partition has an error; it is retried unless the only errors are
  OFFSET_METADATA_TOO_LARGE; NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE, a timeout
  (``offsets.channel.socket.timeout.ms``) or a transport error drop the channel, so the next
  attempt finds the coordinator again; attempts are ``1 + offsets.commit.max.retries`` for the
  auto-commit task and explicit retrying commits, 1 for the commits of a rebalance or a shutdown,
  with ``offsets.channel.backoff.ms`` between them;
* with dual commit, each partition Kafka accepted is then written to ZooKeeper (changed offsets
  only, as in ZooKeeper storage), so ZooKeeper never runs ahead of Kafka;
* a fetch retries every ``offsets.channel.backoff.ms`` until it succeeds or the connector shuts
  down; with dual commit it takes, per partition, the larger of the Kafka and ZooKeeper offsets.

Deviations: a commit that still fails after its attempts raises :class:`OffsetCommitFailed`
(naming the group, the partitions and the broker's error) instead of returning silently; a fetch
error that retrying cannot fix (not a coordinator, load or transport error) raises
:class:`OffsetStorageError` instead of starting from ``auto.offset.reset``; a negative consumed
offset (nothing consumed yet) is never sent.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kazoo.exceptions import NoNodeError

from zkconsumer.config import ConsumerConfig
from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.errors import BrokerUnavailable, ZkConsumerError
from zkconsumer.events import EventBus
from zkconsumer.identity import TopicPartition
from zkconsumer.metrics import RebalanceMetrics
from zkconsumer.offsets.store import NO_OFFSET
from zkconsumer.offsets.zookeeper import ZookeeperOffsetStore
from zkconsumer.zk import codec, paths
from zkconsumer.zk.session import ZkSession

log = logging.getLogger(__name__)

#: Errors after which the original dropped its channel and looked for the coordinator again.
REFRESH_COORDINATOR = frozenset({"NOT_COORDINATOR", "NOT_COORDINATOR_FOR_GROUP",
                                 "COORDINATOR_NOT_AVAILABLE", "GROUP_COORDINATOR_NOT_AVAILABLE"})
#: The one commit error the original did not retry.
NOT_RETRIABLE_COMMIT = frozenset({"OFFSET_METADATA_TOO_LARGE"})
#: Fetch errors the original retried (besides transport errors and timeouts).
RETRIABLE_FETCH = REFRESH_COORDINATOR | {"COORDINATOR_LOAD_IN_PROGRESS",
                                         "GROUP_LOAD_IN_PROGRESS"}
#: How long a release waits for timed-out commits to be sent or failed (see barrier()).
SETTLE_S = 60.0
#: Whole-request failures: the request never got an answer (the original's I/O exception).
TRANSPORT = "TRANSPORT"


class OffsetStorageError(ZkConsumerError):
    """The broker answered an offset request with an error that retrying does not fix."""


class OffsetCommitFailed(ZkConsumerError):
    """A commit to Kafka still failed after every attempt; nothing it carried is assumed stored."""

    retriable = True


class OffsetFetchInterrupted(ZkConsumerError):
    """The connector shut down while an offset fetch was still retrying."""


class ChannelError(ZkConsumerError):
    """One request got no answer: timeout, no coordinator, connection refused."""

    retriable = True


# --- pure decisions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CommitOutcome:
    """One commit attempt judged as the original judged an OffsetCommitResponse."""

    accepted: dict[TopicPartition, int]
    errors: dict[TopicPartition, str]
    retriable: bool
    refresh_coordinator: bool

    @property
    def done(self) -> bool:
        """Committed, or failed with only non-retriable errors: no further attempt."""
        return not self.errors or not self.retriable


def judge_commit(offsets: Mapping[TopicPartition, int],
                 errors: Mapping[TopicPartition, str | None]) -> CommitOutcome:
    """Per-partition errors (None = accepted) of one attempt → what to do next."""
    failed = {tp: err for tp, err in errors.items() if err is not None}
    accepted = {tp: o for tp, o in offsets.items() if errors.get(tp, TRANSPORT) is None}
    for tp in offsets:
        if tp not in errors:
            failed.setdefault(tp, TRANSPORT)
    return CommitOutcome(
        accepted=accepted, errors=failed,
        retriable=any(err not in NOT_RETRIABLE_COMMIT for err in failed.values()),
        refresh_coordinator=any(err in REFRESH_COORDINATOR or err == TRANSPORT or _is_local(err)
                                for err in failed.values()))


def commit_attempts(retries: int) -> int:
    return 1 + max(0, retries)


def merge_dual(kafka: Mapping[TopicPartition, int], zookeeper: Mapping[TopicPartition, int]
               ) -> dict[TopicPartition, int]:
    """``max(zkOffset, kafkaOffset)`` per partition; -1 (none) where neither has one."""
    return {tp: max(kafka.get(tp, NO_OFFSET), zookeeper.get(tp, NO_OFFSET))
            for tp in set(kafka) | set(zookeeper)}


def _error_name(err: Any) -> str:
    return str(err.name() if hasattr(err, "name") else err)


def _is_local(name: str) -> bool:
    """librdkafka's own errors (``_TIMED_OUT``, ``_TRANSPORT``...): no answer from a broker."""
    return name.startswith("_")


# --- the channel ------------------------------------------------------------------------------


def bootstrap_from_zookeeper(session: ZkSession) -> str:
    """``host:port,...`` of the brokers registered in ZooKeeper (the original picked one)."""
    try:
        ids = session.get_children(paths.BROKER_IDS)
    except NoNodeError:
        ids = []
    found = []
    for bid in sorted(i for i in ids if i.isdigit()):
        path = paths.broker(int(bid))
        try:
            data, _ = session.get(path)
            found.append(codec.decode_broker(path, int(bid), data).bootstrap)
        except (NoNodeError, ValueError) as exc:
            log.debug("skipping broker %s: %s", bid, exc)
    if not found:
        raise BrokerUnavailable(f"no broker is registered under {paths.BROKER_IDS}")
    return ",".join(found)


class BrokerOffsetChannel:
    """OffsetCommit / OffsetFetch for one group through a consumer that never subscribes.

    One request at a time (the store's lock). librdkafka finds the coordinator for the group
    and finds it again after NOT_COORDINATOR by itself, which is what the original's
    ``offsetsChannel.disconnect()`` achieved, so :meth:`disconnect` only counts. A commit that
    gets no answer within the socket timeout is still queued inside librdkafka and could land
    later, after the next owner's commit: its consumer is retired (closed on a thread of its
    own; the close sends the queued commit if the coordinator comes back, else fails it) and
    the next request uses a new one. :meth:`settle` waits for retired consumers, so that the
    store's barrier can promise no late commit of a released partition.
    """

    def __init__(self, group: str, client_id: str, bootstrap: Callable[[], str],
                 socket_timeout_ms: int) -> None:
        self.group = group
        self._client_id = client_id
        self._bootstrap = bootstrap
        self._timeout_s = socket_timeout_ms / 1000.0
        self._consumer: Any | None = None
        self._answer: tuple[Any, list[Any]] | None = None
        self.requests = 0
        self.disconnects = 0
        self.retired = 0
        self._closing: list[threading.Thread] = []

    def _client(self) -> Any:
        if self._consumer is None:
            from confluent_kafka import Consumer

            self._consumer = Consumer({
                "bootstrap.servers": self._bootstrap(), "group.id": self.group,
                "client.id": self._client_id, "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "socket.timeout.ms": max(10, int(self._timeout_s * 1000)),
                "on_commit": self._on_commit, "log_level": 0})
        return self._consumer

    def _on_commit(self, err: Any, partitions: list[Any]) -> None:
        self._answer = (err, list(partitions or ()))

    def disconnect(self) -> None:
        self.disconnects += 1

    def _retire(self) -> None:
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            self.retired += 1
            # close() waits for the coordinator while a commit is queued: not on this thread.
            closer = threading.Thread(target=consumer.close, name=f"{self.group}-offsets-close",
                                      daemon=True)
            closer.start()
            self._closing.append(closer)

    def settle(self, timeout_s: float) -> bool:
        """Wait until every retired consumer is closed (its queued commit sent or failed)."""
        deadline = time.monotonic() + timeout_s
        for closer in list(self._closing):
            closer.join(max(0.0, deadline - time.monotonic()))
        self._closing = [c for c in self._closing if c.is_alive()]
        return not self._closing

    def close(self) -> None:
        self._retire()

    def commit(self, offsets: Mapping[TopicPartition, int]) -> dict[TopicPartition, str | None]:
        """One OffsetCommit; per partition the broker's error name, None if stored."""
        from confluent_kafka import KafkaException
        from confluent_kafka import TopicPartition as CkTp

        self.requests += 1
        consumer = self._client()
        self._answer = None
        try:
            consumer.commit(offsets=[CkTp(tp.topic, tp.partition, o)
                                     for tp, o in offsets.items()], asynchronous=True)
        except KafkaException as exc:
            raise ChannelError(f"offset commit for group {self.group!r}: {exc}") from None
        deadline = time.monotonic() + self._timeout_s
        while self._answer is None and time.monotonic() < deadline:
            consumer.poll(0.05)
        if self._answer is None:
            self._retire()
            raise ChannelError(f"offset commit for group {self.group!r}: no answer within "
                               f"{self._timeout_s * 1000:.0f} ms")
        err, answer = self._answer
        out: dict[TopicPartition, str | None] = {}
        for r in answer:
            e = r.error if r.error is not None else None
            out[TopicPartition(r.topic, r.partition)] = None if e is None else _error_name(e)
        if err is not None:
            for tp in offsets:
                if out.get(tp) is None:
                    out[tp] = _error_name(err)
        return out

    def fetch(self, partitions: Iterable[TopicPartition]
              ) -> tuple[dict[TopicPartition, int], dict[TopicPartition, str]]:
        """One OffsetFetch: (offsets, -1 where none; errors by partition)."""
        from confluent_kafka import KafkaException
        from confluent_kafka import TopicPartition as CkTp

        self.requests += 1
        try:
            answer = self._client().committed(
                [CkTp(tp.topic, tp.partition) for tp in partitions], timeout=self._timeout_s)
        except KafkaException as exc:
            err = exc.args[0] if exc.args else exc
            name = _error_name(err)
            if name in RETRIABLE_FETCH or _is_local(name):
                raise ChannelError(f"offset fetch for group {self.group!r}: {err}") from None
            raise OffsetStorageError(f"offset fetch for group {self.group!r} failed: {err}"
                                     ) from None
        offsets, errors = {}, {}
        for r in answer:
            tp = TopicPartition(r.topic, r.partition)
            if r.error is not None:
                errors[tp] = _error_name(r.error)
            offsets[tp] = r.offset if r.offset >= 0 else NO_OFFSET
        return offsets, errors


# --- the store --------------------------------------------------------------------------------


class KafkaOffsetStore(ZookeeperOffsetStore):
    """``offsets.storage=kafka``: the connector's offset store, ZooKeeper too with dual commit."""

    def __init__(self, session: ZkSession, config: ConsumerConfig, events: EventBus,
                 metrics: RebalanceMetrics, is_shutting_down: Callable[[], bool],
                 channel: BrokerOffsetChannel | None = None) -> None:
        super().__init__(session, config.group_id, events, metrics)
        self.dual = config.dual_commit_enabled
        self.max_retries = config.offsets_commit_max_retries
        self._backoff_s = config.offsets_channel_backoff_ms / 1000.0
        self._is_shutting_down = is_shutting_down
        self.channel = channel or BrokerOffsetChannel(
            config.group_id, config.client_id, lambda: bootstrap_from_zookeeper(session),
            config.offsets_channel_socket_timeout_ms)
        self._stop = threading.Event()

    def read(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """OffsetFetch until it succeeds (or the connector shuts down); max with ZK when dual."""
        tps = list(partitions)
        if not tps:
            return {}
        while True:
            if self._is_shutting_down() or self._stop.is_set():
                raise OffsetFetchInterrupted(
                    f"group {self._group!r}: shut down while fetching offsets for {len(tps)} "
                    "partition(s)")
            try:
                with self._lock:
                    offsets, errors = self.channel.fetch(tps)
                retry = sorted({e for e in errors.values() if e in RETRIABLE_FETCH})
                if not retry and errors:
                    raise OffsetStorageError(
                        f"group {self._group!r}: the coordinator refused the offset fetch: "
                        + ", ".join(f"{tp.topic}-{tp.partition}: {e}"
                                    for tp, e in sorted(errors.items())))
                if not retry:
                    break
                if set(retry) & REFRESH_COORDINATOR:
                    self.channel.disconnect()
                log.debug("[%s] could not fetch offsets (%s); retrying in %.0f ms",
                          self._events.consumer_id, ", ".join(retry), self._backoff_s * 1000)
            except ChannelError as exc:
                self.channel.disconnect()
                log.warning("[%s] error while fetching offsets: %s", self._events.consumer_id,
                            exc)
            self._stop.wait(self._backoff_s)
        offsets = {tp: offsets.get(tp, NO_OFFSET) for tp in tps}
        if self.dual:
            offsets = merge_dual(offsets, super().read(tps))
        return offsets

    def commit(self, infos: Iterable[PartitionTopicInfo]) -> dict[TopicPartition, int]:
        """One attempt, as the original's rebalance and shutdown commits; failures are logged
        and reported as an ``error`` event, never raised (the rebalance goes on)."""
        try:
            return self.commit_retrying(infos, retries=0)
        except OffsetCommitFailed as exc:
            log.error("[%s] %s", self._events.consumer_id, exc)
            self._events.emit("error", where="offset_commit", error=str(exc))
            return {}

    def commit_retrying(self, infos: Iterable[PartitionTopicInfo], retries: int
                        ) -> dict[TopicPartition, int]:
        """Every owned consumed offset in ``1 + retries`` attempts; raises if none succeeds."""
        offsets = {TopicPartition(i.topic, i.partition): i.consumed_offset for i in list(infos)
                   if i.consumed_offset >= 0}
        if not offsets:
            return {}
        attempts = commit_attempts(retries)
        with self._lock:
            for attempt in range(1, attempts + 1):
                try:
                    outcome = judge_commit(offsets, self.channel.commit(offsets))
                except ChannelError as exc:
                    outcome = CommitOutcome({}, dict.fromkeys(offsets, TRANSPORT), True, True)
                    log.warning("[%s] error while committing offsets: %s",
                                self._events.consumer_id, exc)
                if self.dual and outcome.accepted:
                    self._write_zookeeper(outcome.accepted)
                if outcome.refresh_coordinator:
                    self.channel.disconnect()
                if outcome.done:
                    break
                if attempt < attempts:
                    log.debug("[%s] retrying offset commit in %.0f ms (%s)",
                              self._events.consumer_id, self._backoff_s * 1000,
                              sorted(set(outcome.errors.values())))
                    time.sleep(self._backoff_s)
        self._metrics.add(commits=len(outcome.accepted))
        if outcome.accepted:
            self._events.emit("offsets_committed", storage="kafka",
                              offsets={f"{tp.topic}/{tp.partition}": o
                                       for tp, o in sorted(outcome.accepted.items())})
        if outcome.errors:
            errors = sorted(set(outcome.errors.values()))
            raise OffsetCommitFailed(
                f"group {self._group!r}: offset commit to Kafka failed after {attempts} "
                f"attempt(s) ({', '.join(errors)}; a request that timed out may still be "
                "stored if the coordinator receives it later) for "
                + ", ".join(f"{tp.topic}-{tp.partition}" for tp in sorted(outcome.errors)))
        return outcome.accepted

    def barrier(self) -> None:
        """No commit of a released partition after this: neither ours in progress nor one a
        timed-out attempt left queued in a retired client (bounded by SETTLE_S)."""
        super().barrier()
        with self._lock:
            if not self.channel.settle(SETTLE_S):
                log.warning("[%s] a timed-out offset commit is still queued after %.0f s; it "
                            "may land after the next owner's", self._events.consumer_id,
                            SETTLE_S)

    def _write_zookeeper(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Dual commit: the ZooKeeper copy of what Kafka took (changed offsets only)."""
        for tp, offset in offsets.items():
            if self._checkpoint.get(tp) == offset:
                continue
            self._session.set(paths.offset(self._group, tp.topic, tp.partition),
                              codec.encode_offset(offset))
            self._checkpoint[tp] = offset

    def close(self) -> None:
        self._stop.set()
        self.channel.close()
