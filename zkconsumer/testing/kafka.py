"""A real Apache Kafka broker (ZooKeeper mode) started from a Kafka directory.

The directory is laid out like ``../shared/kafka-0.10.2`` and ``../shared/kafka-2.4.1``: a
``bin/broker.sh --zk .. --port .. --log-dir .. [--id N] [--prop k=v]`` launcher and the broker's
jars under ``jars/``. Unlike the embedded Tansu, such a broker registers itself under
``/brokers/ids`` and its controller writes every topic and partition-state znode, so nothing under
``/brokers`` is written by this harness: ``zkconsumer.admin.create_topic`` creates topics through
the broker's CreateTopics API and waits for the controller.

The directory comes from the caller, from ``ZKCONSUMER_KAFKA_HOME``, or (for tests and the lab on
a machine laid out like the project's CI) from :func:`shared_kafka_home`.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import time
from collections.abc import Sequence
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
from zkconsumer.zk import paths

log = logging.getLogger(__name__)

KAFKA_HOME_ENV = "ZKCONSUMER_KAFKA_HOME"
START_TIMEOUT_S = 60.0
_JAR = re.compile(r"^kafka_[0-9.]+-([0-9][0-9A-Za-z.\-]*)\.jar$")


def kafka_version(home: Path) -> str:
    """The broker's version, read from its ``kafka_<scala>-<version>.jar``."""
    for jar in sorted((home / "jars").glob("kafka_*.jar")) + sorted((home / "libs").glob(
            "kafka_*.jar")):
        m = _JAR.match(jar.name)
        if m and not any(s in jar.name for s in ("-sources", "-javadoc", "-test")):
            return m.group(1)
    raise ServerError(f"{home} holds no kafka_<scala>-<version>.jar under jars/ or libs/; "
                      "is it a Kafka directory?")


def check_kafka_home(home: Path | str) -> Path:
    """``home`` as a usable Kafka directory, or an error saying what is missing."""
    path = Path(home).expanduser().resolve()
    launcher = path / "bin" / "broker.sh"
    if not path.is_dir():
        raise ServerError(f"Kafka directory {str(home)!r} does not exist")
    if not launcher.is_file():
        raise ServerError(f"Kafka directory {str(path)!r} has no bin/broker.sh launcher "
                          "(laid out like ../shared/kafka-2.4.1, see docs/brokers.md)")
    kafka_version(path)
    return path


def shared_kafka_home(version: str, start: Path | None = None) -> Path | None:
    """``<ancestor>/shared/kafka-<version>`` beside this checkout, if the machine has it."""
    here = (start or Path(__file__)).resolve()
    for parent in here.parents:
        candidate = parent / "shared" / f"kafka-{version}"
        if (candidate / "bin" / "broker.sh").is_file():
            return candidate
    return None


def kafka_home_from_env(spec: str | None = None) -> Path:
    value = spec if spec else os.environ.get(KAFKA_HOME_ENV, "")
    if not value:
        raise ServerError(f"no Kafka directory given: set {KAFKA_HOME_ENV} or pass one")
    return check_kafka_home(value)


class KafkaBroker(ManagedServer):
    """One Apache Kafka broker on 127.0.0.1, registered in ``zk_connect`` by its own code.

    ``props`` are extra ``server.properties`` lines (``key=value``), applied last.
    """

    host = "127.0.0.1"

    def __init__(self, zk_connect: str, kafka_home: Path | str | None = None, broker_id: int = 0,
                 port: int | None = None, props: Sequence[str] = ()) -> None:
        paths.broker(broker_id)  # validates the id before anything starts
        self.home = check_kafka_home(kafka_home) if kafka_home else kafka_home_from_env()
        self.version = kafka_version(self.home)
        if port is not None:
            ensure_port_free(port, "the Kafka broker")
        for prop in props:
            if "=" not in prop or prop.startswith("="):
                raise ServerError(f"broker property {prop!r} is not key=value")
        self.zk_connect = zk_connect
        self.broker_id = broker_id
        self.port = port or free_port()
        self.props = tuple(props)
        self._root = Path(tempfile.mkdtemp(prefix="zkconsumer-kafka-"))
        self.log_path = self._root / "broker.log"
        self._proc: ManagedProcess | None = None

    @property
    def name(self) -> str:
        """The broker a result measured, as results name it."""
        return f"apache-kafka-{self.version}"

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def start(self) -> KafkaBroker:
        argv = [str(self.home / "bin" / "broker.sh"), "--zk", self.zk_connect,
                "--port", str(self.port), "--log-dir", str(self._root / "kafka"),
                "--id", str(self.broker_id)]
        for prop in self.props:
            argv += ["--prop", prop]
        self._proc = ManagedProcess(f"kafka-{self.version}-{self.port}", argv, self.log_path)
        started = time.monotonic()
        self._proc.start()
        self._proc.wait_until(lambda: port_open(self.host, self.port) and self._registered(),
                              START_TIMEOUT_S, f"Apache Kafka {self.version} on {self.bootstrap}")
        log.info("Apache Kafka %s broker %d serving on %s (%.1f s), registered in %s",
                 self.version, self.broker_id, self.bootstrap, time.monotonic() - started,
                 self.zk_connect)
        return self

    def _registered(self) -> bool:
        client = KazooClient(hosts=self.zk_connect, timeout=5.0)
        try:
            client.start(timeout=5)
            # Serving once registered and a controller is elected (topics need one).
            return (client.exists(paths.broker(self.broker_id)) is not None
                    and client.exists(paths.CONTROLLER) is not None)
        except Exception:
            return False
        finally:
            client.stop()
            client.close()

    def alive(self) -> bool:
        return self._proc is not None and self._proc.alive()

    def stop(self) -> None:
        """SIGTERM (a controlled shutdown), then SIGKILL after a grace period. Idempotent."""
        if self._proc is not None:
            self._proc.stop(grace=20.0)
            self._proc = None
