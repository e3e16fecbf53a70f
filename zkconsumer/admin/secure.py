"""Put a group created without ACLs under the configured ACL (``zkconsumer groups secure``).

A group that existed before its members authenticated keeps the open ACL on the znodes created
then: ``/consumers/<g>``, ``ids``, ``owners/<t>``, ``offsets/<t>``. New znodes get the secured
ACL, but ZooKeeper checks a delete and a create against the *parent's* ACL, so with open
parents anyone can still delete owners and offsets or register a fake member. This walks the
group's subtree and sets the ACL on every znode, as Kafka's ``ZkSecurityMigrator`` did for a
cluster, with the operator's credentials (``ZKCONSUMER_ZK_AUTH``, ``ZKCONSUMER_ZK_ACL``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from zkconsumer.admin.cluster import zk_session
from zkconsumer.errors import ZkConsumerError
from zkconsumer.zk import paths
from zkconsumer.zk.security import ZkSecurity

log = logging.getLogger(__name__)


@dataclass
class SecureReport:
    """What ``secure_group`` did: znodes whose ACL changed, and those already right."""

    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def secure_group(zk_connect: str, group: str,
                 security: ZkSecurity | None = None) -> SecureReport:
    """Set the secured ACL on ``/consumers/<group>`` and everything below it."""
    paths.validate_group(group)
    security = security if security is not None else ZkSecurity.from_env()
    if security.acl == "open":
        raise ZkConsumerError("securing a group needs ZKCONSUMER_ZK_AUTH and "
                              "ZKCONSUMER_ZK_ACL=creator-all-world-read")
    report = SecureReport()
    with zk_session(zk_connect, security=security) as client:
        root = paths.group(group)
        if client.exists(root) is None:
            raise ZkConsumerError(f"group {group!r} does not exist")
        _walk(client, root, report)
    return report


def _walk(client: KazooClient, path: str, report: SecureReport) -> None:
    """Children first: once a parent is locked, its children are still ours to change."""
    try:
        children = client.get_children(path)
    except NoNodeError:
        return
    for child in sorted(children):
        _walk(client, paths.child(path, child), report)
    wanted = client.default_acl
    try:
        current, stat = client.get_acls(path)
    except NoNodeError:
        return
    if _same(current, wanted):
        report.unchanged.append(path)
        return
    try:
        client.set_acls(path, wanted, version=stat.aversion)
    except NoNodeError:
        return  # an ephemeral that left meanwhile
    report.changed.append(path)
    log.info("secured %s", path)


def _same(a: list, b: list) -> bool:
    # ZooKeeper stores ("auth", "") as the creator's concrete ids, so compare loosely: a node
    # already readable only by the world and writable by some digest identity is secured.
    def shape(acls: list) -> set[tuple[str, int]]:
        return {(x.id.scheme if x.id.scheme != "auth" else "digest", x.perms) for x in acls}
    return shape(a) == shape(b)
