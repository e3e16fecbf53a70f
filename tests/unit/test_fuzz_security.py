"""``zookeeper.auth`` / ``zookeeper.acl`` parsing and the ACL each created znode gets."""

from __future__ import annotations

import string

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


FUZZ = settings(derandomize=True, max_examples=200, deadline=None)
_USER = st.text(alphabet=string.ascii_letters + string.digits + "._-@", min_size=1, max_size=10)
_PASSWORD = st.text(alphabet=string.ascii_letters + string.digits + string.punctuation,
                    min_size=1, max_size=12)


@FUZZ
@given(st.sampled_from(["", "digest:", "sasl:"]), _USER, _PASSWORD)
def test_every_well_formed_auth_parses_to_its_parts(prefix, user, password):
    """Generated apart from the fuzz below, so a parser refusing everything fails here."""
    if not prefix and user in ("digest", "sasl"):
        user += "x"  # such a user name needs the scheme written out
    auth = parse_auth("zookeeper.auth", f"{prefix}{user}:{password}")
    scheme = prefix.rstrip(":") or "digest"
    assert auth == ZkAuth(scheme, user, password)
    assert repr(auth) == f"ZkAuth(scheme={scheme!r}, username={user!r})"  # no password


@FUZZ
@given(st.text(max_size=30))
def test_any_auth_text_parses_or_is_invalid_config(raw):
    try:
        auth = parse_auth("zookeeper.auth", raw)
    except InvalidConfig:
        return
    if auth is not None:
        assert auth.username and auth.password
        assert repr(auth) == f"ZkAuth(scheme={auth.scheme!r}, username={auth.username!r})"


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
