"""Encode and decode the values of the znodes brokers and the controller write (pure functions).

Formats are those of Kafka 0.10 (``ZkUtils.scala``, ``Broker.scala``): compact JSON, UTF-8.
Decoders raise :class:`CorruptZnode` naming the path and the offending value, so that a reader can
log the znode once and carry on; they never let a ``KeyError`` or ``json`` error escape.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from zkconsumer.errors import CorruptZnode, InvalidName
from zkconsumer.zk.paths import validate_topic


def dumps(value: Any) -> bytes:
    """Compact JSON as Kafka's ``Json.encode`` wrote it (no spaces), UTF-8."""
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


def loads(path: str, data: bytes | None) -> Any:
    """Parse a znode's JSON value or raise CorruptZnode naming the path."""
    if data is None or data == b"":
        raise CorruptZnode(f"{path}: empty value where JSON was expected")
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise CorruptZnode(f"{path}: {_preview(data)} is not valid JSON ({exc})") from None


def _preview(data: bytes, limit: int = 80) -> str:
    text = data[:limit].decode("utf-8", errors="replace")
    return repr(text + ("..." if len(data) > limit else ""))


def _require(path: str, doc: Any, key: str, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(doc, dict):
        raise CorruptZnode(f"{path}: expected a JSON object, got {type(doc).__name__}")
    if key not in doc:
        raise CorruptZnode(f"{path}: missing field {key!r}")
    value = doc[key]
    if isinstance(value, bool) or not isinstance(value, kind):
        raise CorruptZnode(f"{path}: field {key!r} has the wrong type: {value!r}")
    return value


# --- /brokers/ids/<id> ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BrokerRegistration:
    """A broker's ephemeral registration; ``endpoints`` are ``PROTOCOL://host:port`` strings."""

    broker_id: int
    host: str
    port: int
    endpoints: tuple[str, ...] = ()
    jmx_port: int = -1
    timestamp_ms: int = field(default_factory=lambda: int(time.time() * 1000))
    version: int = 2

    def plaintext_endpoint(self) -> tuple[str, int]:
        """The first PLAINTEXT endpoint, as the legacy consumer chose it (v1: host and port)."""
        for endpoint in self.endpoints:
            proto, _, address = endpoint.partition("://")
            if proto.upper() == "PLAINTEXT" and address:
                host, _, port = address.rpartition(":")
                return host, int(port)
        return self.host, self.port

    @property
    def bootstrap(self) -> str:
        host, port = self.plaintext_endpoint()
        return f"{host}:{port}"


def encode_broker(reg: BrokerRegistration) -> bytes:
    return dumps(
        {
            "version": reg.version,
            "host": reg.host,
            "port": reg.port,
            "endpoints": list(reg.endpoints) or [f"PLAINTEXT://{reg.host}:{reg.port}"],
            "jmx_port": reg.jmx_port,
            "timestamp": str(reg.timestamp_ms),
        }
    )


def decode_broker(path: str, broker_id: int, data: bytes | None) -> BrokerRegistration:
    doc = loads(path, data)
    version = _require(path, doc, "version", int)
    if version < 1:
        raise CorruptZnode(f"{path}: unsupported broker registration version {version}")
    host = doc.get("host")
    port = doc.get("port")
    endpoints: tuple[str, ...] = ()
    if version >= 2:
        raw = _require(path, doc, "endpoints", list)
        if not all(isinstance(e, str) for e in raw):
            raise CorruptZnode(f"{path}: endpoints must be strings, got {raw!r}")
        endpoints = tuple(raw)
    if not endpoints and (not isinstance(host, str) or not isinstance(port, int)):
        raise CorruptZnode(f"{path}: no endpoints and no host/port in {_preview(data or b'')}")
    try:
        timestamp = int(doc.get("timestamp", 0))
    except (TypeError, ValueError, OverflowError):
        timestamp = 0
    jmx = doc.get("jmx_port", -1)
    reg = BrokerRegistration(
        broker_id=broker_id,
        host=host if isinstance(host, str) else "",
        port=port if isinstance(port, int) and not isinstance(port, bool) else -1,
        endpoints=endpoints,
        jmx_port=jmx if isinstance(jmx, int) else -1,
        timestamp_ms=timestamp,
        version=version,
    )
    try:
        reg.plaintext_endpoint()
    except ValueError:
        raise CorruptZnode(f"{path}: malformed endpoint in {endpoints!r}") from None
    return reg


# --- /brokers/topics/<topic> ---------------------------------------------------------------------


def encode_topic_assignment(replicas: dict[int, list[int]]) -> bytes:
    """``{"version":1,"partitions":{"0":[1],...}}``, partitions in numeric order."""
    return dumps(
        {"version": 1, "partitions": {str(p): list(replicas[p]) for p in sorted(replicas)}}
    )


def decode_topic_assignment(path: str, data: bytes | None) -> dict[int, list[int]]:
    """Partition id -> replica list. The consumer only ever needs the keys, sorted."""
    doc = loads(path, data)
    parts = _require(path, doc, "partitions", dict)
    result: dict[int, list[int]] = {}
    for key, replicas in parts.items():
        try:
            partition = int(key)
        except ValueError:
            raise CorruptZnode(f"{path}: partition id {key!r} is not a number") from None
        if partition < 0 or not isinstance(replicas, list):
            raise CorruptZnode(f"{path}: bad entry for partition {key!r}: {replicas!r}")
        result[partition] = [int(r) for r in replicas if isinstance(r, int)]
    return dict(sorted(result.items()))


# --- /brokers/topics/<topic>/partitions/<p>/state ------------------------------------------------


@dataclass(frozen=True)
class PartitionState:
    leader: int
    isr: tuple[int, ...]
    leader_epoch: int = 0
    controller_epoch: int = 1


def encode_partition_state(state: PartitionState) -> bytes:
    return dumps(
        {
            "controller_epoch": state.controller_epoch,
            "leader": state.leader,
            "version": 1,
            "leader_epoch": state.leader_epoch,
            "isr": list(state.isr),
        }
    )


def decode_partition_state(path: str, data: bytes | None) -> PartitionState:
    doc = loads(path, data)
    leader = _require(path, doc, "leader", int)
    isr = doc.get("isr", [])
    if not isinstance(isr, list):
        raise CorruptZnode(f"{path}: isr must be a list, got {isr!r}")
    epoch = doc.get("leader_epoch", 0)
    cepoch = doc.get("controller_epoch", 1)
    return PartitionState(
        leader=leader,
        isr=tuple(i for i in isr if isinstance(i, int)),
        leader_epoch=epoch if isinstance(epoch, int) else 0,
        controller_epoch=cepoch if isinstance(cepoch, int) else 1,
    )


# --- /consumers/<group>/ids/<consumer id> (appended by the connector helper) ---------------------

#: The three ``pattern`` values of the original's ``TopicCount``.
STATIC_PATTERN = "static"
WHITE_LIST_PATTERN = "white_list"
BLACK_LIST_PATTERN = "black_list"


def json_escape(text: str) -> str:
    """Kafka's ``CoreUtils.JSONEscapeString``: escape for embedding in a JSON string literal.

    ``Json.encode`` in 0.8-0.10 did not escape map keys, so the wildcard regex had to be escaped
    by the caller (KAFKA-1180). Unlike ``json.dumps``, ``/`` is escaped as ``\\/`` and the C1
    control range 0x7f-0x9f as ``\\u00XX`` (lower-case hex), so ``-/-`` becomes ``-\\/-``.
    """
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if ch in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[ch])
        elif code <= 0x1F or 0x7F <= code <= 0x9F:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


