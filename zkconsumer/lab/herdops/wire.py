"""ZooKeeper's client wire protocol, read from the bytes a client and its server exchange.

The server's own counters (``mntr``) say how many packets arrived, not which operations they
were. Seen on the wire, every request names its kind, and the three reads that can leave a
watch (``exists``, ``getData``, ``getChildren``/``getChildren2``) carry the watch flag in their
body; every watch notification is a reply with xid -1. That is enough to count, per client
connection, what a membership change costs the server by operation kind.

The framing (ZooKeeper's jute serialisation, big-endian): every packet is a 4-byte length and
that many bytes. The first packet each way is the session handshake (``ConnectRequest``,
``ConnectResponse``), with no header. After it, a request is ``RequestHeader`` (int xid, int
type) and a body; a reply is ``ReplyHeader`` (int xid, long zxid, int err) and a body. Special
xids: -1 a watch notification (body ``WatcherEvent``: int type, int state, string path), -2 a
ping, -4 an authentication packet, -8 the ``setWatches`` a client sends after a reconnect.

Everything here is pure: :class:`FrameReader` cuts a byte stream into packets,
:class:`Conversation` turns one connection's packets into :class:`WireOp` records (each request
with its reply's error code, each notification).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

# ZooKeeper's ZooDefs.OpCode, the kinds a client can send.
OPCODES: dict[int, str] = {
    0: "notification", 1: "create", 2: "delete", 3: "exists", 4: "getData", 5: "setData",
    6: "getACL", 7: "setACL", 8: "getChildren", 9: "sync", 11: "ping", 12: "getChildren2",
    13: "check", 14: "multi", 15: "create2", 16: "reconfig", 17: "checkWatches",
    18: "removeWatches", 19: "createContainer", 20: "deleteContainer", 21: "createTTL",
    22: "multiRead", 100: "auth", 101: "setWatches", 102: "sasl", 103: "getEphemerals",
    104: "getAllChildrenNumber", 105: "setWatches2", 106: "addWatch", 107: "whoAmI",
    -10: "createSession", -11: "closeSession",
}
# The reads whose body ends with the watch flag (path, then a boolean).
WATCHING_READS = frozenset({"exists", "getData", "getChildren", "getChildren2"})
# Requests whose body starts with the znode path.
PATH_FIRST = WATCHING_READS | {"create", "delete", "setData", "getACL", "setACL", "sync",
                               "check", "create2", "createContainer", "deleteContainer",
                               "createTTL", "getEphemerals", "getAllChildrenNumber", "addWatch"}
NOTIFICATION_XID = -1
PING_XID = -2
AUTH_XID = -4
SET_WATCHES_XID = -8
# WatcherEvent.type -> the event's name (Watcher.Event.EventType).
EVENT_TYPES = {-1: "none", 1: "nodeCreated", 2: "nodeDeleted", 3: "nodeDataChanged",
               4: "nodeChildrenChanged", 5: "dataWatchRemoved", 6: "childWatchRemoved",
               7: "persistentWatchRemoved"}
# The largest packet the server accepts by default (jute.maxbuffer, 1 MiB) plus headroom: a
# length beyond it means the stream is not ZooKeeper's protocol, not a big packet.
MAX_PACKET = 4 * 1024 * 1024


class WireError(ValueError):
    """The bytes are not ZooKeeper's client protocol (a bad length or a truncated body)."""


@dataclass(frozen=True)
class WireOp:
    """One request a client sent (with its reply's error code, 0 when it succeeded, None while
    unanswered) or one notification the server sent it (``op`` "notification", ``event`` the
    WatcherEvent's type)."""

    op: str
    path: str = ""
    watch: bool = False
    err: int | None = None
    xid: int = 0
    event: str = ""
    sub_ops: tuple[str, ...] = ()


