"""``zookeeper.auth=sasl:user:password`` against a real ZooKeeper configured for SASL DIGEST-MD5.

The module starts its own SASL-enabled ZooKeeper (a JAAS ``Server`` section plus the SASL
authProvider) and registers the suite's broker in it. A group whose member logs in by SASL with
``zookeeper.acl=creator-all-world-read`` consumes as usual, and every znode it creates carries
``sasl:<user>`` (ZooKeeper fills the creator's id from the SASL identity) plus world read. A
wrong password fails the connector's start, and the tools, with a one-line error naming the user
(never the password), before ``zookeeper.connection.timeout.ms`` has elapsed: kazoo itself
reports the session as connected before the SASL handshake and only fails the next request. A
server without SASL fails it only once that timeout has elapsed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from connector_helpers import StreamDrain, committed, fast_config, owners, wait_until
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.security import Permissions

from zkconsumer import ZookeeperConsumerConnector
from zkconsumer.admin import create_topic, produce
from zkconsumer.cli.main import main
from zkconsumer.errors import ZooKeeperUnavailable
from zkconsumer.testing import EmbeddedZooKeeper
from zkconsumer.zk import paths

pytest.importorskip("puresasl", reason="zookeeper.auth=sasl:... needs the pure-sasl package "
                                       "(pip install 'zkconsumer[sasl]')")

USER, PASSWORD, WRONG = "alice", "s3cret-sasl", "not-the-s3cret"
SASL_AUTH = f"sasl:{USER}:{PASSWORD}"
SECURE = {"zookeeper_auth": SASL_AUTH, "zookeeper_acl": "creator-all-world-read"}
CONNECT_TIMEOUT_MS = 6000
REFUSAL_TIMEOUT_MS = 60000  # long enough that a refusal cannot be mistaken for the timeout
SASL_ACL = {("sasl", USER): Permissions.ALL, ("world", "anyone"): Permissions.READ}


def _anonymous(connect: str) -> KazooClient:
    client = KazooClient(hosts=connect)
    client.start(timeout=15)
    return client


def _acl_ids(client: KazooClient, path: str) -> dict[tuple[str, str], int]:
    acls, _ = client.get_acls(path)
    return {(a.id.scheme, a.id.id): a.perms for a in acls}


@pytest.fixture(scope="module")
def sasl_connect(zk_connect: str, broker: object) -> Iterator[str]:
    """A SASL-enabled ZooKeeper with the suite's broker registered in it, as its cluster has."""
    with EmbeddedZooKeeper(sasl_users={USER: PASSWORD}) as server:
        suite, holder = _anonymous(zk_connect), _anonymous(server.connect_string)
        try:
            broker_id = getattr(broker, "broker_id", 0)
            data, _ = suite.get(paths.broker(broker_id))
            # The registration lives as long as the holder's session: the whole module.
            holder.create(paths.broker(broker_id), data, ephemeral=True, makepath=True)
            yield server.connect_string
        finally:
            for client in (suite, holder):
                client.stop()
                client.close()


