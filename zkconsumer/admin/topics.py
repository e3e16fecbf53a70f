"""Create and describe topics the way a ZooKeeper-mode Kafka cluster shows them to consumers.

A Kafka 0.10 controller wrote ``/brokers/topics/<t>`` and one ``state`` znode per partition; the
legacy consumer reads both. Against a broker that keeps no state in ZooKeeper (the embedded Tansu)
these functions write them, with the first registered broker as leader of every partition.
Against a ZooKeeper-mode Kafka (a ``/controller`` znode exists) the controller writes them itself
and these functions only wait for them.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError

from zkconsumer.admin.cluster import bootstrap_servers, brokers, create_with_parents, zk_session
from zkconsumer.errors import BrokerUnavailable, CorruptZnode, TopicError
from zkconsumer.zk import paths
from zkconsumer.zk.codec import (
    PartitionState,
    decode_partition_state,
    decode_topic_assignment,
    encode_partition_state,
    encode_topic_assignment,
)

log = logging.getLogger(__name__)

ADMIN_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class PartitionInfo:
    partition: int
    replicas: tuple[int, ...]
    leader: int | None
    isr: tuple[int, ...]


@dataclass(frozen=True)
class TopicInfo:
    name: str
    partitions: tuple[PartitionInfo, ...]


def _admin(bootstrap: str):  # type: ignore[no-untyped-def]
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})


def _check_partitions(partitions: object) -> int:
    if isinstance(partitions, bool) or not isinstance(partitions, int) or partitions < 1:
        raise TopicError(f"partitions must be a positive integer, got {partitions!r}")
    return partitions


def _broker_partition_count(bootstrap: str, topic: str) -> int:
    # Ask for all topics: a metadata request naming the topic makes some brokers (the embedded
    # one among them) auto-create it with default settings.
    md = _admin(bootstrap).list_topics(timeout=ADMIN_TIMEOUT_S)
    meta = md.topics.get(topic)
    if meta is None or meta.error is not None:
        return 0
    return len(meta.partitions)


def _write_topic_znodes(client: KazooClient, topic: str, partitions: int, leader: int) -> None:
    """The controller's part: topic assignment plus a leader/ISR state per partition."""
    path = paths.topic(topic)
    assignment = {p: [leader] for p in range(partitions)}
    try:
        create_with_parents(client, path, encode_topic_assignment(assignment))
    except NodeExistsError:
        client.set(path, encode_topic_assignment(assignment))
    for p in range(partitions):
        state_path = paths.partition_state(topic, p)
        if client.exists(state_path) is None:
            state = PartitionState(leader=leader, isr=(leader,))
            create_with_parents(client, state_path, encode_partition_state(state))


def _wait_for_controller(client: KazooClient, topic: str, partitions: int) -> None:
    deadline = time.monotonic() + ADMIN_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            data, _ = client.get(paths.topic(topic))
            if len(decode_topic_assignment(paths.topic(topic), data)) >= partitions:
                return
        except (NoNodeError, CorruptZnode):
            pass
        time.sleep(0.1)
    raise TopicError(f"the controller did not register topic {topic!r} in ZooKeeper in time")


def _leader_and_bootstrap(client: KazooClient, zk_connect: str,
                          bootstrap: str | None) -> tuple[int, str]:
    regs = brokers(client)
    if not regs:
        raise BrokerUnavailable(
            f"no broker is registered under {paths.BROKER_IDS} in {zk_connect}; start one first"
        )
    return next(iter(regs)), bootstrap or bootstrap_servers(client, zk_connect)


