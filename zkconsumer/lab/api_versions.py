"""Which request versions a broker speaks, asked with ApiVersions v0 (KIP-35, Kafka 0.10.0).

The lab needs two facts from it: whether a broker has KIP-848 groups at all (it offers
ConsumerGroupHeartbeat), and whether a client *can* ask for static membership.
``group.instance.id`` (KIP-345) travels only in JoinGroup v5 and later, which brokers have from
Kafka 2.3; against an older coordinator the client negotiates a JoinGroup without the field, so
"static" members join as dynamic ones and a bounce rebalances the group. That is not the broker
ignoring the field (Tansu 0.6.0 does that); the field never reaches it. Deciding from the
versions the broker announces, rather than from its name, holds for any broker.

ApiVersions v0 is the one request every broker since 0.10.0 answers before anything else (even
before SASL authentication), with a flat list of (api key, min version, max version).
"""

from __future__ import annotations

import logging
import socket
import struct
from collections.abc import Mapping

log = logging.getLogger(__name__)

API_VERSIONS = 18
JOIN_GROUP = 11
# KIP-345: the first JoinGroup version carrying group.instance.id (Apache Kafka 2.3).
STATIC_JOIN_GROUP_VERSION = 5
# KIP-848: the one request of the "consumer" group protocol (joins, heartbeats and assignments).
CONSUMER_GROUP_HEARTBEAT = 68
CLIENT_ID = "zkconsumer-lab"

Versions = dict[int, tuple[int, int]]


def encode_request(correlation_id: int, client_id: str = CLIENT_ID) -> bytes:
    """One size-prefixed ApiVersions v0 request (header v1, empty body)."""
    raw_id = client_id.encode()
    body = struct.pack(">hhih", API_VERSIONS, 0, correlation_id, len(raw_id)) + raw_id
    return struct.pack(">i", len(body)) + body


def decode_response(payload: bytes, correlation_id: int) -> Versions:
    """``api key -> (min, max)`` from an ApiVersions v0 response body (without its size).

    Raises ``ValueError`` naming what is wrong: another request's answer, a broker error code, or
    a body too short for the entries it announces.
    """
    try:
        got_id, error, count = struct.unpack_from(">ihi", payload, 0)
        if got_id != correlation_id:
            raise ValueError(f"ApiVersions answer carries correlation id {got_id}, "
                             f"expected {correlation_id}")
        if error != 0:
            raise ValueError(f"ApiVersions answered with error code {error}")
        versions: Versions = {}
        for i in range(count):
            key, low, high = struct.unpack_from(">hhh", payload, 10 + 6 * i)
            versions[key] = (low, high)
    except struct.error as exc:
        raise ValueError(f"ApiVersions answer of {len(payload)} bytes is truncated: {exc}") from exc
    return versions


def _address(bootstrap: str) -> tuple[str, int]:
    first = bootstrap.split(",")[0].strip()
    first = first.split("://", 1)[-1]
    host, sep, port = first.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"bootstrap {bootstrap!r}: {first!r} is not HOST:PORT")
    return host.strip("[]") or "127.0.0.1", int(port)


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError(f"broker closed the connection after {len(data)} of {n} bytes")
        data += chunk
    return data


def broker_api_versions(bootstrap: str, timeout_s: float = 5.0) -> Versions:
    """Ask the first broker of ``bootstrap`` (``HOST:PORT[,..]``) which versions it speaks.

    Raises ``OSError``/``ValueError`` when it cannot be asked (a broker older than 0.10.0 closes
    the connection; a TLS listener does not answer plaintext).
    """
    host, port = _address(bootstrap)
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        sock.sendall(encode_request(1))
        (size,) = struct.unpack(">i", _read_exactly(sock, 4))
        return decode_response(_read_exactly(sock, size), 1)


def static_membership_refusal(broker: str, versions: Mapping[int, tuple[int, int]]) -> str | None:
    """Why no client can request static membership from this broker, or None if one can."""
    if JOIN_GROUP not in versions:
        return (f"{broker} cannot be asked for static membership: it offers no JoinGroup "
                f"request at all (no broker-side consumer groups)")
    top = versions[JOIN_GROUP][1]
    if top >= STATIC_JOIN_GROUP_VERSION:
        return None
    return (f"{broker} cannot be asked for static membership: its JoinGroup goes up to v{top}, "
            f"and group.instance.id travels only in JoinGroup v{STATIC_JOIN_GROUP_VERSION} and "
            f"later (Apache Kafka 2.3, KIP-345), so no client can send it")


def consumer_protocol_refusal(broker: str, versions: Mapping[int, tuple[int, int]]
                              ) -> str | None:
    """Why no member can join a KIP-848 group (``group.protocol=consumer``) on this broker, or
    None if one can: the protocol is the ConsumerGroupHeartbeat request (Apache Kafka 3.7 as a
    preview, the default from 4.0), and a broker that does not announce it has no such groups."""
    if CONSUMER_GROUP_HEARTBEAT in versions:
        return None
    return (f"{broker} has no KIP-848 consumer groups: it does not offer the "
            f"ConsumerGroupHeartbeat request (api key {CONSUMER_GROUP_HEARTBEAT}; Apache Kafka "
            f"4.0 and later)")
