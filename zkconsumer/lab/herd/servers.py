"""The servers a herd sweep measures: a ZooKeeper of its own, with the broker registered in it.

Run on a dedicated ZooKeeper, the members' sessions are the only ones, so the server's counters
hold nothing but the sweep (plus their rare pings).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass

from zkconsumer.lab.herd.spec import HerdSpec
from zkconsumer.zk import paths
from zkconsumer.zk.codec import BrokerRegistration, encode_broker

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HerdServers:
    zk_connect: str
    bootstrap: str
    broker_name: str = ""  # as results name it; "" for a broker named by address


@contextlib.contextmanager
def herd_servers(spec: HerdSpec) -> Iterator[HerdServers]:
    """The ZooKeeper the sweep measures and a broker registered in it.

    Dedicated (the default): a fresh embedded ZooKeeper in which the broker (``bootstrap``, or
    an embedded one started next to a ZooKeeper of its own) is registered with a *persistent*
    znode, so no session but the members' ever talks to it. Otherwise the named (or
    environment's) servers, with every other client's traffic in the counts.
    """
    from zkconsumer.testing.kraft import consumer_group_props
    from zkconsumer.testing.servers import broker_from_env, is_kraft_spec, zookeeper_from_env
    from zkconsumer.testing.zookeeper import EmbeddedZooKeeper

    # An Apache Kafka 4 broker gives the KIP-848 groups the sweep's session and heartbeat.
    kraft_props = (consumer_group_props(spec.timing.session_timeout_ms,
                                        spec.timing.consumer_heartbeat_interval_ms)
                   if spec.bootstrap is None and is_kraft_spec(spec.broker) else ())
    with contextlib.ExitStack() as stack:
        if not spec.dedicated_zookeeper:
            zk_connect = stack.enter_context(zookeeper_from_env(spec.zk_connect)).connect_string
            broker = stack.enter_context(broker_from_env(zk_connect, spec.bootstrap or spec.broker,
                                                         kraft_props=kraft_props))
            yield HerdServers(zk_connect, broker.bootstrap, getattr(broker, "name", ""))
            return
        bootstrap, name = spec.bootstrap, ""
        if bootstrap is None:
            home = stack.enter_context(zookeeper_from_env(spec.zk_connect)).connect_string
            broker = stack.enter_context(broker_from_env(home, spec.broker,
                                                         kraft_props=kraft_props))
            bootstrap, name = broker.bootstrap, getattr(broker, "name", "")
        zk_connect = stack.enter_context(EmbeddedZooKeeper()).connect_string
        register_broker_persistently(zk_connect, bootstrap)
        yield HerdServers(zk_connect, bootstrap, name)


def register_broker_persistently(zk_connect: str, bootstrap: str, broker_id: int = 0) -> None:
    """``/brokers/ids/<id>`` for the first bootstrap server, as a persistent znode: legacy
    consumers find the broker there, and no registration session pings the server."""
    from zkconsumer.testing.registration import COMMON_PATHS
    from zkconsumer.zk.client import started_client

    host, _, port = bootstrap.split(",")[0].rpartition(":")
    reg = BrokerRegistration(broker_id=broker_id, host=host, port=int(port),
                             endpoints=(f"PLAINTEXT://{host}:{port}",))
    with started_client(zk_connect) as client:
        for path in COMMON_PATHS:
            client.ensure_path(path)
        client.create(paths.broker(broker_id), encode_broker(reg))
