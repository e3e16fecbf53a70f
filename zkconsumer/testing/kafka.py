"""A real Apache Kafka broker (ZooKeeper mode) started from a Kafka directory.

Two layouts are Kafka directories (:class:`KafkaLayout`): the project's own builds, laid out like
``../shared/kafka-0.10.2`` and ``../shared/kafka-2.4.1`` (a ``bin/broker.sh --zk .. --port ..
--log-dir .. [--id N] [--prop k=v]`` launcher and the broker's jars under ``jars/``), and an
official binary distribution as extracted from Apache's ``kafka_<scala>-<version>.tgz``
(``bin/kafka-server-start.sh``, ``libs/``, ``config/server.properties``). Unlike the embedded
Tansu, such a broker registers itself under ``/brokers/ids`` and its controller writes every topic
and partition-state znode, so nothing under ``/brokers`` is written by this harness:
``zkconsumer.admin.create_topic`` creates topics through the broker's CreateTopics API and waits
for the controller.

The directory comes from the caller, from ``ZKCONSUMER_KAFKA_HOME``, or (for tests and the lab on
a machine laid out like the project's CI) from :func:`shared_kafka_home`; :func:`find_kafka_home`
looks in both for one version.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import time
from collections.abc import Mapping, Sequence
from enum import Enum
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


class KafkaLayout(Enum):
    """How a Kafka directory is laid out, which decides how a broker is started from it."""

    LAUNCHER = "launcher"  # the project's builds: bin/broker.sh writes its own server.properties
    DISTRIBUTION = "distribution"  # Apache's binary release: bin/kafka-server-start.sh CONFIG

    @property
    def jar_dir(self) -> str:
        return "jars" if self is KafkaLayout.LAUNCHER else "libs"


# The files that make a directory a Kafka directory of each layout (the broker jar is checked
# apart, since its name carries the version).
LAYOUT_FILES = {
    KafkaLayout.LAUNCHER: ("bin/broker.sh",),
    KafkaLayout.DISTRIBUTION: ("bin/kafka-server-start.sh", "bin/kafka-run-class.sh",
                               "config/server.properties"),
}


def _broker_jar_versions(home: Path, layout: KafkaLayout) -> list[str]:
    """Versions named by the broker jars of ``home`` (a distribution also ships ``-sources``,
    ``-javadoc`` and ``-test`` jars beside the one that counts)."""
    found = []
    for jar in sorted((home / layout.jar_dir).glob("kafka_*.jar")):
        m = _JAR.match(jar.name)
        if m and not any(s in jar.name for s in ("-sources", "-javadoc", "-test", "-scaladoc")):
            found.append(m.group(1))
    return found


def kafka_layout(home: Path) -> KafkaLayout | None:
    """The layout ``home`` has (its files and a ``kafka_<scala>-<version>.jar``), or None."""
    for layout, files in LAYOUT_FILES.items():
        if all((home / f).is_file() for f in files) and _broker_jar_versions(home, layout):
            return layout
    return None


def kafka_version(home: Path) -> str:
    """The broker's version, read from its ``kafka_<scala>-<version>.jar``."""
    for layout in KafkaLayout:
        versions = _broker_jar_versions(home, layout)
        if versions:
            return versions[0]
    raise ServerError(f"{home} holds no kafka_<scala>-<version>.jar under jars/ or libs/; "
                      "is it a Kafka directory?")


def _missing(home: Path, layout: KafkaLayout) -> list[str]:
    missing = [f for f in LAYOUT_FILES[layout] if not (home / f).is_file()]
    if not _broker_jar_versions(home, layout):
        missing.append(f"{layout.jar_dir}/kafka_<scala>-<version>.jar")
    return missing


