"""ZooKeeper authentication and ACLs: ``zookeeper.auth`` and ``zookeeper.acl`` turned into kazoo's.

Why a module of its own: the connector (``zk/session.py``) and the operator tools
(``admin/cluster.py``) must authenticate and protect znodes in exactly the same way, or a tool
would create a group's parent znodes that its members cannot use. Everything here is pure.

* ``zookeeper.auth``: ``[digest:]user:password`` (ZooKeeper's built-in digest scheme, sent with
  ``addauth`` on every connection) or ``sasl:user:password`` (SASL DIGEST-MD5 through kazoo,
  which needs the ``pure-sasl`` package and a server configured for SASL).
* ``zookeeper.acl``: ``open`` (world: all, ZooKeeper's and the original's default) or
  ``creator-all-world-read`` (the authenticated creator may do anything, everyone else may only
  read; Kafka's ``zookeeper.set.acl=true`` ACL). The latter needs ``zookeeper.auth``.

Shared ancestors (``/consumers``, ``/brokers``, ``/brokers/topics``, ``/brokers/ids``) are always
created open: with a creator-only ACL there, the first secured group would lock every other
group and broker out of the tree. Everything below them (``/consumers/<group>/...``, topic
znodes) gets the configured ACL, parents included: ZooKeeper checks a delete against the
*parent's* ACL, so protecting a znode means protecting its parent too.

The tools take the same two values from the environment: ``ZKCONSUMER_ZK_AUTH`` and
``ZKCONSUMER_ZK_ACL`` (see ``docs/reliability.md``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from kazoo.security import ACL, CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, READ_ACL_UNSAFE

from zkconsumer.errors import InvalidConfig, ZkConsumerError
from zkconsumer.zk import paths

AUTH_SCHEMES = ("digest", "sasl")
ACL_MODES = ("open", "creator-all-world-read")
ENV_AUTH = "ZKCONSUMER_ZK_AUTH"
ENV_ACL = "ZKCONSUMER_ZK_ACL"

#: Created open whatever the ACL mode: every group and broker shares them.
SHARED_PATHS = paths.SHARED


class AccessDenied(ZkConsumerError, PermissionError):
    """ZooKeeper refused an operation on a znode for lack of rights (``NoAuth``)."""


def access_denied(path: str, action: str, security: ZkSecurity | None) -> AccessDenied:
    """The error for a ``NoAuth`` on ``path``, saying which credentials were used."""
    who = (f"authenticated as {security.auth}" if security is not None and security.auth
           else "without credentials")
    return AccessDenied(
        f"ZooKeeper denied {action} on {path} ({who}); the znode or its parent is protected by "
        "an ACL: set zookeeper.auth (tools: ZKCONSUMER_ZK_AUTH) to the group's credentials")


class ZkSettings(Protocol):
    """What :meth:`ZkSecurity.from_config` reads: ``ConsumerConfig`` has both (it imports this
    module, so it cannot be named here)."""

    zookeeper_auth: ZkAuth | None
    zookeeper_acl: str


@dataclass(frozen=True)
class ZkAuth:
    """Credentials for one ZooKeeper session; the password never appears in a repr or log."""

    scheme: str
    username: str
    password: str = field(repr=False)

    def __str__(self) -> str:
        return f"{self.scheme}:{self.username}:***"


def parse_auth(name: str, raw: object) -> ZkAuth | None:
    """``[digest:]user:password`` or ``sasl:user:password``; empty means no authentication.

    The password may contain ``:`` (only the first separator after the user counts); prefix the
    scheme when the user name itself is ``digest`` or ``sasl``.
    """
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise InvalidConfig(f"{name} must be a string, got a {type(raw).__name__}")
    text = raw.strip()
    if not text:
        return None
    scheme = "digest"
    head, sep, rest = text.partition(":")
    if sep and head in AUTH_SCHEMES and ":" in rest:
        scheme, text = head, rest
    user, sep, password = text.partition(":")
    if not sep or not user or not password:
        raise InvalidConfig(
            f"{name} must be [digest:]user:password or sasl:user:password "
            "(user and password not empty)")
    if any(ch in user for ch in "\x00\n\r") or "\x00" in password:
        raise InvalidConfig(f"{name}: the user name contains a control character")
    return ZkAuth(scheme, user, password)


def parse_acl(name: str, raw: object) -> str:
    if not isinstance(raw, str):
        raise InvalidConfig(f"{name} must be a string, got a {type(raw).__name__}")
    mode = raw.strip()
    if mode not in ACL_MODES:
        raise InvalidConfig(
            f"Wrong value {mode} of {name}; Valid values are {', '.join(ACL_MODES)}")
    return mode


@dataclass(frozen=True)
class ZkSecurity:
    """What a ZooKeeper client needs to authenticate and to protect what it creates."""

    auth: ZkAuth | None = None
    acl: str = "open"

    def __post_init__(self) -> None:
        if self.acl not in ACL_MODES:
            raise InvalidConfig(f"Wrong value {self.acl} of zookeeper.acl; "
                                f"Valid values are {', '.join(ACL_MODES)}")
        if self.acl != "open" and self.auth is None:
            raise InvalidConfig(
                f"zookeeper.acl={self.acl} needs zookeeper.auth: a creator ACL protects "
                "znodes for authenticated identities only")

    @classmethod
    def from_config(cls, config: ZkSettings) -> ZkSecurity:
        """From a ``ConsumerConfig`` (its ``zookeeper_auth`` and ``zookeeper_acl``)."""
        return cls(config.zookeeper_auth, config.zookeeper_acl)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ZkSecurity:
        """The tools' settings: ``ZKCONSUMER_ZK_AUTH`` and ``ZKCONSUMER_ZK_ACL``."""
        env = os.environ if env is None else env
        auth = parse_auth(ENV_AUTH, env.get(ENV_AUTH))
        return cls(auth, parse_acl(ENV_ACL, env.get(ENV_ACL) or "open"))

    @property
    def default_acl(self) -> list[ACL]:
        """The ACL of every znode this client creates below the shared roots."""
        if self.acl == "creator-all-world-read":
            return [*CREATOR_ALL_ACL, *READ_ACL_UNSAFE]
        return list(OPEN_ACL_UNSAFE)

    def kazoo_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``KazooClient``: credentials and the default ACL."""
        kwargs: dict[str, Any] = {"default_acl": self.default_acl}
        if self.auth is None:
            return kwargs
        if self.auth.scheme == "digest":
            kwargs["auth_data"] = [("digest", f"{self.auth.username}:{self.auth.password}")]
        else:
            try:
                import puresasl  # noqa: F401
            except ImportError:
                raise InvalidConfig(
                    "zookeeper.auth=sasl:... needs the pure-sasl package "
                    "(pip install pure-sasl, or the zkconsumer[sasl] extra)"
                ) from None
            kwargs["sasl_options"] = {"mechanism": "DIGEST-MD5",
                                      "username": self.auth.username,
                                      "password": self.auth.password}
        return kwargs


def acl_for(path: str, default_acl: list[ACL] | None) -> list[ACL]:
    """The ACL to create ``path`` with: open for the shared roots, else ``default_acl``."""
    if path in SHARED_PATHS or not default_acl:
        return list(OPEN_ACL_UNSAFE)
    return list(default_acl)
