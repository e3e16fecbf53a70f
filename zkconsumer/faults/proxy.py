"""A TCP proxy that can delay, hold, drop or cut the traffic of the clients behind it.

Experiments put one consumer behind a proxy to give it a stale or lost view of ZooKeeper (or the
broker) while everybody else sees the truth. No root is needed: it is ordinary sockets on
127.0.0.1. Faults, per proxy:

- latency per direction (``upstream`` = client → server, ``downstream`` = server → client); order is
  kept, so a slow direction delays everything behind it, like a congested link;
- ``pause()``: hold traffic in both directions (buffered, delivered on ``resume()``), which is
  what a long GC pause or a partition that heals looks like to a peer;
- ``blackhole()``: silently drop everything while connections stay open (a dead peer);
- ``close_connections()``: cut every live connection (the peer sees a reset/EOF);
- ``refuse(True)``: new connections are accepted and closed at once (nothing listens).

``downstream_filter`` (optional) builds one filter per connection that sees the server's bytes
before they are delayed or held and returns what to forward (it may hold a partial message back
until the rest arrives); the lab uses it to make a broker advertise the proxy as its address.
``observer`` (optional) builds one :class:`ConnectionObserver` per connection that sees both
directions' bytes as they arrive, before any fault, and changes nothing; the lab uses it to read
the ZooKeeper requests of the clients behind the proxy.

The proxy runs an asyncio loop in one named thread; control methods are thread-safe.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Protocol

log = logging.getLogger(__name__)


class Direction(enum.Enum):
    UPSTREAM = "upstream"      # client -> server
    DOWNSTREAM = "downstream"  # server -> client


class ConnectionObserver(Protocol):
    """Sees one connection's bytes, each direction in order, as the proxy reads them."""

    def client_bytes(self, data: bytes) -> object: ...

    def server_bytes(self, data: bytes) -> object: ...


class Mode(enum.Enum):
    PASS = "pass"
    PAUSED = "paused"
    BLACKHOLE = "blackhole"


@dataclass
class ProxyStats:
    connections: int = 0
    bytes: dict[Direction, int] = field(
        default_factory=lambda: {Direction.UPSTREAM: 0, Direction.DOWNSTREAM: 0})
    dropped: dict[Direction, int] = field(
        default_factory=lambda: {Direction.UPSTREAM: 0, Direction.DOWNSTREAM: 0})


