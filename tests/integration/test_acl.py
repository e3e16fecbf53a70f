"""``zookeeper.auth`` + ``zookeeper.acl=creator-all-world-read``, in a chroot, on real servers.

A group whose members authenticate keeps its owner, registration and offset znodes to itself:
another client, anonymous or with other credentials, can read them (the tools need that) but
cannot delete, overwrite or add to them, and the group keeps consuming while it tries.
"""

from __future__ import annotations

import pytest
from connector_helpers import StreamDrain, committed, fast_config, owners, wait_until
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.security import Permissions

from zkconsumer import ZookeeperConsumerConnector
from zkconsumer.admin import create_topic, produce
from zkconsumer.admin.groups import describe_group
from zkconsumer.admin.offset_tools import OffsetEntry, import_offsets
from zkconsumer.admin.secure import secure_group
from zkconsumer.cli.main import main
from zkconsumer.zk import codec, paths
from zkconsumer.zk.security import AccessDenied

ALICE = "alice:wonderland"
SECURE = {"zookeeper_auth": ALICE, "zookeeper_acl": "creator-all-world-read"}


def _client(connect: str, auth: str | None = None) -> KazooClient:
    client = KazooClient(hosts=connect, auth_data=[("digest", auth)] if auth else None)
    client.start(timeout=15)
    return client


def _acl_ids(client: KazooClient, path: str) -> dict[tuple[str, str], int]:
    acls, _ = client.get_acls(path)
    return {(a.id.scheme, a.id.id.split(":")[0]): a.perms for a in acls}


@pytest.fixture
def chroot(zk_connect, broker, kazoo_client, unique):
    """A fresh chroot with the session's broker registered in it, as a chrooted cluster has."""
    root = "/" + unique("chroot")
    broker_id = getattr(broker, "broker_id", 0)
    data, _ = kazoo_client.get(paths.broker(broker_id))
    kazoo_client.create(root + paths.broker(broker_id), data, ephemeral=True, makepath=True)
    yield root
    admin = _client(zk_connect, ALICE)  # the protected znodes can only be removed by alice
    try:
        admin.delete(root, recursive=True)
    finally:
        admin.stop()
        admin.close()


def test_a_secured_group_in_a_chroot_cannot_be_tampered_with_and_keeps_working(
        zk_connect, broker, kazoo_client, unique, chroot, monkeypatch):
    connect = zk_connect + chroot
    topic, group = unique("topic"), unique("g")
    create_topic(connect, topic, 2, bootstrap=broker.bootstrap)
    for p in range(2):
        produce(broker.bootstrap, topic, [f"{p}-{i}" for i in range(3)], partition=p)
    c1 = ZookeeperConsumerConnector(fast_config(connect, group, consumer_id="c1", **SECURE))
    c2 = ZookeeperConsumerConnector(fast_config(connect, group, consumer_id="c2", **SECURE))
    anonymous, mallory = _client(connect), _client(connect, "mallory:guess")
    try:
        drain = StreamDrain([*c1.create_message_streams({topic: 1})[topic],
                             *c2.create_message_streams({topic: 1})[topic]])
        wait_until(lambda: len(c1.owned_partitions()) == len(c2.owned_partitions()) == 1, 30,
                   "the two secured members to split the partitions")
        wait_until(lambda: drain.count() >= 6, 30, "the first messages")
        c1.commit_offsets()
        c2.commit_offsets()
        # The chroot is honoured: the group lives under it and not at the root.
        assert kazoo_client.exists(chroot + paths.consumer_registration(group, f"{group}_c1"))
        assert kazoo_client.exists(paths.group(group)) is None

        # Every znode of the group, parents included, is alice's; the shared root stays open.
        protected = [paths.group(group), paths.consumer_ids(group),
                     paths.consumer_registration(group, f"{group}_c1"),
                     paths.topic_owners(group, topic), paths.owner(group, topic, 0),
                     paths.topic_offsets(group, topic), paths.offset(group, topic, 0)]
        for path in protected:
            assert _acl_ids(kazoo_client, chroot + path) == {
                ("digest", "alice"): Permissions.ALL, ("world", "anyone"): Permissions.READ}, path
        assert _acl_ids(kazoo_client, chroot + paths.CONSUMERS) == {
            ("world", "anyone"): Permissions.ALL}

        before = owners(anonymous, group, topic)
        assert set(before) == {0, 1}  # world-readable: tools and monitors still work
        fake = codec.encode_registration(codec.ConsumerRegistration(((topic, 1),)))
        attacks = [
            lambda c: c.delete(paths.owner(group, topic, 0)),
            lambda c: c.set(paths.owner(group, topic, 1), b"mallory-0"),
            lambda c: c.delete(paths.consumer_registration(group, f"{group}_c2")),
            lambda c: c.set(paths.consumer_registration(group, f"{group}_c2"), b"{}"),
            lambda c: c.set(paths.offset(group, topic, 0), b"0"),
            lambda c: c.delete(paths.offset(group, topic, 1)),
            lambda c: c.create(paths.consumer_registration(group, "intruder"), fake,
                               ephemeral=True),
            lambda c: c.create(paths.owner(group, topic, 7), b"intruder-0", ephemeral=True),
            lambda c: c.delete(paths.group(group), recursive=True),
        ]
        for client in (anonymous, mallory):
            for attack in attacks:
                with pytest.raises(NoAuthError):
                    attack(client)
        assert owners(anonymous, group, topic) == before
        assert committed(anonymous, group, topic, 2) == {0: 3, 1: 3}

        # The group keeps working: new messages are consumed by their owners.
        produce(broker.bootstrap, topic, ["late-0"], partition=0)
        produce(broker.bootstrap, topic, ["late-1"], partition=1)
        wait_until(lambda: {b"late-0", b"late-1"} <= drain.values(), 30, "the late messages")

        # The tools read without credentials, and write only with the group's credentials.
        assert {r.owner for r in describe_group(connect, group, bootstrap=broker.bootstrap)
                .partitions} == set(before.values())
        entry = [OffsetEntry(group, topic, 0, 1)]
        monkeypatch.delenv("ZKCONSUMER_ZK_AUTH", raising=False)
        with pytest.raises(AccessDenied, match="without credentials"):
            import_offsets(connect, entry, force=True)
        monkeypatch.setenv("ZKCONSUMER_ZK_AUTH", ALICE)
        monkeypatch.setenv("ZKCONSUMER_ZK_ACL", "creator-all-world-read")
        assert import_offsets(connect, entry, force=True) == 1

        # A member with the wrong credentials cannot join: a clear error, not a stack of kazoo.
        intruder = ZookeeperConsumerConnector(fast_config(
            connect, group, consumer_id="c3", zookeeper_auth="mallory:guess",
            zookeeper_acl="creator-all-world-read"))
        with pytest.raises(AccessDenied, match="mallory"):
            intruder.create_message_streams({topic: 1})
        intruder.shutdown()
        assert "wonderland" not in repr(c1.config)
        drain.stop()
        assert not drain.errors
    finally:
        c1.shutdown()
        c2.shutdown()
        for client in (anonymous, mallory):
            client.stop()
            client.close()


