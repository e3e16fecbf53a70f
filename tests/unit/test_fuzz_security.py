"""``zookeeper.auth`` / ``zookeeper.acl`` parsing and the ACL each created znode gets."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kazoo.security import OPEN_ACL_UNSAFE, Permissions

from zkconsumer.errors import InvalidConfig
from zkconsumer.zk.security import SHARED_PATHS, ZkAuth, ZkSecurity, acl_for, parse_auth


@pytest.mark.parametrize("raw, expected", [
    ("alice:pw", ZkAuth("digest", "alice", "pw")),
    ("digest:alice:pw", ZkAuth("digest", "alice", "pw")),
    ("alice:p:w:", ZkAuth("digest", "alice", "p:w:")),
    ("sasl:bob:secret", ZkAuth("sasl", "bob", "secret")),
    ("digest:pw", ZkAuth("digest", "digest", "pw")),  # a user named "digest"
    ("", None), ("  ", None), (None, None),
])
def test_auth_forms(raw, expected):
    assert parse_auth("zookeeper.auth", raw) == expected


@pytest.mark.parametrize("raw", ["alice", "alice:", ":pw", "digest:", "sasl::pw", 5, ["a:b"]])
def test_bad_auth_is_invalid_config_naming_the_property(raw):
    with pytest.raises(InvalidConfig, match="zookeeper.auth"):
        parse_auth("zookeeper.auth", raw)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_any_auth_text_parses_or_is_invalid_config(raw):
    try:
        auth = parse_auth("zookeeper.auth", raw)
    except InvalidConfig:
        return
    if auth is not None:
        assert auth.username and auth.password and auth.password not in repr(auth)


def test_creator_acl_without_credentials_is_refused():
    with pytest.raises(InvalidConfig, match="needs zookeeper.auth"):
        ZkSecurity(None, "creator-all-world-read")


def test_secured_znodes_are_creator_all_and_world_read_except_the_shared_roots():
    sec = ZkSecurity(ZkAuth("digest", "alice", "pw"), "creator-all-world-read")
    acl = acl_for("/consumers/g/owners/t/0", sec.default_acl)
    perms = {(a.id.scheme, a.id.id): a.perms for a in acl}
    assert perms == {("auth", ""): Permissions.ALL, ("world", "anyone"): Permissions.READ}
    for shared in SHARED_PATHS:  # every group and broker must still be able to create under them
        assert acl_for(shared, sec.default_acl) == OPEN_ACL_UNSAFE
    kwargs = sec.kazoo_kwargs()
    assert kwargs["auth_data"] == [("digest", "alice:pw")]


def test_open_acl_and_no_credentials_by_default_for_the_tools():
    sec = ZkSecurity.from_env({})
    assert sec.auth is None and sec.acl == "open"
    assert acl_for("/consumers/g/ids", sec.default_acl) == OPEN_ACL_UNSAFE
    sec = ZkSecurity.from_env({"ZKCONSUMER_ZK_AUTH": "u:p",
                               "ZKCONSUMER_ZK_ACL": "creator-all-world-read"})
    assert sec.auth == ZkAuth("digest", "u", "p") and sec.acl == "creator-all-world-read"
    with pytest.raises(InvalidConfig, match="ZKCONSUMER_ZK_ACL"):
        ZkSecurity.from_env({"ZKCONSUMER_ZK_AUTH": "u:p", "ZKCONSUMER_ZK_ACL": "closed"})
