"""The tools' side of ``offsets.storage=kafka``: a group's offsets in the broker, exported,
imported, and copied between ZooKeeper and the broker (``groups migrate-offsets``).

The copy is the operator's half of the migration the original documented: members moved to
Kafka storage with dual commit find their offsets in either place; a copy lets a group that
never ran dual commit (or is moving back) start where it stopped. Writing under live members
is refused unless forced, naming them: their next commit would overwrite the copy, and a copy
taken while they consume is already stale.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from kazoo.client import KazooClient

from zkconsumer.admin.cluster import bootstrap_servers, create_with_parents, zk_session
from zkconsumer.admin.groups import live_members, snapshot
from zkconsumer.admin.kafka_group import commit_broker_offsets, fetch_broker_offsets
from zkconsumer.admin.offset_tools import GroupActive, OffsetEntry, export_offsets
from zkconsumer.zk import paths
from zkconsumer.zk.codec import encode_offset

log = logging.getLogger(__name__)

STORAGES = ("zookeeper", "kafka")


def check_storage(storage: str) -> str:
    if storage not in STORAGES:
        raise ValueError(f"offsets storage must be zookeeper or kafka, got {storage!r}")
    return storage


def require_no_members(client: KazooClient, group: str, force: bool, action: str) -> None:
    """Refuse while members are registered in ZooKeeper, naming them, unless forced."""
    members = live_members(client, group)
    if members and not force:
        raise GroupActive(
            f"refusing to {action} for group {group!r} while {len(members)} member(s) are "
            f"registered: {', '.join(members)}; stop them first or use --force")


def _partitions(client: KazooClient, group: str) -> list[tuple[str, int]]:
    snap = snapshot(client, group)
    return sorted((t, p) for t, ps in snap.partitions.items() for p in ps)


def export_broker_offsets(zk_connect: str, groups: str | list[str] | None = None,
                          bootstrap: str | None = None) -> list[OffsetEntry]:
    """The groups' offsets in the broker (every group under ``/consumers`` when None), for every
    partition of the topics ZooKeeper knows for each (subscribed, owned or with ZooKeeper
    offsets), in the export file's line format."""
    wanted = [groups] if isinstance(groups, str) else groups
    with zk_session(zk_connect) as client:
        names = list(wanted) if wanted is not None else sorted(
            client.get_children(paths.CONSUMERS) if client.exists(paths.CONSUMERS) else [])
        per_group = {paths.validate_group(g): _partitions(client, g) for g in names}
        servers = bootstrap or bootstrap_servers(client, zk_connect)
    entries = []
    for group, tps in per_group.items():
        stored = fetch_broker_offsets(servers, group, tps)
        entries += [OffsetEntry(group, t, p, o) for (t, p), o in sorted(stored.items())
                    if o is not None]
    return entries


def import_broker_offsets(zk_connect: str, entries: list[OffsetEntry], force: bool = False,
                          bootstrap: str | None = None) -> int:
    """Commit an export file's offsets to the broker, group by group."""
    with zk_session(zk_connect) as client:
        for group in sorted({e.group for e in entries}):
            require_no_members(client, group, force, "import offsets into the broker")
        servers = bootstrap or bootstrap_servers(client, zk_connect)
    for group in sorted({e.group for e in entries}):
        commit_broker_offsets(servers, group, {(e.topic, e.partition): e.offset
                                               for e in entries if e.group == group})
    return len(entries)


@dataclass(frozen=True)
class Migration:
    group: str
    to: str
    copied: list[OffsetEntry]

    def as_dict(self) -> dict[str, object]:
        return {"group": self.group, "to": self.to,
                "offsets": [{"topic": e.topic, "partition": e.partition, "offset": e.offset}
                            for e in self.copied]}


def migrate_offsets(zk_connect: str, group: str, to: str = "kafka", force: bool = False,
                    bootstrap: str | None = None) -> Migration:
    """Copy every committed offset of ``group`` from the other storage into ``to``."""
    check_storage(to)
    paths.validate_group(group)
    with zk_session(zk_connect) as client:
        require_no_members(client, group, force, f"copy offsets to {to}")
        servers = bootstrap or bootstrap_servers(client, zk_connect)
    if to == "kafka":
        entries = export_offsets(zk_connect, group)
        commit_broker_offsets(servers, group, {(e.topic, e.partition): e.offset
                                               for e in entries})
        return Migration(group, to, entries)
    entries = export_broker_offsets(zk_connect, group, servers)
    with zk_session(zk_connect) as client:
        for e in entries:
            if client.exists(e.path) is None:
                create_with_parents(client, e.path, encode_offset(e.offset))
            else:
                client.set(e.path, encode_offset(e.offset))
    return Migration(group, to, entries)