class FaultProxy:
    """Listen on 127.0.0.1 and forward to ``target``; inject faults on demand."""

    def __init__(self, target_host: str, target_port: int, listen_port: int = 0,
                 name: str = "proxy",
                 downstream_filter: Callable[[], Callable[[bytes], bytes]] | None = None,
                 observer: Callable[[], ConnectionObserver] | None = None) -> None:
        self.target = (target_host, target_port)
        self.name = name
        self._downstream_filter = downstream_filter
        self._observer = observer
        self._listen_port = listen_port
        self.port = 0
        self.stats = ProxyStats()
        self._latency = {Direction.UPSTREAM: 0.0, Direction.DOWNSTREAM: 0.0}
        self._mode = Mode.PASS
        self._refuse = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.AbstractServer | None = None
        self._resumed: asyncio.Event | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._ready = threading.Event()

    @classmethod
    def for_address(cls, address: str, name: str = "proxy") -> FaultProxy:
        """A proxy in front of ``host:port`` (the first of a connect string, chroot ignored)."""
        first = address.split(",")[0].split("/")[0]
        host, _, port = first.rpartition(":")
        return cls(host or "127.0.0.1", int(port), name=name)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def mode(self) -> Mode:
        return self._mode

    # --- lifecycle -------------------------------------------------------------------------------

    def start(self) -> FaultProxy:
        self._thread = threading.Thread(target=self._run, name=f"fault-{self.name}", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError(f"fault proxy {self.name} did not start")
        log.info("fault proxy %s: %s -> %s:%d", self.name, self.address, *self.target)
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        self._resumed = asyncio.Event()
        self._resumed.set()
        self._server = loop.run_until_complete(
            asyncio.start_server(self._handle, "127.0.0.1", self._listen_port))
        sock = self._server.sockets[0]
        self.port = int(sock.getsockname()[1])
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def stop(self) -> None:
        loop = self._loop
        if loop is None or self._thread is None:
            return

        async def shutdown() -> None:
            assert self._server is not None
            self._server.close()
            for writer in list(self._writers):
                writer.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        fut = asyncio.run_coroutine_threadsafe(shutdown(), loop)
        try:
            fut.result(5)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            self._thread.join(5)
            self._loop = None

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # --- faults (thread-safe) ---------------------------------------------------------------

    def set_latency(self, upstream_ms: float = 0.0, downstream_ms: float = 0.0) -> None:
        if upstream_ms < 0 or downstream_ms < 0:
            raise ValueError(f"latency must be >= 0 ms, got {upstream_ms}/{downstream_ms}")
        self._latency = {Direction.UPSTREAM: upstream_ms / 1000.0,
                         Direction.DOWNSTREAM: downstream_ms / 1000.0}

    def pause(self) -> None:
        self._set_mode(Mode.PAUSED)

    def resume(self) -> None:
        """Back to normal forwarding; held traffic is delivered in order."""
        self._set_mode(Mode.PASS)

    def blackhole(self) -> None:
        self._set_mode(Mode.BLACKHOLE)

    def heal(self) -> None:
        self.set_latency(0, 0)
        self._refuse = False
        self.resume()

    def refuse(self, on: bool = True) -> None:
        self._refuse = on

    def close_connections(self) -> None:
        loop = self._loop
        if loop is None:
            return

        def close_all() -> None:
            for writer in list(self._writers):
                writer.transport.abort()

        loop.call_soon_threadsafe(close_all)

    def _set_mode(self, mode: Mode) -> None:
        log.info("fault proxy %s: %s -> %s", self.name, self._mode.value, mode.value)
        self._mode = mode
        loop, resumed = self._loop, self._resumed
        if loop is not None and resumed is not None:
            loop.call_soon_threadsafe(resumed.clear if mode is Mode.PAUSED else resumed.set)

    # --- forwarding --------------------------------------------------------------------------

    async def _handle(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        if self._refuse:
            client_w.transport.abort()
            return
        try:
            server_r, server_w = await asyncio.open_connection(*self.target)
        except OSError as exc:
            log.debug("fault proxy %s: upstream connect failed: %s", self.name, exc)
            client_w.transport.abort()
            return
        self.stats.connections += 1
        self._writers.update((client_w, server_w))
        down_filter = self._downstream_filter() if self._downstream_filter else None
        seen = self._observer() if self._observer else None
        pumps = [
            asyncio.ensure_future(self._pump(client_r, server_w, Direction.UPSTREAM,
                                             observe=seen.client_bytes if seen else None)),
            asyncio.ensure_future(self._pump(server_r, client_w, Direction.DOWNSTREAM,
                                             down_filter,
                                             observe=seen.server_bytes if seen else None)),
        ]
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            # The proxy is stopping: the connection ends here. Re-raising would only make
            # asyncio log the cancelled handler as an error for every open connection.
            pass
        finally:
            for task in pumps:
                task.cancel()
            for writer in (client_w, server_w):
                self._writers.discard(writer)
                writer.transport.abort()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    direction: Direction,
                    transform: Callable[[bytes], bytes] | None = None,
                    observe: Callable[[bytes], object] | None = None) -> None:
        """Read, then deliver after the direction's latency and only while not paused."""
        queue: asyncio.Queue[tuple[float, bytes] | None] = asyncio.Queue()

        async def deliver() -> None:
            assert self._resumed is not None
            while True:
                item = await queue.get()
                if item is None:
                    return
                due, data = item
                delay = due - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                await self._resumed.wait()
                if self._mode is Mode.BLACKHOLE:
                    self.stats.dropped[direction] += len(data)
                    continue
                writer.write(data)
                await writer.drain()
                self.stats.bytes[direction] += len(data)

        sender = asyncio.ensure_future(deliver())
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                if observe is not None:
                    observe(data)
                if transform is not None:
                    data = transform(data)
                    if not data:
                        continue
                if self._mode is Mode.BLACKHOLE:
                    self.stats.dropped[direction] += len(data)
                    continue
                await queue.put((time.monotonic() + self._latency[direction], data))
            await queue.put(None)
            await sender
        finally:
            sender.cancel()
