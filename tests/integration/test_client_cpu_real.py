"""A member's CPU per ZooKeeper request by thread clocks, against a real ZooKeeper server."""

from __future__ import annotations

from zkconsumer.calibration.client_cpu import request_cpu


def test_a_members_request_cpu_counts_its_thread_and_its_connection_thread(zk_connect,
                                                                          kazoo_client):
    measured = request_cpu(zk_connect, samples=50)
    assert [(r.op, r.requests) for r in measured] == [("read", 50), ("write", 50)]
    for r in measured:
        # both threads work on every request: the caller builds it and waits, the
        # connection thread writes it and parses the reply
        assert r.caller_ms > 0 and r.connection_ms > 0
        assert r.cpu_ms == r.caller_ms + r.connection_ms
    # the znodes it wrote are gone again
    assert not [c for c in kazoo_client.get_children("/zkconsumer-calibrate")
                if c.endswith("-thread-cpu")]