def test_a_sasl_group_consumes_and_keeps_its_znodes_to_itself(
        sasl_connect, broker, unique, monkeypatch):
    topic, group = unique("topic"), unique("g")
    # The tools log in by SASL from the environment, and protect the topic znode too.
    monkeypatch.setenv("ZKCONSUMER_ZK_AUTH", SASL_AUTH)
    monkeypatch.setenv("ZKCONSUMER_ZK_ACL", "creator-all-world-read")
    create_topic(sasl_connect, topic, 2, bootstrap=broker.bootstrap)
    for p in range(2):
        produce(broker.bootstrap, topic, [f"{p}-{i}" for i in range(3)], partition=p)
    conn = ZookeeperConsumerConnector(fast_config(
        sasl_connect, group, consumer_id="c1",
        zookeeper_connection_timeout_ms=CONNECT_TIMEOUT_MS, **SECURE))
    anonymous = _anonymous(sasl_connect)
    try:
        drain = StreamDrain(conn.create_message_streams({topic: 2})[topic])
        wait_until(lambda: set(owners(anonymous, group, topic)) == {0, 1}, 20,
                   "the SASL member to own both partitions")
        wait_until(lambda: drain.count() >= 6, 20, "the six messages")
        conn.commit_offsets()
        assert committed(anonymous, group, topic, 2) == {0: 3, 1: 3}

        protected = [paths.group(group), paths.consumer_ids(group),
                     paths.consumer_registration(group, f"{group}_c1"),
                     paths.topic_owners(group, topic), paths.owner(group, topic, 0),
                     paths.owner(group, topic, 1), paths.topic_offsets(group, topic),
                     paths.offset(group, topic, 0), paths.topic(topic)]
        for path in protected:
            assert _acl_ids(anonymous, path) == SASL_ACL, path
        assert _acl_ids(anonymous, paths.CONSUMERS) == {("world", "anyone"): Permissions.ALL}

        before = owners(anonymous, group, topic)
        attacks = [
            lambda: anonymous.delete(paths.owner(group, topic, 0)),
            lambda: anonymous.set(paths.owner(group, topic, 1), b"intruder-0"),
            lambda: anonymous.delete(paths.consumer_registration(group, f"{group}_c1")),
            lambda: anonymous.set(paths.consumer_registration(group, f"{group}_c1"), b"{}"),
            lambda: anonymous.set(paths.offset(group, topic, 0), b"0"),
            lambda: anonymous.delete(paths.offset(group, topic, 1)),
            lambda: anonymous.create(paths.owner(group, topic, 7), b"x", ephemeral=True),
        ]
        for attack in attacks:
            with pytest.raises(NoAuthError):
                attack()
        assert owners(anonymous, group, topic) == before
        assert committed(anonymous, group, topic, 2) == {0: 3, 1: 3}

        produce(broker.bootstrap, topic, ["late-0"], partition=0)
        wait_until(lambda: b"late-0" in drain.values(), 20, "a message after the attacks")
        assert PASSWORD not in repr(conn.config)
        drain.stop()
        assert not drain.errors
    finally:
        conn.shutdown()
        anonymous.stop()
        anonymous.close()


def test_a_wrong_sasl_password_fails_fast_with_a_clear_error(
        sasl_connect, unique, monkeypatch, capsys):
    """The refusal is the server's answer, not the connection timeout running out: with a
    timeout of a minute, the error says 'rejected' and comes before that minute is over."""
    conn = ZookeeperConsumerConnector(fast_config(
        sasl_connect, unique("g"), consumer_id="c1",
        zookeeper_connection_timeout_ms=REFUSAL_TIMEOUT_MS,
        zookeeper_auth=f"sasl:{USER}:{WRONG}", zookeeper_acl="creator-all-world-read"))
    started = time.monotonic()
    try:
        with pytest.raises(ZooKeeperUnavailable) as failure:
            conn.start()
        elapsed = time.monotonic() - started
    finally:
        conn.shutdown()
    message = str(failure.value)
    assert f"rejected the SASL login of user {USER!r}" in message
    assert elapsed < REFUSAL_TIMEOUT_MS / 1000, elapsed
    assert sasl_connect in message and WRONG not in message

    # The tools: the same refusal through ZKCONSUMER_ZK_AUTH, as a one-line error (exit 2).
    monkeypatch.setenv("ZKCONSUMER_ZK_AUTH", f"sasl:{USER}:{WRONG}")
    assert main(["groups", "list", "--zk", sasl_connect]) == 2
    err = capsys.readouterr().err
    assert "rejected the SASL login" in err and repr(USER) in err and WRONG not in err
    # The right password works through the same path.
    monkeypatch.setenv("ZKCONSUMER_ZK_AUTH", SASL_AUTH)
    assert main(["groups", "list", "--zk", sasl_connect]) == 0


def test_a_sasl_login_to_a_server_without_sasl_fails_with_a_hint(zk_connect, unique):
    """The suite's ZooKeeper has no SASL authProvider: it never answers the handshake, so the
    failure is the connection timeout running out (its own message, not a refusal) and cannot
    come before it. The connection timeout is below the session timeout, as by default (equal):
    with a longer one, kazoo drops the unanswered handshake itself after about a session."""
    connection_ms, session_ms = 1500, 2000
    conn = ZookeeperConsumerConnector(fast_config(
        zk_connect, unique("g"), consumer_id="c1", zookeeper_connection_timeout_ms=connection_ms,
        zookeeper_session_timeout_ms=session_ms, **SECURE))
    started = time.monotonic()
    try:
        with pytest.raises(ZooKeeperUnavailable) as failure:
            conn.start()
        elapsed = time.monotonic() - started
    finally:
        conn.shutdown()
    assert f"did not complete the SASL login of user {USER!r}" in str(failure.value)
    assert "without the SASL authProvider" in str(failure.value)
    assert elapsed >= connection_ms / 1000, elapsed