def test_a_group_created_without_acls_is_reported_and_can_be_secured(
        zk_connect, broker, new_topic, unique, kazoo_client, monkeypatch, capsys):
    topic, group = new_topic(2), unique("g")
    # The group existed before its members authenticated: open parents.
    kazoo_client.create(paths.offset(group, topic, 0), b"0", makepath=True)
    kazoo_client.ensure_path(paths.consumer_ids(group))
    events: list[dict] = []
    conn = ZookeeperConsumerConnector(fast_config(zk_connect, group, consumer_id="c", **SECURE))
    conn.add_event_listener(events.append)
    anonymous = _client(zk_connect)
    stray = paths.consumer_registration(group, "stray")
    try:
        conn.create_message_streams({topic: 1})
        assert [e["path"] for e in events if e["type"] == "group_unprotected"] == [
            paths.group(group)]
        # The hole the warning is about: open parents accept anyone's children.
        anonymous.create(stray, b"{}", ephemeral=True)
        anonymous.delete(stray)
        # Both child events wake the member's rebalancer; let it own everything again first.
        wait_until(lambda: set(owners(kazoo_client, group, topic)) == {0, 1}, 30,
                   "the group owning both partitions again")
        # Without the credentials the tool refuses (exit 2, a one-line error) ...
        monkeypatch.delenv("ZKCONSUMER_ZK_AUTH", raising=False)
        assert main(["groups", "secure", "--zk", zk_connect, "--group", group]) == 2
        assert "ZKCONSUMER_ZK_AUTH" in capsys.readouterr().err
        # ... with them it secures every znode the group had before, children first.
        monkeypatch.setenv("ZKCONSUMER_ZK_AUTH", ALICE)
        monkeypatch.setenv("ZKCONSUMER_ZK_ACL", "creator-all-world-read")
        assert main(["groups", "secure", "--zk", zk_connect, "--group", group]) == 0
        assert "secured" in capsys.readouterr().out
        for path in (paths.group(group), paths.consumer_ids(group), paths.offsets(group),
                     paths.topic_offsets(group, topic), paths.offset(group, topic, 0)):
            assert _acl_ids(kazoo_client, path) == {
                ("digest", "alice"): Permissions.ALL, ("world", "anyone"): Permissions.READ}
        again = secure_group(zk_connect, group)  # idempotent: nothing left to change
        assert again.changed == [] and paths.consumer_ids(group) in again.unchanged
        with pytest.raises(NoAuthError):
            anonymous.create(stray, b"{}", ephemeral=True)
        with pytest.raises(NoAuthError):
            anonymous.delete(paths.owner(group, topic, 1))
        wait_until(lambda: set(owners(anonymous, group, topic)) == {0, 1}, 30,
                   "the secured group still owning both partitions")
    finally:
        conn.shutdown()
        anonymous.stop()
        anonymous.close()
        admin = _client(zk_connect, ALICE)
        admin.delete(paths.group(group), recursive=True)
        admin.stop()
        admin.close()