def check_kafka_home(home: Path | str) -> Path:
    """``home`` as a usable Kafka directory, or an error naming it and what each layout lacks."""
    path = Path(home).expanduser().resolve()
    if not path.is_dir():
        raise ServerError(f"Kafka directory {str(home)!r} does not exist")
    if kafka_layout(path) is None:
        launcher, distribution = (", ".join(_missing(path, layout)) for layout in KafkaLayout)
        raise ServerError(
            f"{str(path)!r} is not a Kafka directory: as an Apache Kafka binary distribution it "
            f"lacks {distribution}; as a build laid out like ../shared/kafka-2.4.1 it lacks "
            f"{launcher} (see docs/brokers.md)")
    return path


def version_matches(found: str, wanted: str) -> bool:
    """``0.10.2.2`` is a ``0.10.2`` (and a ``0.10``); ``0.10.20`` is not a ``0.10.2``."""
    parts = wanted.split(".")
    return found.split(".")[:len(parts)] == parts


def shared_kafka_home(version: str, start: Path | None = None) -> Path | None:
    """``<ancestor>/shared/kafka-<version>`` beside this checkout, if the machine has it."""
    here = (start or Path(__file__)).resolve()
    for parent in here.parents:
        candidate = parent / "shared" / f"kafka-{version}"
        if candidate.is_dir() and kafka_layout(candidate) is not None:
            return candidate
    return None


def find_kafka_home(version: str, start: Path | None = None,
                    environ: Mapping[str, str] | None = None) -> Path | None:
    """A Kafka directory of ``version``: ``$ZKCONSUMER_KAFKA_HOME`` when it holds that version,
    else the shared build beside this checkout, else None. A ``ZKCONSUMER_KAFKA_HOME`` that is
    not a Kafka directory is an error, not a miss: the user meant it."""
    value = (os.environ if environ is None else environ).get(KAFKA_HOME_ENV, "")
    if value:
        home = check_kafka_home(value)
        if version_matches(kafka_version(home), version):
            return home
    return shared_kafka_home(version, start)


def kafka_home_from_env(spec: str | None = None) -> Path:
    value = spec if spec else os.environ.get(KAFKA_HOME_ENV, "")
    if not value:
        raise ServerError(f"no Kafka directory given: set {KAFKA_HOME_ENV} or pass one")
    return check_kafka_home(value)


def server_properties(broker_id: int, port: int, data_dir: Path, zk_connect: str,
                      props: Sequence[str] = ()) -> str:
    """The ``server.properties`` a distribution's broker is started with: what the shared
    builds' ``bin/broker.sh`` writes (one node, replication factor 1 for the offsets topic),
    then ``props``, which win."""
    lines = [f"broker.id={broker_id}",
             f"listeners=PLAINTEXT://127.0.0.1:{port}",
             f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}",
             f"log.dirs={data_dir}",
             f"zookeeper.connect={zk_connect}",
             "zookeeper.connection.timeout.ms=6000",
             "num.partitions=1",
             "offsets.topic.replication.factor=1",
             "offsets.topic.num.partitions=4",
             "auto.create.topics.enable=true",
             "delete.topic.enable=true",
             "num.network.threads=2",
             "num.io.threads=2",
             "log.retention.hours=1",
             *props]
    return "\n".join(lines) + "\n"


# Kafka 0.10.2's log index unmaps through sun.nio.ch.DirectBuffer and jdk.internal.ref.Cleaner,
# which Java 9+ no longer exports (later releases need neither flag, and accept both).
JAVA17_EXPORTS = ("--add-exports java.base/sun.nio.ch=ALL-UNNAMED "
                  "--add-exports java.base/jdk.internal.ref=ALL-UNNAMED")


