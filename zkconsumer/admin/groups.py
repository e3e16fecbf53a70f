"""Read a consumer group's state from ZooKeeper: describe (the offset checker) and verify.

Both work on one snapshot of the znodes, like ``ConsumerOffsetChecker`` and
``VerifyConsumerRebalance`` did. Corrupt znodes of one member or partition are reported and
skipped, never fatal: an operator needs the tool most when the group is in a bad state.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from zkconsumer.admin.cluster import brokers, watermarks, zk_session
from zkconsumer.admin.tree import children_of
from zkconsumer.errors import CorruptZnode
from zkconsumer.identity import consumer_id_of
from zkconsumer.topic_filter import topic_count_from_registration
from zkconsumer.zk import paths
from zkconsumer.zk.codec import (
    decode_offset,
    decode_owner,
    decode_registration,
    decode_topic_assignment,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Member:
    consumer_id: str
    subscription: dict[str, int]
    pattern: str
    threads_per_topic: dict[str, list[str]]


@dataclass
class GroupSnapshot:
    """Everything the tools need, read once."""

    group: str
    members: list[Member] = field(default_factory=list)
    corrupt: list[str] = field(default_factory=list)
    partitions: dict[str, list[int]] = field(default_factory=dict)
    owners: dict[tuple[str, int], str | None] = field(default_factory=dict)
    offsets: dict[tuple[str, int], int | None] = field(default_factory=dict)

    def subscribed_topics(self) -> list[str]:
        return sorted({t for m in self.members for t in m.threads_per_topic})


def read_members(client: KazooClient, group: str, all_topics: list[str],
                 corrupt: list[str] | None = None) -> list[Member]:
    members = []
    for cid in sorted(children_of(client, paths.consumer_ids(group))):
        try:
            path = paths.consumer_registration(group, cid)
            data, _ = client.get(path)
            reg = decode_registration(path, data)
        except NoNodeError:
            continue  # left while we read
        except (CorruptZnode, ValueError) as exc:
            log.warning("skipping member %s of group %s: %s", cid, group, exc)
            if corrupt is not None:
                corrupt.append(str(exc))
            continue
        count = topic_count_from_registration(cid, reg, exclude_internal_topics=False)
        members.append(Member(cid, reg.subscription_map(), reg.pattern,
                              count.thread_ids_per_topic(all_topics)))
    return members


def snapshot(client: KazooClient, group: str, topics: list[str] | None = None) -> GroupSnapshot:
    paths.validate_group(group)
    snap = GroupSnapshot(group)
    all_topics = sorted(children_of(client, paths.BROKER_TOPICS))
    snap.members = read_members(client, group, all_topics, snap.corrupt)
    wanted = set(topics) if topics else (
        set(snap.subscribed_topics())
        | set(children_of(client, paths.offsets(group)))
        | set(children_of(client, paths.owners(group))))
    for topic in sorted(wanted):
        paths.validate_topic(topic)
        try:
            data, _ = client.get(paths.topic(topic))
            parts = list(decode_topic_assignment(paths.topic(topic), data))
        except NoNodeError:
            parts = sorted(int(p) for p in children_of(client, paths.topic_offsets(group, topic))
                           if p.isdigit())
        except CorruptZnode as exc:
            snap.corrupt.append(str(exc))
            continue
        snap.partitions[topic] = parts
        for p in parts:
            snap.owners[(topic, p)] = _read_owner(client, group, topic, p, snap.corrupt)
            snap.offsets[(topic, p)] = _read_offset(client, group, topic, p, snap.corrupt)
    return snap


def _read_owner(client: KazooClient, group: str, topic: str, p: int,
                corrupt: list[str]) -> str | None:
    path = paths.owner(group, topic, p)
    try:
        data, _ = client.get(path)
        return decode_owner(path, data)
    except NoNodeError:
        return None
    except CorruptZnode as exc:
        corrupt.append(str(exc))
        return "<corrupt>"


def _read_offset(client: KazooClient, group: str, topic: str, p: int,
                 corrupt: list[str]) -> int | None:
    path = paths.offset(group, topic, p)
    try:
        data, _ = client.get(path)
        return decode_offset(path, data)
    except NoNodeError:
        return None
    except CorruptZnode as exc:
        corrupt.append(str(exc))
        return None


# --- describe -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PartitionRow:
    topic: str
    partition: int
    offset: int | None
    log_end: int | None
    lag: int | None
    owner: str | None

    def as_dict(self) -> dict[str, object]:
        return {"topic": self.topic, "partition": self.partition, "offset": self.offset,
                "log_end": self.log_end, "lag": self.lag, "owner": self.owner}


@dataclass(frozen=True)
class GroupDescription:
    group: str
    partitions: list[PartitionRow]
    consumers: list[Member]
    problems: list[str]

    def as_dict(self) -> dict[str, object]:
        return {
            "group": self.group,
            "partitions": [r.as_dict() for r in self.partitions],
            "consumers": [{"id": m.consumer_id, "subscription": m.subscription,
                           "pattern": m.pattern} for m in self.consumers],
        }

    def totals(self) -> dict[str, dict[str, int | None]]:
        out: dict[str, dict[str, int | None]] = {}
        for r in self.partitions:
            t = out.setdefault(r.topic, {"offset": 0, "log_end": 0, "lag": 0})
            for key in ("offset", "log_end", "lag"):
                value = getattr(r, key)
                t[key] = None if value is None or t[key] is None else t[key] + value  # type: ignore[operator]
        return out


def log_end_offsets(bootstrap: str, tps: list[tuple[str, int]],
                    timeout: float = 5.0) -> dict[tuple[str, int], int | None]:
    """Each partition's log end offset as the broker claims it (None when it does not answer)."""
    return {tp: None if marks is None else marks[1]
            for tp, marks in watermarks(bootstrap, tps, timeout).items()}