def create_topic(zk_connect: str, topic: str, partitions: int, bootstrap: str | None = None,
                 *, exist_ok: bool = False, broker_partitions: int | None = None) -> TopicInfo:
    """Create ``topic`` on the broker and make it visible to legacy consumers in ZooKeeper.

    ``broker_partitions`` (>= ``partitions``) creates spare partitions on the broker that
    ZooKeeper does not list yet, for brokers without CreatePartitions support (the embedded
    Tansu): ``add_partitions`` can then reveal them, which is what a consumer observes when a
    topic grows.
    """
    paths.validate_topic(topic)
    _check_partitions(partitions)
    on_broker = _check_partitions(broker_partitions or partitions)
    if on_broker < partitions:
        raise TopicError(
            f"broker_partitions ({on_broker}) must be >= partitions ({partitions})"
        )
    from confluent_kafka.admin import NewTopic

    with zk_session(zk_connect) as client:
        leader, servers = _leader_and_bootstrap(client, zk_connect, bootstrap)
        existing = _broker_partition_count(servers, topic)
        if existing and not exist_ok:
            raise TopicError(f"topic {topic!r} already exists with {existing} partitions")
        if not existing:
            admin = _admin(servers)  # keep the handle alive until the future resolves
            futures = admin.create_topics(
                [NewTopic(topic, num_partitions=on_broker, replication_factor=1)],
                operation_timeout=ADMIN_TIMEOUT_S, request_timeout=ADMIN_TIMEOUT_S)
            try:
                futures[topic].result()
            except Exception as exc:
                raise TopicError(f"the broker refused to create topic {topic!r}: {exc}") from None
        if client.exists(paths.CONTROLLER) is not None:
            _wait_for_controller(client, topic, partitions)
        else:
            _write_topic_znodes(client, topic, partitions, leader)
        log.info("created topic %s with %d partitions", topic, partitions)
        return _describe(client, topic)


def add_partitions(zk_connect: str, topic: str, total_partitions: int,
                   bootstrap: str | None = None) -> TopicInfo:
    """Grow ``topic`` to ``total_partitions``; the consumers' topic-data watch fires."""
    paths.validate_topic(topic)
    _check_partitions(total_partitions)
    from confluent_kafka.admin import NewPartitions

    with zk_session(zk_connect) as client:
        leader, servers = _leader_and_bootstrap(client, zk_connect, bootstrap)
        current = len(_describe(client, topic).partitions)
        if total_partitions <= current:
            raise TopicError(
                f"topic {topic!r} has {current} partitions; cannot grow it to {total_partitions}"
            )
        if _broker_partition_count(servers, topic) < total_partitions:
            admin = _admin(servers)
            futures = admin.create_partitions(
                [NewPartitions(topic, total_partitions)], request_timeout=ADMIN_TIMEOUT_S)
            try:
                futures[topic].result()
            except Exception as exc:
                raise TopicError(
                    f"the broker cannot grow topic {topic!r} to {total_partitions} partitions: "
                    f"{exc}. A broker without CreatePartitions needs the spare partitions made at "
                    "creation (create_topic(..., broker_partitions=N))"
                ) from None
        if client.exists(paths.CONTROLLER) is not None:
            _wait_for_controller(client, topic, total_partitions)
        else:
            _write_topic_znodes(client, topic, total_partitions, leader)
        return _describe(client, topic)


def _describe(client: KazooClient, topic: str) -> TopicInfo:
    path = paths.topic(topic)
    try:
        data, _ = client.get(path)
    except NoNodeError:
        raise TopicError(f"topic {topic!r} does not exist ({path} is missing)") from None
    assignment = decode_topic_assignment(path, data)
    parts = []
    for p, replicas in assignment.items():
        state_path = paths.partition_state(topic, p)
        leader: int | None = None
        isr: tuple[int, ...] = ()
        try:
            sdata, _ = client.get(state_path)
            state = decode_partition_state(state_path, sdata)
            leader, isr = state.leader, state.isr
        except (NoNodeError, CorruptZnode) as exc:
            log.debug("no usable state for %s: %s", state_path, exc)
        parts.append(PartitionInfo(p, tuple(replicas), leader, isr))
    return TopicInfo(topic, tuple(parts))


def describe_topic(zk_connect: str, topic: str) -> TopicInfo:
    paths.validate_topic(topic)
    with zk_session(zk_connect) as client:
        return _describe(client, topic)


def list_topics(zk_connect: str) -> list[str]:
    with zk_session(zk_connect) as client:
        try:
            return sorted(client.get_children(paths.BROKER_TOPICS))
        except NoNodeError:
            return []
