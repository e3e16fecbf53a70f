"""A proxy in front of ZooKeeper that records every operation of the clients behind it.

Members given the tap's address instead of the server's talk to ZooKeeper as before (the fault
proxy forwards every byte unchanged and injects nothing); the tap reads both directions with
:mod:`zkconsumer.lab.herdops.wire` and keeps one timestamped :class:`TapRecord` per request and
per watch notification, with the connection it came on. Clients that do not go through the tap
(the broker, the harness) are not in the records, so they count nothing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from zkconsumer.faults.proxy import FaultProxy
from zkconsumer.lab.herdops.wire import Conversation, WireError, WireOp

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TapRecord:
    """One operation seen on connection ``conn`` (numbered from 0 in the order they opened)
    at ``t`` (``time.monotonic()`` when its bytes arrived at the proxy); a request carries its
    reply's error code once the reply came."""

    t: float
    conn: int
    op: WireOp


class _Observer:
    """One connection's reader; notes (time, connection, index of the op) under the tap's lock."""

    def __init__(self, tap: ZkTap, conn: int) -> None:
        self.tap = tap
        self.conn = conn
        self.talk = Conversation()
        self.broken = False

    def client_bytes(self, data: bytes) -> None:
        self._read(self.talk.client_bytes, data)

    def server_bytes(self, data: bytes) -> None:
        self._read(self.talk.server_bytes, data)

    def _read(self, reader: Callable[[bytes], object], data: bytes) -> None:
        if self.broken:
            return
        now = time.monotonic()
        with self.tap.lock:
            before = len(self.talk.ops)
            try:
                reader(data)
            except WireError as exc:
                # The forwarding goes on; only this connection's count is lost, and said so.
                self.broken = True
                self.tap.unreadable[self.conn] = str(exc)
                log.error("ZooKeeper tap: connection %d unreadable: %s", self.conn, exc)
                return
            self.tap.seen.extend((now, self.conn, i) for i in range(before, len(self.talk.ops)))


class ZkTap:
    """``with ZkTap(zk_connect) as tap:`` members connect to ``tap.address``."""

    def __init__(self, zk_connect: str) -> None:
        self.lock = threading.Lock()
        self.seen: list[tuple[float, int, int]] = []  # (time, connection, index in its ops)
        self.unreadable: dict[int, str] = {}
        self._observers: list[_Observer] = []
        first = zk_connect.split(",")[0].split("/")[0]
        host, _, port = first.rpartition(":")
        self.proxy = FaultProxy(host or "127.0.0.1", int(port), name="zk-tap",
                                observer=self._new_observer)

    def _new_observer(self) -> _Observer:
        with self.lock:
            obs = _Observer(self, len(self._observers))
            self._observers.append(obs)
        return obs

    @property
    def address(self) -> str:
        return self.proxy.address

    def records(self, since: float = float("-inf"), until: float = float("inf")
                ) -> list[TapRecord]:
        """Every record in ``[since, until)``, in arrival order."""
        with self.lock:
            return [TapRecord(t, conn, self._observers[conn].talk.ops[i])
                    for t, conn, i in self.seen if since <= t < until]

    def sessions(self) -> dict[int, int]:
        """connection -> the session it carried (a reconnection opens a new connection in the
        same session)."""
        with self.lock:
            return {o.conn: o.talk.session_id for o in self._observers
                    if o.talk.session_id is not None}

    def last_activity(self) -> float:
        """When the last request or notification other than a ping arrived (-inf: none yet)."""
        with self.lock:
            for t, conn, i in reversed(self.seen):
                if self._observers[conn].talk.ops[i].op != "ping":
                    return t
        return float("-inf")

    def start(self) -> ZkTap:
        self.proxy.start()
        return self

    def stop(self) -> None:
        self.proxy.stop()

    def __enter__(self) -> ZkTap:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
