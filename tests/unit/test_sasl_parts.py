"""SASL's server-free parts: the JAAS file, kazoo's options, and the start-time login check."""

from __future__ import annotations

import pytest
from kazoo.exceptions import AuthFailedError, ConnectionLoss
from kazoo.handlers.threading import KazooTimeoutError

from zkconsumer.errors import ZooKeeperUnavailable
from zkconsumer.testing.zookeeper import EmbeddedZooKeeper, jaas_server_section
from zkconsumer.zk.security import ZkAuth, ZkSecurity
from zkconsumer.zk.session import confirm_sasl

SASL = ZkSecurity(ZkAuth("sasl", "alice", "pa55word"), "creator-all-world-read")


class _Answer:
    def __init__(self, outcome: BaseException | None) -> None:
        self._outcome = outcome

    def get(self, timeout: float | None = None) -> None:
        if self._outcome is not None:
            raise self._outcome


class _Client:
    """Answers each ``exists_async`` with the next outcome (an exception or success)."""

    def __init__(self, *outcomes: BaseException | None) -> None:
        self._outcomes = list(outcomes)
        self.requests = 0

    def exists_async(self, path: str) -> _Answer:
        self.requests += 1
        return _Answer(self._outcomes.pop(0) if self._outcomes else None)


def test_the_jaas_section_lists_every_user_with_escaped_passwords():
    text = jaas_server_section({"alice": 'a"b\\c', "bob": "pw"})
    assert text.startswith("Server {")
    assert "org.apache.zookeeper.server.auth.DigestLoginModule required" in text
    assert 'user_alice="a\\"b\\\\c"' in text and 'user_bob="pw";' in text


@pytest.mark.parametrize("users", [{}, {"bad name": "pw"}, {"a=b": "pw"}, {"alice": ""},
                                   {"alice": "two\nlines"}])
def test_users_a_jaas_file_cannot_hold_are_refused_before_any_server_starts(users):
    with pytest.raises(ValueError) as failure:
        EmbeddedZooKeeper(sasl_users=users)
    assert "two\nlines" not in str(failure.value)


def test_kazoo_gets_digest_md5_options_and_no_auth_data_for_sasl():
    kwargs = SASL.kazoo_kwargs()
    assert kwargs["sasl_options"] == {"mechanism": "DIGEST-MD5", "username": "alice",
                                      "password": "pa55word"}
    assert "auth_data" not in kwargs


@pytest.mark.parametrize("security", [ZkSecurity(), ZkSecurity(ZkAuth("digest", "a", "b"))])
def test_only_sasl_sessions_are_probed(security):
    client = _Client(AuthFailedError())
    confirm_sasl(client, "zk:2181", security, 1.0)  # type: ignore[arg-type]
    assert client.requests == 0


def test_a_refused_login_names_the_server_and_user_but_not_the_password():
    with pytest.raises(ZooKeeperUnavailable) as failure:
        confirm_sasl(_Client(AuthFailedError()), "zk:2181", SASL, 1.0)  # type: ignore[arg-type]
    message = str(failure.value)
    assert "zk:2181" in message and "'alice'" in message and "pa55word" not in message


def test_a_connection_loss_during_the_login_is_retried():
    client = _Client(ConnectionLoss(), None)
    confirm_sasl(client, "zk:2181", SASL, 1.0)  # type: ignore[arg-type]
    assert client.requests == 2


def test_a_login_without_an_answer_times_out_with_a_hint():
    client = _Client(*[KazooTimeoutError()] * 1000)
    with pytest.raises(ZooKeeperUnavailable, match="SASL authProvider") as failure:
        confirm_sasl(client, "zk:2181", SASL, 0.05)  # type: ignore[arg-type]
    assert "pa55word" not in str(failure.value)