def describe_group(zk_connect: str, group: str, topics: list[str] | None = None,
                   bootstrap: str | None = None, storage: str = "zookeeper"
                   ) -> GroupDescription:
    """``storage="kafka"``: offsets from the broker, ZooKeeper's where it has none (as the
    original ConsumerOffsetChecker read them)."""
    with zk_session(zk_connect) as client:
        snap = snapshot(client, group, topics)
        if bootstrap is None:
            regs = brokers(client)
            bootstrap = ",".join(r.bootstrap for r in regs.values()) or None
    tps = sorted(snap.offsets)
    if storage == "kafka":
        from zkconsumer.admin.kafka_group import kafka_view

        snap.offsets = kafka_view(zk_connect, group, tps, snap.offsets, bootstrap)
    ends: dict[tuple[str, int], int | None] = (
        log_end_offsets(bootstrap, tps) if bootstrap else dict.fromkeys(tps))
    rows = []
    for tp in tps:
        offset, end = snap.offsets[tp], ends.get(tp)
        lag = None if offset is None or end is None else max(0, end - offset)
        rows.append(PartitionRow(tp[0], tp[1], offset, end, lag, snap.owners.get(tp)))
    return GroupDescription(group, rows, snap.members, snap.corrupt)


# --- verify -------------------------------------------------------------------------------------

UNOWNED = "unowned"
OWNER_NOT_REGISTERED = "owner-not-registered"
OWNER_NOT_SUBSCRIBED = "owner-not-subscribed"


@dataclass(frozen=True)
class Violation:
    topic: str
    partition: int
    kind: str
    owner: str | None

    def as_dict(self) -> dict[str, object]:
        return {"topic": self.topic, "partition": self.partition, "kind": self.kind,
                "owner": self.owner}


@dataclass(frozen=True)
class Verification:
    group: str
    violations: list[Violation]
    topics: list[str]

    @property
    def ok(self) -> bool:
        return not self.violations

    def as_dict(self) -> dict[str, object]:
        return {"ok": self.ok, "violations": [v.as_dict() for v in self.violations]}


def check_ownership(snap: GroupSnapshot) -> list[Violation]:
    """Pure: every partition of every subscribed topic has one owner, a subscribed live thread."""
    registered = {m.consumer_id for m in snap.members}
    subscribed: dict[str, set[str]] = {}
    for m in snap.members:
        for topic, threads in m.threads_per_topic.items():
            subscribed.setdefault(topic, set()).update(threads)
    violations = []
    for topic in sorted(subscribed):
        for p in snap.partitions.get(topic, []):
            owner = snap.owners.get((topic, p))
            if owner is None:
                violations.append(Violation(topic, p, UNOWNED, None))
            elif owner not in subscribed[topic]:
                consumer = consumer_id_of(owner)
                kind = OWNER_NOT_SUBSCRIBED if consumer in registered else OWNER_NOT_REGISTERED
                violations.append(Violation(topic, p, kind, owner))
    return violations


def verify_group(zk_connect: str, group: str) -> Verification:
    with zk_session(zk_connect) as client:
        snap = snapshot(client, group)
    return Verification(group, check_ownership(snap), snap.subscribed_topics())


def list_groups(zk_connect: str) -> list[str]:
    with zk_session(zk_connect) as client:
        return sorted(children_of(client, paths.CONSUMERS))


def live_members(client: KazooClient, group: str) -> list[str]:
    return sorted(children_of(client, paths.consumer_ids(group)))