class FrameReader:
    """Length-prefixed packets out of a byte stream that arrives in arbitrary pieces."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        self._buf += data
        out: list[bytes] = []
        while len(self._buf) >= 4:
            (size,) = struct.unpack_from(">i", self._buf, 0)
            if size < 0 or size > MAX_PACKET:
                raise WireError(f"packet length {size} is not a ZooKeeper packet's")
            if len(self._buf) < 4 + size:
                break
            out.append(bytes(self._buf[4:4 + size]))
            del self._buf[:4 + size]
        return out


def _string(body: bytes, at: int) -> tuple[str, int]:
    """A jute ustring at ``at`` (int length, -1 for null, then UTF-8) and the offset after it."""
    if at + 4 > len(body):
        raise WireError(f"string length at byte {at} past the packet's {len(body)} bytes")
    (size,) = struct.unpack_from(">i", body, at)
    at += 4
    if size < 0:
        return "", at
    if at + size > len(body):
        raise WireError(f"string of {size} bytes at byte {at} past the packet's {len(body)}")
    return body[at:at + size].decode("utf-8", errors="replace"), at + size


def parse_request(packet: bytes) -> WireOp:
    """One request packet (after the handshake) as the operation it asks for."""
    if len(packet) < 8:
        raise WireError(f"request of {len(packet)} bytes has no header")
    xid, code = struct.unpack_from(">ii", packet, 0)
    op = OPCODES.get(code, f"op{code}")
    body, path, watch = packet[8:], "", False
    if op in PATH_FIRST:
        path, after = _string(body, 0)
        if op in WATCHING_READS:
            if after >= len(body):
                raise WireError(f"{op} {path!r} has no watch flag")
            watch = body[after] != 0
    sub_ops = _multi_ops(body) if op in ("multi", "multiRead") else ()
    return WireOp(op, path, watch, xid=xid, sub_ops=sub_ops)


def _multi_ops(body: bytes) -> tuple[str, ...]:
    """The kinds inside a multi-operation (MultiHeader: int type, bool done, int err, then the
    operation's own request; the list ends with a header whose ``done`` is set)."""
    ops: list[str] = []
    at = 0
    while at + 9 <= len(body):
        code, done = struct.unpack_from(">i?", body, at)
        at += 9
        if done:
            break
        op = OPCODES.get(code, f"op{code}")
        ops.append(op)
        at = _skip_sub_op(op, body, at)
    return tuple(ops)


def _skip_sub_op(op: str, body: bytes, at: int) -> int:
    """The offset after one sub-operation's request inside a multi."""
    _, at = _string(body, at)
    if op in ("create", "create2", "createContainer", "createTTL"):
        (size,) = struct.unpack_from(">i", body, at)
        at += 4 + max(size, 0)
        (acls,) = struct.unpack_from(">i", body, at)
        at += 4
        for _ in range(max(acls, 0)):
            at += 4                     # perms
            _, at = _string(body, at)   # scheme
            _, at = _string(body, at)   # id
        at += 4 + (8 if op == "createTTL" else 0)  # flags (and ttl)
    elif op in ("delete", "check"):
        at += 4
    elif op == "setData":
        (size,) = struct.unpack_from(">i", body, at)
        at += 4 + max(size, 0) + 4
    elif op in ("getData", "getChildren"):
        pass
    else:
        raise WireError(f"unknown operation {op!r} inside a multi")
    return at


def parse_reply(packet: bytes) -> tuple[int, int]:
    """(xid, err) of a reply packet."""
    if len(packet) < 16:
        raise WireError(f"reply of {len(packet)} bytes has no header")
    xid, _zxid, err = struct.unpack_from(">iqi", packet, 0)
    return xid, err


def parse_notification(packet: bytes) -> WireOp:
    """A reply with xid -1: the WatcherEvent after the reply header."""
    etype, _state = struct.unpack_from(">ii", packet, 16)
    path, _ = _string(packet, 24)
    return WireOp("notification", path, event=EVENT_TYPES.get(etype, f"event{etype}"),
                  xid=NOTIFICATION_XID)


@dataclass
class Conversation:
    """One client connection: its requests matched to their replies, and its notifications.

    ``ops`` holds every request (pings too, with op "ping") in the order sent and every
    notification in the order received; a request's ``err`` is filled in when its reply comes
    (replies come back in request order, ZooKeeper's guarantee per session). The handshake
    packets each way become one ``connect`` op.
    """

    ops: list[WireOp] = field(default_factory=list)
    session_id: int | None = None
    _up: FrameReader = field(default_factory=FrameReader)
    _down: FrameReader = field(default_factory=FrameReader)
    _handshake_sent: bool = False
    _handshake_answered: bool = False
    _pending: dict[int, int] = field(default_factory=dict)  # xid -> index in ops

    def client_bytes(self, data: bytes) -> list[WireOp]:
        """Bytes the client sent; the requests they completed."""
        new: list[WireOp] = []
        for packet in self._up.feed(data):
            if not self._handshake_sent:
                self._handshake_sent = True
                new.append(WireOp("connect"))
                self.ops.append(new[-1])
                continue
            op = parse_request(packet)
            if op.xid != PING_XID or op.op != "ping":
                self._pending[op.xid] = len(self.ops)
            self.ops.append(op)
            new.append(op)
        return new

    def server_bytes(self, data: bytes) -> list[WireOp]:
        """Bytes the server sent; the notifications among them (replies update their request)."""
        new: list[WireOp] = []
        for packet in self._down.feed(data):
            if not self._handshake_answered:
                self._handshake_answered = True
                if len(packet) >= 16:
                    (self.session_id,) = struct.unpack_from(">q", packet, 8)
                continue
            xid, err = parse_reply(packet)
            if xid == NOTIFICATION_XID:
                note = parse_notification(packet)
                self.ops.append(note)
                new.append(note)
                continue
            index = self._pending.pop(xid, None)
            if index is not None:
                req = self.ops[index]
                self.ops[index] = WireOp(req.op, req.path, req.watch, err, req.xid,
                                         sub_ops=req.sub_ops)
        return new
