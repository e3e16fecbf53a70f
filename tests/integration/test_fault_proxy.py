"""The fault proxy against a real echo peer and a real ZooKeeper."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from kazoo.client import KazooClient, KazooState

from zkconsumer.faults import Direction, FaultProxy


@pytest.fixture
def echo_server():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    stop = threading.Event()

    def serve() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            threading.Thread(target=_echo, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield srv.getsockname()[1]
    stop.set()
    thread.join(2)
    srv.close()


def _echo(conn: socket.socket) -> None:
    with conn:
        while True:
            try:
                data = conn.recv(65536)
            except OSError:
                return
            if not data:
                return
            conn.sendall(data)


def _roundtrip(sock: socket.socket, payload: bytes, timeout: float = 5.0) -> tuple[bytes, float]:
    sock.settimeout(timeout)
    started = time.monotonic()
    sock.sendall(payload)
    got = b""
    while len(got) < len(payload):
        chunk = sock.recv(65536)
        if not chunk:
            break
        got += chunk
    return got, time.monotonic() - started


def _one_way(sender: socket.socket, receiver: socket.socket, payload: bytes) -> float:
    """Seconds from sending ``payload`` on one socket to its last byte arriving on the other."""
    receiver.settimeout(5.0)
    started = time.monotonic()
    sender.sendall(payload)
    got = b""
    while len(got) < len(payload):
        chunk = receiver.recv(65536)
        assert chunk, "the connection ended"
        got += chunk
    assert got == payload
    return time.monotonic() - started


def test_forwards_unchanged_and_adds_latency_per_direction():
    """A delayed byte cannot arrive before its delay: each direction takes at least the latency
    set on it, measured one way at a time (lower bounds only: how fast an undelayed byte goes
    depends on the machine). A proxy delaying the wrong direction fails the first pair."""
    with socket.create_server(("127.0.0.1", 0)) as server, \
            FaultProxy("127.0.0.1", server.getsockname()[1]) as proxy, \
            socket.create_connection(("127.0.0.1", proxy.port)) as client:
        server.settimeout(5.0)
        peer, _ = server.accept()
        with peer:
            _one_way(client, peer, b"hello")
            _one_way(peer, client, b"hello back")
            for upstream_ms, downstream_ms in ((300, 0), (0, 300), (150, 100)):
                proxy.set_latency(upstream_ms=upstream_ms, downstream_ms=downstream_ms)
                up = _one_way(client, peer, b"up")
                down = _one_way(peer, client, b"down")
                assert (up >= upstream_ms / 1000, down >= downstream_ms / 1000) == (True, True), (
                    upstream_ms, downstream_ms, up, down)


def test_pause_holds_traffic_and_resume_delivers_it_in_order(echo_server):
    with FaultProxy("127.0.0.1", echo_server) as proxy:
        with socket.create_connection(("127.0.0.1", proxy.port)) as sock:
            proxy.pause()
            sock.sendall(b"one;")
            sock.sendall(b"two;")
            sock.settimeout(0.5)
            with pytest.raises(socket.timeout):
                sock.recv(100)
            proxy.resume()
            got, _ = _roundtrip(sock, b"three;")
            while got.count(b";") < 3:
                got += sock.recv(100)
            assert got == b"one;two;three;"


def test_blackhole_drops_silently_and_close_cuts_connections(echo_server):
    with FaultProxy("127.0.0.1", echo_server) as proxy:
        with socket.create_connection(("127.0.0.1", proxy.port)) as sock:
            proxy.blackhole()
            sock.sendall(b"lost")
            sock.settimeout(0.5)
            with pytest.raises(socket.timeout):
                sock.recv(100)
            assert proxy.stats.dropped[Direction.UPSTREAM] == len(b"lost")
            proxy.heal()
            got, _ = _roundtrip(sock, b"back")
            assert got == b"back", "the link works again and the dropped bytes stay dropped"
            proxy.close_connections()
            sock.settimeout(5)
            assert sock.recv(100) == b"", "the peer sees the connection end"


def test_refuse_closes_new_connections(echo_server):
    with FaultProxy("127.0.0.1", echo_server) as proxy:
        proxy.refuse(True)
        with socket.create_connection(("127.0.0.1", proxy.port)) as sock:
            sock.settimeout(5)
            try:
                assert sock.recv(10) == b""
            except ConnectionResetError:
                pass


def test_zookeeper_client_behind_a_paused_proxy_is_suspended_then_recovers(zk_connect):
    with FaultProxy.for_address(zk_connect, name="zk") as proxy:
        client = KazooClient(hosts=proxy.address, timeout=4.0)
        states: list[str] = []
        client.add_listener(lambda s: states.append(s))
        client.start(timeout=15)
        session = client.client_id
        try:
            proxy.pause()
            deadline = time.monotonic() + 15
            while KazooState.SUSPENDED not in states:
                assert time.monotonic() < deadline, f"never suspended: {states}"
                time.sleep(0.05)
            proxy.resume()
            deadline = time.monotonic() + 15
            while client.state != KazooState.CONNECTED:
                assert time.monotonic() < deadline, f"never reconnected: {states}"
                time.sleep(0.05)
            assert client.client_id[0] == session[0], "a short pause keeps the same session"
            assert KazooState.LOST not in states
            assert client.exists("/") is not None
        finally:
            client.stop()
            client.close()