_SIMPLE_ESCAPES = {
    '"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
    "\t": "\\t",
}


@dataclass(frozen=True)
class ConsumerRegistration:
    """A member's registration: ``subscription`` maps topics (static) or a regex to stream counts.

    ``pattern`` is ``static``, ``white_list`` or ``black_list``. ``version`` and ``timestamp`` are
    written as the original wrote them and ignored when read, as the original ignored them.
    """

    subscription: tuple[tuple[str, int], ...]
    pattern: str = STATIC_PATTERN
    timestamp_ms: int | None = None
    version: int = 1

    @property
    def is_wildcard(self) -> bool:
        """The original treats an empty subscription or any other pattern as static."""
        return bool(self.subscription) and self.pattern in (WHITE_LIST_PATTERN, BLACK_LIST_PATTERN)

    def subscription_map(self) -> dict[str, int]:
        return dict(self.subscription)


def encode_registration(reg: ConsumerRegistration) -> bytes:
    """``{"version":1,"subscription":{..},"pattern":"..","timestamp":"<ms>"}`` as 0.10 wrote it.

    Built by hand rather than with ``json.dumps`` so that keys are escaped exactly like
    ``JSONEscapeString`` (``\\/`` included) and the key order is the original's insertion order.
    """
    ts = reg.timestamp_ms if reg.timestamp_ms is not None else int(time.time() * 1000)
    subs = ",".join(f'"{json_escape(key)}":{int(count)}' for key, count in reg.subscription)
    text = (
        f'{{"version":{int(reg.version)},"subscription":{{{subs}}},'
        f'"pattern":"{json_escape(reg.pattern)}","timestamp":"{ts}"}}'
    )
    return text.encode("utf-8")


