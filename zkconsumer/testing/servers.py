"""Pick the ZooKeeper and broker a run uses: embedded (default), testcontainers, or external.

``ZKCONSUMER_ZK`` and ``ZKCONSUMER_BOOTSTRAP`` select them for the tests, the demo and the CLI:
unset means embedded servers started here; ``testcontainers`` means containers (needs a Docker
engine); anything else is taken as ``host:port[,...]`` of servers someone else runs.

A broker spec may also be ``tansu`` (the embedded default, said explicitly), ``kafka`` (an Apache
Kafka broker started here from ``ZKCONSUMER_KAFKA_HOME``) or ``kafka:DIR`` (from the Kafka
directory ``DIR``); see :mod:`zkconsumer.testing.kafka`, and :mod:`zkconsumer.testing.kraft` for
Apache Kafka 4 (no ZooKeeper; registered in the lab's ZooKeeper like Tansu).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from kazoo.client import KazooClient

from zkconsumer.errors import ServerError, ZooKeeperUnavailable
from zkconsumer.testing.broker import EmbeddedBroker
from zkconsumer.testing.kafka import KafkaBroker, kafka_home_from_env
from zkconsumer.testing.kraft import KraftBroker, is_kraft_home
from zkconsumer.testing.registration import register_broker
from zkconsumer.testing.zookeeper import EmbeddedZooKeeper, four_letter
from zkconsumer.zk import paths
from zkconsumer.zk.codec import BrokerRegistration

log = logging.getLogger(__name__)

ZK_ENV = "ZKCONSUMER_ZK"
BROKER_ENV = "ZKCONSUMER_BOOTSTRAP"
TESTCONTAINERS = "testcontainers"
TANSU = "tansu"
KAFKA = "kafka"


@dataclass
class ExternalZooKeeper:
    """A ZooKeeper someone else runs; four-letter words go to its first server."""

    connect_string: str

    def four_letter(self, cmd: str) -> str:
        first = self.connect_string.split(",")[0].split("/")[0]
        host, _, port = first.rpartition(":")
        return four_letter(host, int(port), cmd)


@dataclass
class ExternalBroker:
    bootstrap: str
    broker_id: int

    @property
    def name(self) -> str:
        return f"external broker at {self.bootstrap}"


def is_kafka_spec(spec: str) -> bool:
    return spec == KAFKA or spec.startswith(KAFKA + ":")


def kafka_broker(zk_connect: str, spec: str, props: Sequence[str] = (),
                 kraft_props: Sequence[str] = ()) -> KafkaBroker | KraftBroker:
    """An unstarted broker for ``kafka`` or ``kafka:DIR``: a :class:`KraftBroker` when the
    directory holds Apache Kafka 4 or later (with ``kraft_props`` after ``props``), else a
    :class:`KafkaBroker`."""
    home = kafka_home_from_env(spec[len(KAFKA) + 1:] if spec.startswith(KAFKA + ":") else None)
    if is_kraft_home(home):
        return KraftBroker(zk_connect, home, props=[*props, *kraft_props])
    return KafkaBroker(zk_connect, home, props=props)


def is_kraft_spec(spec: str | None) -> bool:
    """Whether the broker spec (or ``ZKCONSUMER_BOOTSTRAP`` when None) starts a KRaft broker."""
    spec = os.environ.get(BROKER_ENV, "") if spec is None else spec
    if not spec or not is_kafka_spec(spec):
        return False
    home = kafka_home_from_env(spec[len(KAFKA) + 1:] if spec.startswith(KAFKA + ":") else None)
    return is_kraft_home(home)


@contextlib.contextmanager
def zookeeper_from_env(spec: str | None = None) -> Iterator[EmbeddedZooKeeper | ExternalZooKeeper]:
    spec = os.environ.get(ZK_ENV, "") if spec is None else spec
    if not spec:
        with EmbeddedZooKeeper() as zk:
            yield zk
    elif spec == TESTCONTAINERS:
        with _zookeeper_container() as zk:
            yield zk
    else:
        yield ExternalZooKeeper(spec)


@contextlib.contextmanager
def broker_from_env(zk_connect: str, spec: str | None = None, kafka_props: Sequence[str] = (),
                    kraft_props: Sequence[str] = ()
                    ) -> Iterator[EmbeddedBroker | KafkaBroker | KraftBroker | ExternalBroker]:
    """``kafka_props``: extra ``server.properties`` lines when the spec starts a Kafka broker;
    ``kraft_props`` more of them when that broker is a KRaft one (Kafka 4: KIP-848 settings)."""
    spec = os.environ.get(BROKER_ENV, "") if spec is None else spec
    if not spec or spec == TANSU:
        with EmbeddedBroker(zk_connect) as broker:
            yield broker
    elif is_kafka_spec(spec):
        with kafka_broker(zk_connect, spec, kafka_props, kraft_props) as kafka:
            yield kafka
    elif spec == TESTCONTAINERS:
        raise ServerError(
            f"{BROKER_ENV}=testcontainers is not supported: run docker/compose.yml and set "
            f"{BROKER_ENV}=host:port"
        )
    else:
        with _registered_external(zk_connect, spec) as broker:
            yield broker


@contextlib.contextmanager
def _registered_external(zk_connect: str, bootstrap: str) -> Iterator[ExternalBroker]:
    """Use a registered broker as it is; register one that keeps no state in ZooKeeper."""
    client = KazooClient(hosts=zk_connect)
    try:
        client.start(timeout=15)
    except Exception as exc:
        raise ZooKeeperUnavailable(
            f"cannot connect to ZooKeeper at {zk_connect!r}: {exc}") from None
    try:
        ids = (client.get_children(paths.BROKER_IDS) if client.exists(paths.BROKER_IDS)
               else [])
        if ids:
            yield ExternalBroker(bootstrap, int(sorted(ids, key=int)[0]))
            return
        host, _, port = bootstrap.split(",")[0].rpartition(":")
        reg = BrokerRegistration(broker_id=0, host=host, port=int(port),
                                 endpoints=(f"PLAINTEXT://{host}:{port}",))
        register_broker(client, reg)
        yield ExternalBroker(bootstrap, 0)
    finally:
        client.stop()
        client.close()


@contextlib.contextmanager
def _zookeeper_container() -> Iterator[ExternalZooKeeper]:
    try:
        from testcontainers.core.container import DockerContainer
        from testcontainers.core.waiting_utils import wait_for_logs
    except ImportError:
        raise ServerError("ZKCONSUMER_ZK=testcontainers needs the testcontainers package") from None
    container = (DockerContainer("zookeeper:3.8")
                 .with_exposed_ports(2181)
                 .with_env("ZOO_4LW_COMMANDS_WHITELIST", "*")
                 .with_env("ZOO_MAX_CLIENT_CNXNS", "0"))
    try:
        container.start()
    except Exception as exc:
        raise ServerError(f"cannot start a ZooKeeper container (is a Docker engine running?): "
                          f"{exc}") from None
    try:
        wait_for_logs(container, "binding to port", timeout=60)
        host = container.get_container_host_ip()
        port = container.get_exposed_port(2181)
        yield ExternalZooKeeper(f"{host}:{port}")
    finally:
        container.stop()
