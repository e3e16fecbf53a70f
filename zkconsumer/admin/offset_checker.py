"""``kafka.tools.ConsumerOffsetChecker`` (0.10.2): its rows, defaults and text, from ZooKeeper.

Kept byte-compatible with the original so scripts that parse its output keep working:

* the topics are ``--topic`` (comma-separated) or, by default, the children of
  ``/consumers/<g>/owners`` (a group that never owned anything has none: the original exits);
* rows are sorted by topic, then partition; ``Offset`` is the committed offset, ``-1`` when the
  topic's offsets znode exists without this partition; ``Lag`` is ``logSize - Offset`` (negative
  if the offset is ahead) or ``unknown`` for ``-1``; ``Owner`` the owner znode's value or ``none``;
* the format is the original's ``%-15s %-30s %-3s %-15s %-15s %-15s %s`` (wider values push the
  following columns, as ``String.format`` does); a partition without a leader prints
  ``No broker for partition <t> - <p>``; ``--broker-info`` appends the brokers asked.

The original asked the group coordinator for the offsets first and read ZooKeeper only where it
had none; ``storage="kafka"`` does that (for groups with ``offsets.storage=kafka``), the default
reads ZooKeeper alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from zkconsumer.admin.cluster import brokers, watermarks, zk_session
from zkconsumer.errors import CorruptZnode
from zkconsumer.zk import paths
from zkconsumer.zk.codec import decode_offset, decode_partition_state, decode_topic_assignment

ROW_FORMAT = "{:<15} {:<30} {:<3} {:<15} {:<15} {:<15} {}"
HEADER = ROW_FORMAT.format("Group", "Topic", "Pid", "Offset", "logSize", "Lag", "Owner")


class CheckerExit(Exception):
    """What made the original print ``Exiting due to: <cause>.`` (its text is the message)."""


@dataclass(frozen=True)
class CheckerRow:
    topic: str
    partition: int
    offset: int  # -1: no committed offset under an existing offsets znode
    log_size: int | None  # None: no leader (the original's "No broker for partition")
    owner: str | None

    @property
    def lag(self) -> int | None:
        if self.offset == -1 or self.log_size is None:
            return None
        return self.log_size - self.offset

    def line(self, group: str) -> str:
        if self.log_size is None:
            return f"No broker for partition {self.topic} - {self.partition}"
        lag = "unknown" if self.lag is None else str(self.lag)
        return ROW_FORMAT.format(group, self.topic, self.partition, self.offset, self.log_size,
                                 lag, self.owner or "none")

    def as_dict(self) -> dict[str, object]:
        return {"topic": self.topic, "partition": self.partition,
                "offset": None if self.offset == -1 else self.offset,
                "log_size": self.log_size, "lag": self.lag, "owner": self.owner}


@dataclass(frozen=True)
class CheckerReport:
    group: str
    rows: list[CheckerRow]
    brokers_asked: dict[int, str]

    def text(self, broker_info: bool = False) -> str:
        lines = [HEADER, *(r.line(self.group) for r in self.rows)]
        if broker_info:
            lines.append("BROKER INFO")
            lines += [f"{b} -> {hp}" for b, hp in sorted(self.brokers_asked.items())]
        return "\n".join(lines) + "\n"

    def as_dict(self) -> dict[str, object]:
        return {"group": self.group, "partitions": [r.as_dict() for r in self.rows],
                "brokers": {str(b): hp for b, hp in self.brokers_asked.items()}}


def _no_node(path: str) -> CheckerExit:
    return CheckerExit("org.apache.zookeeper.KeeperException$NoNodeException: "
                       f"KeeperErrorCode = NoNode for {path}")


def _offset(client: KazooClient, group: str, topic: str, partition: int) -> int:
    path = paths.offset(group, topic, partition)
    try:
        data, _ = client.get(path)
    except NoNodeError:
        if client.exists(paths.topic_offsets(group, topic)):
            return -1
        raise _no_node(path) from None
    try:
        return decode_offset(path, data)
    except CorruptZnode:
        return -1


def _owner(client: KazooClient, group: str, topic: str, partition: int) -> str | None:
    try:
        data, _ = client.get(paths.owner(group, topic, partition))
    except NoNodeError:
        return None
    return data.decode("utf-8", "replace")


def _leader(client: KazooClient, topic: str, partition: int) -> int | None:
    path = paths.partition_state(topic, partition)
    try:
        data, _ = client.get(path)
        return decode_partition_state(path, data).leader
    except (NoNodeError, CorruptZnode):
        return None


def check_offsets(zk_connect: str, group: str, topics: list[str] | None = None,
                  storage: str = "zookeeper") -> CheckerReport:
    """The original checker's rows for ``group``; raises :class:`CheckerExit` where it exited."""
    paths.validate_group(group)
    with zk_session(zk_connect) as client:
        if topics is None:
            try:
                topics = list(client.get_children(paths.owners(group)))
            except NoNodeError:
                raise _no_node(paths.owners(group)) from None
        regs = brokers(client)
        located: list[tuple[str, int, int | None]] = []
        for topic in sorted(set(topics)):
            try:
                data, _ = client.get(paths.topic(topic))
                parts = sorted(decode_topic_assignment(paths.topic(topic), data))
            except (NoNodeError, CorruptZnode):
                continue
            located += [(topic, p, _leader(client, topic, p)) for p in parts]
        asked = {b: regs[b].bootstrap for _, _, b in located if b is not None and b in regs}
        marks = watermarks(",".join(sorted(set(asked.values()))),
                           [(t, p) for t, p, b in located if b in asked]) if asked else {}
        in_kafka: dict[tuple[str, int], int | None] = {}
        if storage == "kafka" and located:
            from zkconsumer.admin.kafka_group import fetch_broker_offsets

            in_kafka = fetch_broker_offsets(",".join(r.bootstrap for r in regs.values()), group,
                                            [(t, p) for t, p, _ in located])
        rows = []
        for topic, p, leader in located:
            end = marks.get((topic, p))
            log_size = None if leader not in asked or end is None else end[1]
            stored = in_kafka.get((topic, p))
            offset = stored if stored is not None else _offset(client, group, topic, p)
            rows.append(CheckerRow(topic, p, offset, log_size, _owner(client, group, topic, p)))
    return CheckerReport(group, rows, asked)
