"""The embedded ZooKeeper and ensemble are real servers with the settings experiments rely on."""

from __future__ import annotations

import sys
import time

import pytest
from kazoo.client import KazooClient

from zkconsumer.errors import JavaNotFound, ServerError
from zkconsumer.lab.mntr import PACKETS_PER_MNTR, RECEIVED, PingRate, read_mntr, server_requests
from zkconsumer.testing import EmbeddedEnsemble, EmbeddedZooKeeper
from zkconsumer.testing._process import ManagedProcess, free_port


def _client(connect: str, timeout: float = 10.0) -> KazooClient:
    client = KazooClient(hosts=connect, timeout=timeout)
    client.start(timeout=15)
    return client


def test_server_answers_four_letter_words_and_keeps_data_across_restart():
    with EmbeddedZooKeeper() as zk:
        assert "zk_server_state\tstandalone" in zk.four_letter("mntr")
        _measure_the_packets_the_herd_takes_out(zk.connect_string)
        client = _client(zk.connect_string)
        client.create("/kept", b"value")
        client.stop()
        zk.restart()
        client = _client(zk.connect_string)
        assert client.get("/kept")[0] == b"value"
        client.stop()
        data_dir = zk.data_dir
    assert not data_dir.exists(), "a temporary data dir must be removed on exit"


def _measure_the_packets_the_herd_takes_out(connect: str) -> None:
    """What ``lab/mntr.py`` subtracts from ``zk_packets_received``, measured on a server no
    other client uses: two back-to-back ``mntr`` calls differ by ``PACKETS_PER_MNTR``; a
    session's connect and its close are one packet each; what is left is the requests."""
    readings = [read_mntr(connect).get(RECEIVED) for _ in range(3)]
    assert [b - a for a, b in zip(readings, readings[1:], strict=False)] == [PACKETS_PER_MNTR] * 2
    before = read_mntr(connect)
    client = _client(connect, timeout=30.0)  # pings only after 10 s idle: none in the window
    for i in range(3):
        client.create(f"/counted-{i}")
    client.stop()  # sends closeSession and waits for its answer
    client.close()
    after = read_mntr(connect)
    counted = server_requests(before, after, PingRate(0.0, 0.0, 0), sessions_opened=1,
                              sessions_closed=1)
    assert (counted.packets_received, counted.requests) == (1 + 3 + 1 + PACKETS_PER_MNTR, 3)


@pytest.mark.parametrize("asked", [1.0, 60.0])
def test_session_timeouts_from_1_to_60_s_are_granted_as_asked(zk_server, asked):
    client = KazooClient(hosts=zk_server.connect_string, timeout=asked)
    client.start(timeout=15)
    try:
        session = f"sid=0x{client.client_id[0]:x}"
        line = next(x for x in zk_server.four_letter("cons").splitlines() if session in x)
        granted = int(line.split(",to=")[1].split(",")[0])  # the server's own view, in ms
        assert granted == int(asked * 1000)
    finally:
        client.stop()


def test_occupied_port_is_a_clear_error(zk_server):
    port = int(zk_server.connect_string.rsplit(":", 1)[1])
    with pytest.raises(ServerError, match=f"port {port}.*already in use"):
        EmbeddedZooKeeper(port=port)


def test_missing_java_is_one_clear_line(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(JavaNotFound) as err:
        EmbeddedZooKeeper().start()
    assert "java not found" in str(err.value)
    assert "\n" not in str(err.value)


def test_server_that_never_becomes_ready_reports_its_log_tail(tmp_path):
    script = ("import sys, time; print('listening nowhere, config broken', flush=True); "
              "time.sleep(60)")
    proc = ManagedProcess("stuck", [sys.executable, "-c", script], tmp_path / "stuck.log")
    proc.start()
    with pytest.raises(ServerError) as err:
        proc.wait_until(lambda: False, timeout=1.5, what="the stuck server")
    assert "did not become ready within 2 s" in str(err.value)
    assert "listening nowhere, config broken" in str(err.value)
    assert not proc.alive(), "a server that failed to start must not be left running"


def test_server_that_dies_at_start_reports_exit_code_and_log(tmp_path):
    script = "import sys; print('bad option -x'); sys.exit(3)"
    proc = ManagedProcess("dies", [sys.executable, "-c", script], tmp_path / "dies.log")
    proc.start()
    with pytest.raises(ServerError, match=r"exited with code 3(.|\n)*bad option -x"):
        proc.wait_until(lambda: False, timeout=10, what="the dying server")


def test_ensemble_keeps_serving_after_its_leader_is_killed():
    with EmbeddedEnsemble(size=3) as ensemble:
        client = _client(ensemble.connect_string, timeout=10.0)
        client.create("/before", b"1")
        leader = ensemble.leader_id()
        ensemble.kill(leader)
        deadline = time.monotonic() + 30
        while True:
            try:
                client.create("/after", b"2")
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        new_leader = ensemble.leader_id()
        assert new_leader != leader
        assert client.get("/before")[0] == b"1"
        assert client.get("/after")[0] == b"2"
        ensemble.start(leader)
        assert ensemble.mode(leader) == "follower"
        client.stop()


def test_free_port_is_bindable():
    port = free_port()
    assert 1024 < port < 65536
