"""Any property map: ConsumerConfig is built or raises InvalidConfig, never anything else.

A properties file, a CLI ``--property`` or a program's dict may hold any key and any value; the
user must get an error naming the property, not a TypeError from deep inside the parser. Valid
maps are generated on their own and must all be accepted, so a parser that refused everything
would fail; the mixed fuzz must also see both outcomes.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kazoo.client import KazooClient

from zkconsumer import ConsumerConfig
from zkconsumer.config import _PROPERTIES
from zkconsumer.errors import InvalidConfig
from zkconsumer.zk.security import ZkAuth

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


def _number(low: int, high: int) -> st.SearchStrategy[object]:
    """An integer property as a program (int) or a properties file (text, maybe padded) gives it."""
    return st.integers(low, high).flatmap(
        lambda n: st.sampled_from([n, str(n), f" {n} "]))


# Properties whose legal values do not depend on one another, each with its legal values.
_VALID = st.fixed_dictionaries({}, optional={
    "zookeeper.session.timeout.ms": _number(1, 10**7),
    "zookeeper.connection.timeout.ms": _number(1, 10**7),
    "rebalance.max.retries": _number(0, 100),
    "rebalance.backoff.ms": _number(0, 10**6),
    "queued.max.message.chunks": _number(1, 1000),
    "num.consumer.fetchers": _number(1, 64),
    "fetch.wait.max.ms": _number(0, 30000),
    "consumer.timeout.ms": _number(-1, 10**6),
    "auto.commit.enable": st.sampled_from([True, False, "true", "false", " true"]),
    "auto.offset.reset": st.sampled_from(["smallest", "largest"]),
    "offsets.storage": st.sampled_from(["zookeeper", "kafka", "Kafka"]),
    "partition.assignment.strategy": st.sampled_from(["range", "roundrobin"]),
    "zookeeper.auth": st.sampled_from(["u:p", "digest:u:p", "sasl:u:p"]),
})


def _typed(raw: object) -> object:
    return raw.strip() if isinstance(raw, str) else raw


@SETTINGS
@given(_REQUIRED, _VALID)
def test_valid_properties_are_always_accepted_with_their_values(base, valid):
    cfg = ConsumerConfig({**base, **valid})
    for name, raw in valid.items():
        got = cfg.get(name)
        if name == "zookeeper.auth":
            assert got == ZkAuth("sasl" if raw.startswith("sasl") else "digest", "u", "p")
        elif isinstance(got, bool):
            assert got is (raw is True or _typed(raw) == "true"), (name, raw)
        elif isinstance(got, int):
            assert got == int(_typed(raw)), (name, raw)  # type: ignore[arg-type]
        else:
            assert got == _typed(raw).lower(), (name, raw)  # type: ignore[union-attr]


def test_any_properties_give_a_config_or_invalid_config():
    outcomes: Counter[str] = Counter()

    @SETTINGS
    @given(_REQUIRED, st.dictionaries(_NAMES, _VALUES, max_size=6) | _VALID)
    def check(base, extra):
        props = {**base, **extra}
        try:
            cfg = ConsumerConfig(props)
        except InvalidConfig as exc:
            assert str(exc)  # says what is wrong
            outcomes["refused"] += 1
            return
        outcomes["accepted"] += 1
        # Whatever was accepted is typed and self-consistent.
        assert cfg.group_id and cfg.zookeeper_connect
        assert cfg.zookeeper_session_timeout_ms >= 1
        assert cfg.fetch_wait_max_ms <= cfg.socket_timeout_ms
        assert cfg.zookeeper_acl == "open" or cfg.zookeeper_auth is not None
        assert ConsumerConfig(cfg) == cfg

    check()
    total = sum(outcomes.values())
    # both branches ran on a fair share of the cases, not on one lucky example
    assert outcomes["accepted"] >= total / 10 and outcomes["refused"] >= total / 10, outcomes


VALID_CONNECT = ["127.0.0.1:2181", "a:1,b:2/chroot", "[::1]:2181", "h:1/x/y", "localhost:2181"]


@pytest.mark.parametrize("connect", VALID_CONNECT)
def test_a_valid_connect_string_is_accepted_and_kazoo_parses_it(connect):
    cfg = ConsumerConfig({"zookeeper.connect": connect, "group.id": "g"})
    assert cfg.zookeeper_connect == connect
    KazooClient(hosts=cfg.zookeeper_connect)  # parses hosts and chroot; connects nowhere


@SETTINGS
@given(st.sampled_from(VALID_CONNECT) | _CONNECT)
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