#: Upper bound on one member's stream count per topic. The original had none; a registration
#: claiming millions of streams would make every member of the group build millions of thread
#: ids on every rebalance, so beyond this it is treated as corrupt.
MAX_STREAMS_PER_TOPIC = 10_000


def decode_registration(path: str, data: bytes | None) -> ConsumerRegistration:
    """Parse another member's registration, as ``TopicCount.constructTopicCount`` did.

    A missing ``pattern`` or ``subscription`` is an error in the original
    (``error constructing TopicCount : <json>``); here it is CorruptZnode naming the path. So is
    what would later turn into a bad path or an unbounded allocation: a static subscription to
    an illegal topic name (``../x``), a negative stream count or one above
    :data:`MAX_STREAMS_PER_TOPIC`.
    """
    doc = loads(path, data)
    if not isinstance(doc, dict) or "pattern" not in doc or "subscription" not in doc:
        raise CorruptZnode(f"{path}: error constructing TopicCount : {_preview(data or b'')}")
    subs = doc["subscription"]
    pattern = doc["pattern"]
    if not isinstance(subs, dict) or not isinstance(pattern, str):
        raise CorruptZnode(f"{path}: error constructing TopicCount : {_preview(data or b'')}")
    pairs: list[tuple[str, int]] = []
    for key, count in subs.items():
        if isinstance(count, bool) or not isinstance(count, int):
            try:
                count = int(count)
            except (TypeError, ValueError, OverflowError):
                raise CorruptZnode(
                    f"{path}: stream count for {key!r} is not a number: {count!r}") from None
        if not 0 <= count <= MAX_STREAMS_PER_TOPIC:
            raise CorruptZnode(f"{path}: stream count for {key!r} out of range: {count}")
        if pattern not in (WHITE_LIST_PATTERN, BLACK_LIST_PATTERN) or not subs:
            try:
                validate_topic(key)
            except InvalidName as exc:
                raise CorruptZnode(f"{path}: subscribed topic is illegal: {exc}") from None
        pairs.append((key, count))
    try:
        ts: int | None = int(doc.get("timestamp"))  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        ts = None
    version = doc.get("version", 1)
    return ConsumerRegistration(
        subscription=tuple(pairs), pattern=pattern, timestamp_ms=ts,
        version=version if isinstance(version, int) else 1,
    )


# --- /consumers/<group>/owners/<topic>/<partition> -----------------------------------------------


def encode_owner(thread_id: str) -> bytes:
    """The owning consumer thread id as plain text, e.g. ``group1_consumer1-0``."""
    return thread_id.encode("utf-8")


def decode_owner(path: str, data: bytes | None) -> str:
    if data is None:
        raise CorruptZnode(f"{path}: owner znode has no value")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CorruptZnode(f"{path}: {_preview(data)} is not a consumer thread id") from None


# --- /consumers/<group>/offsets/<topic>/<partition> ----------------------------------------------


def encode_offset(offset: int) -> bytes:
    """The next offset to consume as decimal text (``offset.toString``)."""
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise TypeError(f"offset must be an int, got {offset!r}")
    return str(offset).encode("ascii")


def decode_offset(path: str, data: bytes | None) -> int:
    """Parse a committed offset (``toLong`` in the original); anything else is CorruptZnode."""
    if data is None or not data.strip():
        raise CorruptZnode(f"{path}: empty value is not an offset")
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        text = ""
    if not re.fullmatch(_OFFSET_TEXT, text):
        raise CorruptZnode(f"{path}: {_preview(data)} is not an offset")
    return int(text)


# Java's Long.parseLong: an optional sign and decimal digits, nothing else (no spaces, no '_').
_OFFSET_TEXT = r"[+-]?[0-9]{1,19}"
