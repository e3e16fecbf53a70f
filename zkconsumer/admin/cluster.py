"""Read the broker registrations from ZooKeeper and open short-lived kazoo sessions for tools."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator

from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError, NodeExistsError, NoNodeError

from zkconsumer.errors import BrokerUnavailable, CorruptZnode, ZooKeeperUnavailable
from zkconsumer.zk import paths
from zkconsumer.zk.codec import BrokerRegistration, decode_broker
from zkconsumer.zk.security import ZkSecurity, access_denied, acl_for
from zkconsumer.zk.session import confirm_sasl

log = logging.getLogger(__name__)


@contextlib.contextmanager
def zk_session(zk_connect: str, timeout: float = 10.0,
               security: ZkSecurity | None = None) -> Iterator[KazooClient]:
    """A kazoo client for one tool call; a clear error naming the connect string if unreachable.

    Credentials and the ACL of created znodes come from ``security``, by default from
    ``ZKCONSUMER_ZK_AUTH`` / ``ZKCONSUMER_ZK_ACL`` (the connector's ``zookeeper.auth`` /
    ``zookeeper.acl`` values), so a tool writes into a secured group exactly as its members do.
    A ``NoAuth`` from ZooKeeper becomes :class:`AccessDenied` naming the credentials used; a
    refused SASL login becomes :class:`ZooKeeperUnavailable` naming the user.
    """
    security = security if security is not None else ZkSecurity.from_env()
    client = KazooClient(hosts=zk_connect, timeout=min(timeout, 10.0), **security.kazoo_kwargs())
    started = time.monotonic()
    try:
        client.start(timeout=timeout)
        confirm_sasl(client, zk_connect, security, timeout - (time.monotonic() - started))
    except ZooKeeperUnavailable:
        client.stop()
        client.close()
        raise
    except Exception as exc:
        client.close()
        raise ZooKeeperUnavailable(
            f"cannot connect to ZooKeeper at {zk_connect!r} within {timeout:.0f} s ({exc})"
        ) from None
    try:
        yield client
    except NoAuthError:
        raise access_denied(f"a znode in {zk_connect}", "the operation", security) from None
    finally:
        client.stop()
        client.close()


def create_with_parents(client: KazooClient, path: str, value: bytes) -> None:
    """Create ``path`` and its missing parents, each with the ACL ``zk/security.py`` gives it.

    Unlike kazoo's ``makepath`` (which gives parents the child's ACL), shared roots such as
    ``/brokers/topics`` stay open and group znodes get the client's ACL.
    """
    acl = acl_for(path, client.default_acl)
    try:
        client.create(path, value, acl=acl)
    except NoNodeError:
        parent = path.rsplit("/", 1)[0]
        if parent:
            try:
                create_with_parents(client, parent, b"")
            except NodeExistsError:
                pass
        client.create(path, value, acl=acl)


def brokers(client: KazooClient) -> dict[int, BrokerRegistration]:
    """Registered brokers by id; a corrupt registration is logged and skipped."""
    try:
        children = client.get_children(paths.BROKER_IDS)
    except NoNodeError:
        return {}
    found: dict[int, BrokerRegistration] = {}
    for child in children:
        try:
            broker_id = int(child)
            path = paths.broker(broker_id)
            data, _ = client.get(path)
            found[broker_id] = decode_broker(path, broker_id, data)
        except NoNodeError:
            continue
        except (ValueError, CorruptZnode) as exc:
            log.warning("ignoring broker registration %s/%s: %s", paths.BROKER_IDS, child, exc)
    return dict(sorted(found.items()))


def bootstrap_servers(client: KazooClient, zk_connect: str) -> str:
    """``host:port,...`` of the registered brokers, as a Kafka client's bootstrap list."""
    regs = brokers(client)
    if not regs:
        raise BrokerUnavailable(f"no broker is registered under {paths.BROKER_IDS} in {zk_connect}")
    return ",".join(reg.bootstrap for reg in regs.values())


def watermarks(bootstrap: str, tps: list[tuple[str, int]], timeout: float = 5.0,
               ) -> dict[tuple[str, int], tuple[int, int] | None]:
    """(log start, log end) per partition as the broker claims it; None where it did not answer.

    One short-lived client for all partitions; a partition that fails is logged and left None,
    so one bad partition never hides the others.
    """
    from confluent_kafka import Consumer, TopicPartition

    if not tps:
        return {}
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "zkconsumer-tools",
                         "enable.auto.commit": False, "log_level": 0,
                         "socket.timeout.ms": int(timeout * 1000)})
    out: dict[tuple[str, int], tuple[int, int] | None] = {}
    try:
        for topic, p in tps:
            try:
                low, high = consumer.get_watermark_offsets(TopicPartition(topic, p),
                                                           timeout=timeout)
                out[(topic, p)] = (int(low), int(high))
            except Exception as exc:  # KafkaException or a timeout for this partition
                log.warning("no watermarks for %s-%d: %s", topic, p, exc)
                out[(topic, p)] = None
    finally:
        consumer.close()
    return out
