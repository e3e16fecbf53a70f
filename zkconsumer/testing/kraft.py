"""A real Apache Kafka 4 broker (KRaft, no ZooKeeper) started from a Kafka directory.

Kafka 4.0 dropped ZooKeeper mode: one process is broker and controller at once, with its metadata
in its own Raft log. It is the broker of the design that replaced JoinGroup/SyncGroup, KIP-848's
``consumer`` group protocol, and it speaks the classic protocol too. The directory is laid out
like ``../shared/kafka-4.0``: ``bin/broker.sh --port P --controller-port C --log-dir DIR [--id N]
[--prop k=v]`` and the jars under ``jars/``.

The lab runs every protocol against one broker in one run, including the ZooKeeper-coordinated
members, which find brokers and partition leaders in ZooKeeper only. Such a broker therefore gets
what the embedded Tansu gets: the harness keeps its ``/brokers/ids/<id>`` registration
(:mod:`zkconsumer.testing.registration`), and ``zkconsumer.admin.create_topic`` writes the topic
and partition-state znodes, since no ZooKeeper-mode controller (``/controller``) does. Without a
ZooKeeper (``zk_connect=None``) the broker runs alone, for broker-side groups only.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path

from zkconsumer.errors import ServerError
from zkconsumer.testing._process import (
    ManagedProcess,
    free_port,
    port_open,
)
from zkconsumer.testing.broker import metadata_ok
from zkconsumer.testing.kafka import KafkaLayout, KafkaNode, kafka_layout, kafka_version
from zkconsumer.testing.registration import ZooKeeperRegistration
from zkconsumer.zk.codec import BrokerRegistration

log = logging.getLogger(__name__)

# A fresh node is up in ~4 s on an idle machine; on a 2-core machine shared with other JVMs
# (load average above 50) it was seen to take over 90 s, most of it in JIT warm-up.
START_TIMEOUT_S = 240.0
# The first Apache Kafka release without ZooKeeper mode: from here on a broker is a KRaft node.
FIRST_KRAFT_ONLY_MAJOR = 4
# The heartbeat interval a KIP-848 group gets when the broker is not told otherwise
# (group.consumer.heartbeat.interval.ms: under KIP-848 a broker setting, not a client one).
DEFAULT_CONSUMER_HEARTBEAT_MS = 5000


def is_kraft_version(version: str) -> bool:
    """Whether Apache Kafka ``version`` runs only as a KRaft node (4.0 and later)."""
    major = version.split(".", 1)[0]
    if not major.isdigit():
        raise ServerError(f"Kafka version {version!r} does not start with a major number")
    return int(major) >= FIRST_KRAFT_ONLY_MAJOR


def is_kraft_home(home: Path) -> bool:
    """Whether the Kafka directory ``home`` (already checked) holds a KRaft-only broker."""
    return is_kraft_version(kafka_version(home))


def consumer_group_props(session_timeout_ms: int, heartbeat_interval_ms: int | None
                         ) -> tuple[str, ...]:
    """The broker lines that give KIP-848 groups the lab's session timeout and heartbeat.

    Under KIP-848 both are the coordinator's to set (a ``group.protocol=consumer`` client may
    not send them), so the lab's ``session_timeout_ms`` (the one every protocol of a run shares)
    becomes ``group.consumer.session.timeout.ms``; ``heartbeat_interval_ms`` None keeps the
    broker's default (5 s). The minimums go down with them, and Kafka requires the heartbeat to
    be shorter than the session.
    """
    heartbeat = DEFAULT_CONSUMER_HEARTBEAT_MS if heartbeat_interval_ms is None else \
        heartbeat_interval_ms
    if heartbeat < 1:
        raise ServerError(f"the consumer heartbeat interval must be >= 1 ms, got {heartbeat}")
    if heartbeat >= session_timeout_ms:
        raise ServerError(f"the consumer heartbeat interval ({heartbeat} ms) must be shorter "
                          f"than the session timeout ({session_timeout_ms} ms)")
    props = [f"group.consumer.session.timeout.ms={session_timeout_ms}",
             f"group.consumer.min.session.timeout.ms={min(session_timeout_ms, 45000)}"]
    if heartbeat_interval_ms is not None:
        props += [f"group.consumer.heartbeat.interval.ms={heartbeat}",
                  f"group.consumer.min.heartbeat.interval.ms={min(heartbeat, 5000)}"]
    return tuple(props)


class KraftBroker(KafkaNode):
    """One Apache Kafka 4 node (broker and controller) on 127.0.0.1, registered as broker
    ``broker_id`` in ``zk_connect`` by this harness (or nowhere when ``zk_connect`` is None).

    ``props`` are extra ``server.properties`` lines (``key=value``), applied last. Each instance
    formats a fresh log directory: a new cluster, so it starts in seconds (a restart on a used
    directory waits out the old incarnation's broker session, ~9 s).
    """

    SCRATCH_PREFIX = "zkconsumer-kraft-"

    def __init__(self, zk_connect: str | None, kafka_home: Path | str, broker_id: int = 0,
                 port: int | None = None, props: Sequence[str] = ()) -> None:
        super().__init__(zk_connect, kafka_home, broker_id, port, props)
        self.controller_port = free_port()
        self._registration: ZooKeeperRegistration | None = None

    def _check_home(self) -> None:
        if kafka_layout(self.home) is not KafkaLayout.LAUNCHER:
            raise ServerError(f"{self.home} is an Apache Kafka binary distribution; a KRaft node "
                              "is started only from a build laid out like ../shared/kafka-4.0 "
                              "(bin/broker.sh)")
        if not is_kraft_version(self.version):
            raise ServerError(f"{self.home} holds Apache Kafka {self.version}, which runs with "
                              "ZooKeeper; start it as a KafkaBroker")

    def start(self) -> KraftBroker:
        argv = [str(self.home / "bin" / "broker.sh"), "--port", str(self.port),
                "--controller-port", str(self.controller_port),
                "--log-dir", str(self._root / "kafka"), "--id", str(self.broker_id)]
        for prop in self.props:
            argv += ["--prop", prop]
        self._proc = ManagedProcess(f"kafka-{self.version}-{self.port}", argv, self.log_path)
        started = time.monotonic()
        self._proc.start()
        self._proc.wait_until(lambda: port_open(self.host, self.port)
                              and metadata_ok(self.bootstrap),
                              START_TIMEOUT_S, f"Apache Kafka {self.version} on {self.bootstrap}")
        if self.zk_connect is not None:
            reg = BrokerRegistration(broker_id=self.broker_id, host=self.host, port=self.port,
                                     endpoints=(f"PLAINTEXT://{self.host}:{self.port}",))
            try:
                self._registration = ZooKeeperRegistration(self.zk_connect, reg,
                                                           self._proc).start()
            except Exception:
                self.stop()
                raise
        log.info("Apache Kafka %s (KRaft) node %d serving on %s (%.1f s)%s", self.version,
                 self.broker_id, self.bootstrap, time.monotonic() - started,
                 f", registered in {self.zk_connect}" if self.zk_connect else "")
        return self

    def alive(self) -> bool:
        return self._proc is not None and self._proc.alive()

    def stop(self) -> None:
        """Deregister, then SIGTERM (a controlled shutdown), SIGKILL after a grace period.
        Idempotent."""
        if self._registration is not None:
            self._registration.stop()
            self._registration = None
        if self._proc is not None:
            self._proc.stop(grace=20.0)
            self._proc = None
