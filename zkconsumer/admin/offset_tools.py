"""Export, import and reset a group's committed offsets, and delete an idle group.

The file format is the original ``ExportZkOffsets`` one: one ``<znode path>:<offset>`` line per
partition. Unlike ``ImportZkOffsets``, which wrote any path it was given, an imported line must
name an offsets znode (``/consumers/<g>/offsets/<t>/<p>``) with legal names: the path is parsed and
rebuilt from its parts, so a crafted file cannot write elsewhere. Writing offsets under a running
group is refused unless forced, because the members' next commit would overwrite them anyway.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError, NotEmptyError

from zkconsumer.admin.cluster import (
    bootstrap_servers,
    create_with_parents,
    watermarks,
    zk_session,
)
from zkconsumer.admin.groups import live_members
from zkconsumer.admin.tree import children_of
from zkconsumer.errors import CorruptZnode, TopicError, ZkConsumerError
from zkconsumer.zk import paths
from zkconsumer.zk.codec import decode_offset, decode_topic_assignment, encode_offset

log = logging.getLogger(__name__)

class GroupActive(ZkConsumerError):
    """The group has registered members; the operation needs ``force``."""


class BadOffsetsFile(ZkConsumerError, ValueError):
    """A line of an offsets file is not ``/consumers/<g>/offsets/<t>/<p>:<offset>``."""


@dataclass(frozen=True)
class OffsetEntry:
    group: str
    topic: str
    partition: int
    offset: int

    @property
    def path(self) -> str:
        return paths.offset(self.group, self.topic, self.partition)

    def line(self) -> str:
        return f"{self.path}:{self.offset}"


def parse_lines(lines: list[str]) -> list[OffsetEntry]:
    """Parse an export file; stops at the first empty line, as the original importer did."""
    entries = []
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            break
        path, sep, value = line.rpartition(":")
        digits = value[1:] if value.startswith("-") else value
        if not sep or not (digits.isascii() and digits.isdigit()):
            raise BadOffsetsFile(
                f"line {number}: {line[:80]!r} is not '/consumers/<group>/offsets/<topic>/"
                "<partition>:<offset>'")
        try:
            group, topic, partition = paths.parse_offset(path)
        except ValueError as exc:
            raise BadOffsetsFile(f"line {number}: {exc}") from None
        offset = int(value)
        entries.append(OffsetEntry(group, topic, partition, offset))
    return entries


def _require_idle(client: KazooClient, group: str, force: bool, action: str) -> None:
    members = live_members(client, group)
    if members and not force:
        raise GroupActive(
            f"refusing to {action} for group {group!r}: {len(members)} member(s) registered "
            f"({', '.join(members[:3])}{', ...' if len(members) > 3 else ''}); stop them or "
            "use --force")


def export_offsets(zk_connect: str, groups: str | list[str] | None = None) -> list[OffsetEntry]:
    """``ExportZkOffsets``: every offset of the named groups (all groups when none is named).

    Groups come in the order given, or in ZooKeeper's order of ``/consumers``' children; topics
    and partitions in ZooKeeper's order too, which is what the original wrote. A group without
    an offsets znode contributes nothing (the original stopped with a NoNode error there).
    """
    if isinstance(groups, str):
        groups = [groups]
    entries = []
    with zk_session(zk_connect) as client:
        if not groups:
            groups = children_of(client, paths.CONSUMERS)
        for group in groups:
            paths.validate_group(group)
            for topic in children_of(client, paths.offsets(group)):
                for child in children_of(client, paths.topic_offsets(group, topic)):
                    if not child.isdigit():
                        log.error("not exported: %s/%s is not a partition",
                                  paths.topic_offsets(group, topic), child)
                        continue
                    path = paths.offset(group, topic, int(child))
                    try:
                        data, _ = client.get(path)
                        entries.append(OffsetEntry(group, topic, int(child),
                                                   decode_offset(path, data)))
                    except (NoNodeError, CorruptZnode) as exc:
                        log.error("not exported: %s", exc)
    return entries


def _write(client: KazooClient, entry: OffsetEntry) -> None:
    path = entry.path
    try:
        client.set(path, encode_offset(entry.offset))
    except NoNodeError:
        create_with_parents(client, path, encode_offset(entry.offset))


def import_offsets(zk_connect: str, entries: list[OffsetEntry], force: bool = False) -> int:
    with zk_session(zk_connect) as client:
        for group in sorted({e.group for e in entries}):
            _require_idle(client, group, force, "import offsets")
        for entry in entries:
            _write(client, entry)
    return len(entries)


def reset_offsets(zk_connect: str, group: str, topic: str, to: str,
                  bootstrap: str | None = None, force: bool = False) -> list[OffsetEntry]:
    """Set every partition's committed offset to the log start, the log end, or a number."""
    paths.validate_group(group)
    paths.validate_topic(topic)
    if to not in ("smallest", "largest"):
        try:
            fixed = int(to)
        except ValueError:
            raise ValueError(f"--to must be smallest, largest or an offset, got {to!r}") from None
        if fixed < 0:
            raise ValueError(f"--to offset must be >= 0, got {fixed}")
    with zk_session(zk_connect) as client:
        _require_idle(client, group, force, "reset offsets")
        try:
            data, _ = client.get(paths.topic(topic))
        except NoNodeError:
            raise TopicError(f"can't find topic {topic!r} ({paths.topic(topic)} is missing)") \
                from None
        partitions = list(decode_topic_assignment(paths.topic(topic), data))
        if to in ("smallest", "largest"):
            servers = bootstrap or bootstrap_servers(client, zk_connect)
            targets = _watermarks(servers, topic, partitions, low=(to == "smallest"))
        else:
            targets = dict.fromkeys(partitions, int(to))
        entries = [OffsetEntry(group, topic, p, targets[p]) for p in partitions]
        for entry in entries:
            _write(client, entry)
    return entries


def _watermarks(bootstrap: str, topic: str, partitions: list[int], low: bool) -> dict[int, int]:
    marks = watermarks(bootstrap, [(topic, p) for p in partitions], timeout=10)
    missing = [p for (_, p), m in marks.items() if m is None]
    if missing:
        raise TopicError(f"the broker gave no offsets for {topic!r} partitions {missing}; "
                         "nothing was reset")
    return {p: m[0 if low else 1] for (_, p), m in marks.items() if m is not None}


def delete_group(zk_connect: str, group: str) -> None:
    """Remove ``/consumers/<group>`` entirely; only when no member is registered."""
    paths.validate_group(group)
    with zk_session(zk_connect) as client:
        if client.exists(paths.group(group)) is None:
            raise ZkConsumerError(f"group {group!r} does not exist")
        members = live_members(client, group)
        if members:
            raise GroupActive(f"refusing to delete group {group!r}: {len(members)} member(s) "
                              f"registered ({', '.join(members[:3])})")
        try:
            client.delete(paths.group(group), recursive=True)
        except NotEmptyError:
            raise GroupActive(f"group {group!r} gained a member while being deleted") from None