def distribution_env(base: Mapping[str, str], log_dir: Path) -> dict[str, str]:
    """The environment ``bin/kafka-server-start.sh`` of a distribution runs in on Java 17.

    ``EXTRA_ARGS`` drops the script's ``-loggc``: 0.10.2 then passes ``-XX:+PrintGCDateStamps``
    and friends, which Java 9 removed (the JVM refuses to start). The broker's own logs go to
    ``log_dir``, not into the distribution."""
    env = dict(base)
    env["EXTRA_ARGS"] = "-name kafkaServer"
    env["LOG_DIR"] = str(log_dir)
    env.setdefault("KAFKA_HEAP_OPTS", "-Xmx512m")
    opts = env.get("KAFKA_OPTS", "")
    if "sun.nio.ch" not in opts:
        env["KAFKA_OPTS"] = f"{opts} {JAVA17_EXPORTS}".strip()
    return env


class KafkaNode(ManagedServer):
    """What every Kafka node started from a Kafka directory has, ZooKeeper-mode broker or KRaft
    node alike: its directory and version, port, extra ``server.properties`` lines, a scratch
    folder for its data and log, and the name results give it. Subclasses say which
    directories they start from (:meth:`_resolve_home`, :meth:`_check_home`) and how."""

    host = "127.0.0.1"
    SCRATCH_PREFIX = "zkconsumer-kafka-"

    def __init__(self, zk_connect: str | None, kafka_home: Path | str | None,
                 broker_id: int = 0, port: int | None = None, props: Sequence[str] = ()
                 ) -> None:
        paths.broker(broker_id)  # validates the id before anything starts
        self.home = self._resolve_home(kafka_home)
        self.version = kafka_version(self.home)
        self._check_home()
        if port is not None:
            ensure_port_free(port, "the Kafka broker")
        for prop in props:
            if "=" not in prop or prop.startswith("="):
                raise ServerError(f"broker property {prop!r} is not key=value")
        self.zk_connect = zk_connect
        self.broker_id = broker_id
        self.port = port or free_port()
        self.props = tuple(props)
        self._root = Path(tempfile.mkdtemp(prefix=self.SCRATCH_PREFIX))
        self.log_path = self._root / "broker.log"
        self._proc: ManagedProcess | None = None

    @staticmethod
    def _resolve_home(kafka_home: Path | str | None) -> Path:
        """The Kafka directory to start from (checked)."""
        return check_kafka_home(kafka_home or "")

    def _check_home(self) -> None:
        """Refuse a directory this kind of node is not started from (before anything starts)."""

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


class KafkaBroker(KafkaNode):
    """One Apache Kafka broker on 127.0.0.1, registered in ``zk_connect`` by its own code.

    ``props`` are extra ``server.properties`` lines (``key=value``), applied last.
    """

    def __init__(self, zk_connect: str, kafka_home: Path | str | None = None, broker_id: int = 0,
                 port: int | None = None, props: Sequence[str] = ()) -> None:
        super().__init__(zk_connect, kafka_home, broker_id, port, props)

    @staticmethod
    def _resolve_home(kafka_home: Path | str | None) -> Path:
        """The directory given, else ``ZKCONSUMER_KAFKA_HOME``."""
        return check_kafka_home(kafka_home) if kafka_home else kafka_home_from_env()

    def _command(self) -> tuple[list[str], dict[str, str] | None]:
        """argv and environment for this directory's layout."""
        data = self._root / "kafka"
        if kafka_layout(self.home) is KafkaLayout.DISTRIBUTION:
            data.mkdir(parents=True, exist_ok=True)
            config = data / "server.properties"
            config.write_text(server_properties(self.broker_id, self.port, data / "data",
                                                self.zk_connect, self.props))
            return ([str(self.home / "bin" / "kafka-server-start.sh"), str(config)],
                    distribution_env(os.environ, self._root / "logs"))
        argv = [str(self.home / "bin" / "broker.sh"), "--zk", self.zk_connect,
                "--port", str(self.port), "--log-dir", str(data), "--id", str(self.broker_id)]
        for prop in self.props:
            argv += ["--prop", prop]
        return argv, None

    def start(self) -> KafkaBroker:
        argv, env = self._command()
        self._proc = ManagedProcess(f"kafka-{self.version}-{self.port}", argv, self.log_path,
                                    env=env)
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
