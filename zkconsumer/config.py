"""ConsumerConfig: the legacy consumer's property names, defaults and validation.

Names, defaults and error texts follow Kafka 0.10.2's ``kafka.consumer.ConsumerConfig`` (spec
detailed §2). Values may be given as strings (as in a ``.properties`` file) or already typed.
Two deliberate deviations from the original, both in the table of ``docs/connector.md``:

* unknown keys are rejected (the original only logged ``Property <k> is not valid``), because a
  misspelt property silently falling back to its default is the commonest configuration bug;
* ``offsets.storage=kafka`` needs ``coordination.mode=legacy`` (the leader mode's fenced commits
  are ZooKeeper multi-ops).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from zkconsumer.errors import InvalidConfig
from zkconsumer.zk.security import ZkAuth, parse_acl, parse_auth

log = logging.getLogger(__name__)

_LEGAL_CHARS = re.compile(r"[a-zA-Z0-9._-]+")

#: Keys the original defines but this port does not use: accepted, so legacy property files load.
_ACCEPTED_UNUSED = frozenset({
    "fetch.max.bytes", "mirror.topics.whitelist", "mirror.topics.blacklist",
    "mirror.consumer.numthreads",
})

#: zkconsumer's own extension properties (not in the original).
SESSION_LOST_POLICIES = ("legacy", "stop-fetchers")
#: ``fail``: as the original, an unreadable member registration fails the rebalance attempt;
#: ``skip``: the registration is left out of the plan (only safe if every member skips it).
UNREADABLE_REGISTRATION_POLICIES = ("fail", "skip")
COORDINATION_MODES = ("legacy", "leader")
#: Assignors the leader mode accepts (any member-level assignor; see docs/leader.md).
LEADER_STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky")


def _int(name: str, raw: object) -> int:
    if isinstance(raw, bool):
        raise InvalidConfig(f"{name} must be an integer, got {raw!r}")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str):
        try:
            return int(raw.strip())
        except ValueError:
            pass
    raise InvalidConfig(f"{name} must be an integer, got {raw!r}")


def _bool(name: str, raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip() in ("true", "false"):
        return raw.strip() == "true"
    raise InvalidConfig(
        f"Unacceptable value for property '{name}', boolean values must be either "
        f"'true' or 'false', got {raw!r}"
    )


def _str(name: str, raw: object) -> str:
    if not isinstance(raw, str):
        raise InvalidConfig(f"{name} must be a string, got {raw!r}")
    return raw.strip()


def _at_least(minimum: int) -> Callable[[str, int], None]:
    def check(name: str, value: int) -> None:
        if value < minimum:
            raise InvalidConfig(f"{name} must be >= {minimum}, got {value}")
    return check


# dotted name -> (attribute, parser, default or a function of the already parsed values, check)
_Spec = tuple[str, Callable[[str, object], Any], Any, Callable[[str, Any], None] | None]
_PROPERTIES: dict[str, _Spec] = {
    "zookeeper.connect": ("zookeeper_connect", _str, None, None),
    "zookeeper.session.timeout.ms": ("zookeeper_session_timeout_ms", _int, 6000, _at_least(1)),
    "zookeeper.connection.timeout.ms": (
        "zookeeper_connection_timeout_ms", _int,
        lambda v: v["zookeeper_session_timeout_ms"], _at_least(1)),
    "zookeeper.sync.time.ms": ("zookeeper_sync_time_ms", _int, 2000, _at_least(0)),
    "group.id": ("group_id", _str, None, None),
    "consumer.id": ("consumer_id", _str, None, None),
    "socket.timeout.ms": ("socket_timeout_ms", _int, 30000, _at_least(1)),
    "socket.receive.buffer.bytes": ("socket_receive_buffer_bytes", _int, 65536, _at_least(1)),
    "fetch.message.max.bytes": ("fetch_message_max_bytes", _int, 1048576, _at_least(1)),
    "num.consumer.fetchers": ("num_consumer_fetchers", _int, 1, _at_least(1)),
    "auto.commit.enable": ("auto_commit_enable", _bool, True, None),
    "auto.commit.interval.ms": ("auto_commit_interval_ms", _int, 60000, _at_least(1)),
    "queued.max.message.chunks": ("queued_max_message_chunks", _int, 2, _at_least(1)),
    "rebalance.max.retries": ("rebalance_max_retries", _int, 4, _at_least(0)),
    "fetch.min.bytes": ("fetch_min_bytes", _int, 1, _at_least(0)),
    "fetch.wait.max.ms": ("fetch_wait_max_ms", _int, 100, _at_least(0)),
    # KAFKA-2589: the default is zookeeper.sync.time.ms, not a fixed 2000.
    "rebalance.backoff.ms": (
        "rebalance_backoff_ms", _int, lambda v: v["zookeeper_sync_time_ms"], _at_least(0)),
    "refresh.leader.backoff.ms": ("refresh_leader_backoff_ms", _int, 200, _at_least(0)),
    # Kafka offset storage only (offsets/kafka.py): the coordinator channel and commit retries.
    "offsets.channel.backoff.ms": ("offsets_channel_backoff_ms", _int, 1000, _at_least(0)),
    "offsets.channel.socket.timeout.ms": (
        "offsets_channel_socket_timeout_ms", _int, 10000, _at_least(1)),
    "offsets.commit.max.retries": ("offsets_commit_max_retries", _int, 5, _at_least(0)),
    "offsets.storage": ("offsets_storage", _str, "zookeeper", None),
    "dual.commit.enabled": (
        "dual_commit_enabled", _bool,
        lambda v: v["offsets_storage"].lower() == "kafka", None),
    "auto.offset.reset": ("auto_offset_reset", _str, "largest", None),
    "consumer.timeout.ms": ("consumer_timeout_ms", _int, -1, None),
    "client.id": ("client_id", _str, lambda v: v["group_id"], None),
    "exclude.internal.topics": ("exclude_internal_topics", _bool, True, None),
    "partition.assignment.strategy": ("partition_assignment_strategy", _str, "range", None),
    # zkconsumer extension: what to do when the session is lost (see docs/connector.md).
    "zkconsumer.session.lost.policy": ("session_lost_policy", _str, "legacy", None),
    # zkconsumer extension: a member registration this member cannot read fails the attempt
    # (the original's behaviour) or is skipped (see docs/connector.md for the mixed-group risk).
    "zkconsumer.unreadable.registration.policy": (
        "unreadable_registration_policy", _str, "fail", None),
    # zkconsumer extensions: ZooKeeper credentials and the ACL of created znodes
    # (see docs/reliability.md and zk/security.py).
    "zookeeper.auth": ("zookeeper_auth", parse_auth, None, None),
    "zookeeper.acl": ("zookeeper_acl", parse_acl, "open", None),
    # zkconsumer extension: one elected leader assigns (see docs/leader.md).
    "coordination.mode": ("coordination_mode", _str, "legacy", None),
    "zookeeper.pause.fetchers.on.disconnect": (
        "pause_fetchers_on_disconnect", _bool, lambda v: v["coordination_mode"] == "leader", None),
}


@dataclass(frozen=True)
class ConsumerConfig:
    """Typed, validated legacy consumer configuration.

    >>> cfg = ConsumerConfig({"zookeeper.connect": "127.0.0.1:2181", "group.id": "g"})
    >>> cfg.rebalance_backoff_ms, cfg.get("auto.offset.reset")
    (2000, 'largest')
    """

    zookeeper_connect: str
    group_id: str
    consumer_id: str | None
    zookeeper_session_timeout_ms: int
    zookeeper_connection_timeout_ms: int
    zookeeper_sync_time_ms: int
    socket_timeout_ms: int
    socket_receive_buffer_bytes: int
    fetch_message_max_bytes: int
    num_consumer_fetchers: int
    auto_commit_enable: bool
    auto_commit_interval_ms: int
    queued_max_message_chunks: int
    rebalance_max_retries: int
    fetch_min_bytes: int
    fetch_wait_max_ms: int
    rebalance_backoff_ms: int
    refresh_leader_backoff_ms: int
    offsets_channel_backoff_ms: int
    offsets_channel_socket_timeout_ms: int
    offsets_commit_max_retries: int
    offsets_storage: str
    dual_commit_enabled: bool
    auto_offset_reset: str
    consumer_timeout_ms: int
    client_id: str
    exclude_internal_topics: bool
    partition_assignment_strategy: str
    session_lost_policy: str
    unreadable_registration_policy: str
    zookeeper_auth: ZkAuth | None
    zookeeper_acl: str
    coordination_mode: str
    pause_fetchers_on_disconnect: bool
    raw: Mapping[str, object] = field(compare=False, repr=False)

    def __init__(self, props: Mapping[str, object] | ConsumerConfig) -> None:
        if isinstance(props, ConsumerConfig):
            props = props.raw
        if not isinstance(props, Mapping):
            raise InvalidConfig(
                f"consumer properties must be a mapping, got {type(props).__name__}")
        unknown = sorted(
            k for k in props
            if k not in _PROPERTIES and k not in _ACCEPTED_UNUSED
            and not str(k).startswith("external")
        )
        if unknown:
            raise InvalidConfig(
                f"unknown consumer properties: {', '.join(map(repr, unknown))} "
                "(zkconsumer accepts the legacy high-level consumer's property names only)"
            )
        values: dict[str, Any] = {}
        for name, (attr, parse, default, check) in _PROPERTIES.items():
            raw = props.get(name)
            if raw is None:
                if name in ("zookeeper.connect", "group.id"):
                    raise InvalidConfig(f"Missing required property '{name}'")
                value = default(values) if callable(default) else default
            else:
                value = parse(name, raw)
                if check is not None:
                    check(name, value)
            values[attr] = value
        _validate(values)
        for attr, value in values.items():
            object.__setattr__(self, attr, value)
        object.__setattr__(self, "raw", dict(props))

    def get(self, name: str) -> Any:
        """The typed value of a property by its legacy dotted name."""
        try:
            return getattr(self, _PROPERTIES[name][0])
        except KeyError:
            raise InvalidConfig(f"unknown consumer property {name!r}") from None

    def as_properties(self) -> dict[str, Any]:
        """Every effective property by dotted name (defaults applied), for logs and docs."""
        return {name: getattr(self, spec[0]) for name, spec in _PROPERTIES.items()}

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)
                          if f.name != "raw")
        return f"ConsumerConfig({shown})"


def _check_connect_string(connect: str) -> None:
    """``host:port[,host:port...][/chroot]`` as kazoo will parse it, refused here if malformed
    so that the error names the property instead of surfacing from inside kazoo at start."""
    from kazoo.hosts import collect_hosts
    from kazoo.protocol.paths import normpath

    try:
        hosts, chroot = collect_hosts(connect)
        if chroot:
            normpath(chroot)  # "/../x" is refused here, as kazoo would refuse it later
    except ValueError as exc:
        raise InvalidConfig(f"zookeeper.connect {connect!r} is malformed: {exc}") from None
    if not hosts:
        raise InvalidConfig(f"zookeeper.connect {connect!r} names no host")


def _validate(v: dict[str, Any]) -> None:
    """Cross-field checks, in the original's ``validate()`` order where it has one."""
    if not v["zookeeper_connect"]:
        raise InvalidConfig("Missing required property 'zookeeper.connect'")
    _check_connect_string(v["zookeeper_connect"])
    # group.id first (the original checked client.id first, which blames client.id for a bad
    # group.id when client.id defaults to it).
    for prop, attr in (("group.id", "group_id"), ("client.id", "client_id")):
        value = v[attr]
        if not value or not _LEGAL_CHARS.fullmatch(value) or value in (".", ".."):
            raise InvalidConfig(
                f"{prop} {value!r} is illegal, contains a character other than ASCII "
                "alphanumerics, '.', '_' and '-'" if value else f"{prop} must not be empty"
            )
    if v["auto_offset_reset"] not in ("smallest", "largest"):
        raise InvalidConfig(
            f"Wrong value {v['auto_offset_reset']} of auto.offset.reset in ConsumerConfig; "
            "Valid values are smallest and largest"
        )
    storage = v["offsets_storage"].lower()
    v["offsets_storage"] = storage
    if storage not in ("zookeeper", "kafka"):
        raise InvalidConfig(
            f"Wrong value {storage} of offsets.storage in consumer config; "
            "Valid values are 'zookeeper' and 'kafka'"
        )
    if storage == "kafka" and v["coordination_mode"] != "legacy":
        raise InvalidConfig(
            f"offsets.storage=kafka needs coordination.mode=legacy, got coordination.mode="
            f"{v['coordination_mode']} (the leader mode fences its commits in ZooKeeper)")
    if v["coordination_mode"] not in COORDINATION_MODES:
        raise InvalidConfig(
            f"Wrong value {v['coordination_mode']} of coordination.mode; "
            f"Valid values are {', '.join(COORDINATION_MODES)}")
    if v["coordination_mode"] == "leader":
        if v["partition_assignment_strategy"] not in LEADER_STRATEGIES:
            raise InvalidConfig(
                f"Wrong value {v['partition_assignment_strategy']} of "
                "partition.assignment.strategy with coordination.mode=leader; "
                f"Valid values are {', '.join(LEADER_STRATEGIES)}")
    elif v["pause_fetchers_on_disconnect"]:
        raise InvalidConfig(
            "zookeeper.pause.fetchers.on.disconnect=true needs coordination.mode=leader "
            "(legacy mode has zkconsumer.session.lost.policy)")
    elif v["partition_assignment_strategy"] not in ("range", "roundrobin"):
        raise InvalidConfig(
            f"Wrong value {v['partition_assignment_strategy']} of partition.assignment.strategy "
            "in consumer config; Valid values are 'range' and 'roundrobin'"
        )
    if v["fetch_wait_max_ms"] > v["socket_timeout_ms"]:
        raise InvalidConfig(
            "socket.timeout.ms should always be at least fetch.wait.max.ms to prevent unnecessary "
            f"socket timeouts (fetch.wait.max.ms={v['fetch_wait_max_ms']}, "
            f"socket.timeout.ms={v['socket_timeout_ms']})"
        )
    if v["session_lost_policy"] not in SESSION_LOST_POLICIES:
        raise InvalidConfig(
            f"Wrong value {v['session_lost_policy']} of zkconsumer.session.lost.policy; "
            f"Valid values are {', '.join(SESSION_LOST_POLICIES)}"
        )
    if v["unreadable_registration_policy"] not in UNREADABLE_REGISTRATION_POLICIES:
        raise InvalidConfig(
            f"Wrong value {v['unreadable_registration_policy']} of "
            "zkconsumer.unreadable.registration.policy; "
            f"Valid values are {', '.join(UNREADABLE_REGISTRATION_POLICIES)}")
    if v["zookeeper_acl"] != "open" and v["zookeeper_auth"] is None:
        raise InvalidConfig(
            f"zookeeper.acl={v['zookeeper_acl']} needs zookeeper.auth: a creator ACL protects "
            "znodes for authenticated identities only")
    if v["consumer_id"] is not None and not v["consumer_id"]:
        raise InvalidConfig("consumer.id must not be empty when set")
    retries, backoff = v["rebalance_max_retries"], v["rebalance_backoff_ms"]
    if retries * backoff <= v["zookeeper_session_timeout_ms"]:
        log.debug(
            "rebalance.max.retries (%d) x rebalance.backoff.ms (%d) does not exceed "
            "zookeeper.session.timeout.ms (%d): a crashed member's owner znodes can outlive "
            "every retry", retries, backoff, v["zookeeper_session_timeout_ms"])
