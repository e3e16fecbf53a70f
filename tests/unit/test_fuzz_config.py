"""Any property map: ConsumerConfig is built or raises InvalidConfig, never anything else.

A properties file, a CLI ``--property`` or a program's dict may hold any key and any value; the
user must get an error naming the property, not a TypeError from deep inside the parser.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kazoo.client import KazooClient

from zkconsumer import ConsumerConfig
from zkconsumer.config import _PROPERTIES
from zkconsumer.errors import InvalidConfig

SETTINGS = settings(derandomize=True, max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

_NAMES = st.sampled_from(sorted(_PROPERTIES)) | st.text(max_size=12)
_VALUES = (st.none() | st.booleans() | st.integers() | st.floats()
           | st.text(max_size=12) | st.sampled_from(
               ["true", "false", " 5 ", "-1", "0", "range", "roundrobin", "smallest", "largest",
                "leader", "legacy", "open", "creator-all-world-read", "u:p", "digest:u:p",
                "sasl:u:p", "../x", "a/b", "9" * 30, "kafka", "zookeeper"])
           | st.lists(st.integers(), max_size=2) | st.dictionaries(st.text(max_size=3),
                                                                   st.integers(), max_size=2))
_CONNECT = st.sampled_from(["127.0.0.1:2181", "a:1,b:2/chroot", "h:1/../x", "h:99999", ":1",
                            "h:x", "h:1,/x", "[::1]:2181", "h:1/"]) | st.text(max_size=15)
_REQUIRED = st.fixed_dictionaries({"zookeeper.connect": st.just("127.0.0.1:2181"),
                                   "group.id": st.just("g")})


@SETTINGS
@given(_REQUIRED, st.dictionaries(_NAMES, _VALUES, max_size=6))
def test_any_properties_give_a_config_or_invalid_config(base, extra):
    props = {**base, **extra}
    try:
        cfg = ConsumerConfig(props)
    except InvalidConfig as exc:
        assert str(exc)  # says what is wrong
        return
    # Whatever was accepted is typed and self-consistent.
    assert cfg.group_id and cfg.zookeeper_connect
    assert cfg.zookeeper_session_timeout_ms >= 1
    assert cfg.fetch_wait_max_ms <= cfg.socket_timeout_ms
    assert cfg.zookeeper_acl == "open" or cfg.zookeeper_auth is not None
    assert ConsumerConfig(cfg) == cfg


@SETTINGS
@given(_CONNECT)
def test_a_connect_string_the_config_accepts_is_one_kazoo_accepts(connect):
    try:
        cfg = ConsumerConfig({"zookeeper.connect": connect, "group.id": "g"})
    except InvalidConfig as exc:
        assert "zookeeper.connect" in str(exc)
        return
    KazooClient(hosts=cfg.zookeeper_connect)  # parses hosts and chroot; connects nowhere


@SETTINGS
@given(st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.text(), max_size=2),
                 st.dictionaries(st.integers(), st.integers(), max_size=2)))
def test_a_non_mapping_or_a_mapping_with_odd_keys_is_invalid_config(props):
    try:
        ConsumerConfig(props)
    except InvalidConfig:
        return
    raise AssertionError(f"{props!r} was accepted")


def test_the_password_never_shows_in_the_config_repr():
    cfg = ConsumerConfig({"zookeeper.connect": "h:1", "group.id": "g",
                          "zookeeper.auth": "alice:s3cr3t-pw", "zookeeper.acl":
                          "creator-all-world-read"})
    assert "s3cr3t-pw" not in repr(cfg) and "s3cr3t-pw" not in str(cfg.zookeeper_auth)
    assert "s3cr3t-pw" not in repr(cfg.as_properties())
    assert cfg.zookeeper_auth is not None and cfg.zookeeper_auth.password == "s3cr3t-pw"
