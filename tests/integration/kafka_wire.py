"""A bare group member speaking Kafka's wire protocol, for tests that need a *stale* member.

A real client fences itself: once it learns its generation ended it stops committing. To see what
the coordinator does with a commit from a generation that ended, the test needs a member that
keeps its old generation id and member id and sends anyway, which is what this does: JoinGroup
v1, SyncGroup v0, Heartbeat v0 and OffsetCommit v2 (no MEMBER_ID_REQUIRED round, KIP-394 starts
at JoinGroup v4), one request at a time on one connection.
"""

from __future__ import annotations

import socket
import struct
import time
from dataclasses import dataclass

FIND_COORDINATOR, JOIN_GROUP, SYNC_GROUP, HEARTBEAT, OFFSET_COMMIT = 10, 11, 14, 12, 8
NONE, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR = 0, 15, 16
ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS = 22, 25, 27


def _str(value: str) -> bytes:
    raw = value.encode()
    return struct.pack(">h", len(raw)) + raw


def _bytes(value: bytes) -> bytes:
    return struct.pack(">i", len(value)) + value


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, fmt: str) -> int:
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        n = self.take(">h")
        value = self.data[self.pos:self.pos + max(n, 0)].decode()
        self.pos += max(n, 0)
        return value

    def blob(self) -> bytes:
        n = self.take(">i")
        value = self.data[self.pos:self.pos + max(n, 0)]
        self.pos += max(n, 0)
        return value


@dataclass
class Joined:
    error: int
    generation: int
    member_id: str
    leader: str
    members: list[str]


class WireMember:
    """One group member on its own connection to the (single) broker, which coordinates."""

    def __init__(self, bootstrap: str, group: str, client_id: str = "wire-member") -> None:
        host, _, port = bootstrap.rpartition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.group, self.client_id = group, client_id
        self.member_id, self.generation = "", -1
        self._correlation = 0

    def close(self) -> None:
        self.sock.close()

    def _call(self, api: int, version: int, body: bytes) -> _Reader:
        self._correlation += 1
        header = struct.pack(">hhi", api, version, self._correlation) + _str(self.client_id)
        payload = header + body
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)
        size = struct.unpack(">i", self._read(4))[0]
        reader = _Reader(self._read(size))
        assert reader.take(">i") == self._correlation
        return reader

    def _read(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            buf += chunk
        return buf

    def wait_for_coordinator(self, timeout_s: float = 30.0) -> None:
        """FindCoordinator v0 until the broker answers (it creates __consumer_offsets first)."""
        deadline = time.monotonic() + timeout_s
        while True:
            error = self._call(FIND_COORDINATOR, 0, _str(self.group)).take(">h")
            if error == NONE:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"no coordinator for {self.group}: error {error}")
            time.sleep(0.2)

    def join(self, session_timeout_ms: int, rebalance_timeout_ms: int,
             metadata: bytes = b"") -> Joined:
        body = (_str(self.group) + struct.pack(">ii", session_timeout_ms, rebalance_timeout_ms)
                + _str(self.member_id) + _str("consumer") + struct.pack(">i", 1)
                + _str("range") + _bytes(metadata))
        r = self._call(JOIN_GROUP, 1, body)
        error, generation = r.take(">h"), r.take(">i")
        r.string()  # protocol chosen
        leader, member_id = r.string(), r.string()
        members = []
        for _ in range(r.take(">i")):
            members.append(r.string())
            r.blob()
        if error == NONE:
            self.member_id, self.generation = member_id, generation
        return Joined(error, generation, member_id, leader, members)

    def sync(self, assignments: dict[str, bytes]) -> int:
        body = (_str(self.group) + struct.pack(">i", self.generation) + _str(self.member_id)
                + struct.pack(">i", len(assignments)))
        for member, blob in assignments.items():
            body += _str(member) + _bytes(blob)
        r = self._call(SYNC_GROUP, 0, body)
        return r.take(">h")

    def heartbeat(self) -> int:
        body = _str(self.group) + struct.pack(">i", self.generation) + _str(self.member_id)
        return self._call(HEARTBEAT, 0, body).take(">h")

    def commit(self, topic: str, partition: int, offset: int, generation: int | None = None,
               member_id: str | None = None) -> int:
        """OffsetCommit v2 for one partition, as this member (or as the given generation)."""
        gen = self.generation if generation is None else generation
        mid = self.member_id if member_id is None else member_id
        body = (_str(self.group) + struct.pack(">i", gen) + _str(mid) + struct.pack(">q", -1)
                + struct.pack(">i", 1) + _str(topic) + struct.pack(">i", 1)
                + struct.pack(">iq", partition, offset) + _str(""))
        r = self._call(OFFSET_COMMIT, 2, body)
        r.take(">i")  # one topic
        r.string()
        r.take(">i")  # one partition
        r.take(">i")
        return r.take(">h")
