"""Owner claims and releases that wait through their session's expiry never run in the next one.

The scenario of the chaos soak, made deterministic: a member's connection drops while it is
releasing (or claiming) an owner znode, its session expires meanwhile, another member claims the
partition, and then the member reconnects. A delete by path retried in the new session would
remove the other member's claim and leave it fetching a partition nobody owns.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from connector_helpers import wait_until
from kazoo.exceptions import SessionExpiredError
from test_connector_session import expire_session

from zkconsumer.faults import FaultProxy
from zkconsumer.zk.session import ZkSession


def _in_thread(fn: Any) -> tuple[threading.Thread, dict[str, Any]]:
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = fn()
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            outcome["error"] = exc
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


@contextlib.contextmanager
def _member(zk_connect: str, session_timeout_ms: int,
            kind: type[ZkSession] = ZkSession) -> Iterator[tuple[FaultProxy, Any, int]]:
    """A member's session behind its own fault proxy: ``(proxy, session, session id)``."""
    proxy = FaultProxy.for_address(zk_connect, name="member").start()
    session = kind(proxy.address, session_timeout_ms=session_timeout_ms,
                   connection_timeout_ms=10000, name="member")
    try:
        session.start()
        sid = session.session_id
        assert sid is not None
        yield proxy, session, sid
    finally:
        session.close()
        proxy.stop()


@pytest.mark.parametrize("operation", ["release", "claim"])
def test_request_waiting_through_an_expiry_is_not_sent_in_the_new_session(
        zk_connect, kazoo_client, unique, operation):
    path = f"/{unique('bound')}/owners/t/0"
    kazoo_client.ensure_path(path.rsplit("/", 1)[0])
    with _member(zk_connect, 4000) as (proxy, session, old):
        if operation == "release":
            session.create_ephemeral_in_session(path, b"member-0", old)
        client_id = session.client_id
        op = "delete" if operation == "release" else "create"
        issued = session.counter.snapshot()["requests"][op]

        # The member is cut off; its request waits in the client for a reconnection.
        proxy.refuse(True)
        proxy.close_connections()
        wait_until(lambda: not session.connected, 10, "the member to lose its connection")
        if operation == "release":
            thread, outcome = _in_thread(lambda: session.delete_in_session(path, old))
        else:
            thread, outcome = _in_thread(
                lambda: session.create_ephemeral_in_session(path, b"member-0", old))
        wait_until(lambda: session.counter.snapshot()["requests"][op] > issued, 10,
                   "the request to be issued")
        time.sleep(0.3)
        assert thread.is_alive(), f"the {operation} should wait for a reconnection: {outcome}"

        # Its session ends, and another member claims the partition.
        expire_session(zk_connect, client_id)
        kazoo_client.create(path, b"other-0", ephemeral=True)
        other = kazoo_client.client_id[0]

        proxy.refuse(False)
        thread.join(30)
        assert not thread.is_alive()
        assert isinstance(outcome.get("error"), SessionExpiredError), outcome
        data, stat = kazoo_client.get(path)
        assert (data, stat.ephemeralOwner) == (b"other-0", other), \
            "the other member's claim must survive the late request"
        wait_until(lambda: session.session_id not in (None, old), 30, "a new session")
        # The member itself works normally in its new session.
        assert session.get(path)[0] == b"other-0"


def test_a_release_lost_with_its_connection_is_not_repeated_over_a_new_claim(
        zk_connect, kazoo_client, unique):
    """The delete reaches the server and is applied, its answer is lost with the connection,
    another member claims the partition, and the same session (still alive) reconnects: the
    retried release must not delete the other member's claim."""
    path = f"/{unique('lost-answer')}/owners/t/0"
    kazoo_client.ensure_path(path.rsplit("/", 1)[0])
    with _member(zk_connect, 6000) as (proxy, session, sid):
        session.create_ephemeral_in_session(path, b"member-0", sid)

        proxy.set_latency(downstream_ms=3000)  # the server's answers are late
        thread, outcome = _in_thread(lambda: session.delete_in_session(path, sid))
        wait_until(lambda: kazoo_client.exists(path) is None, 10, "the delete to be applied")
        kazoo_client.create(path, b"other-0", ephemeral=True)
        other = kazoo_client.client_id[0]
        proxy.close_connections()  # ...and the answer is lost with its connection
        proxy.set_latency(0, 0)

        thread.join(30)
        assert not thread.is_alive()
        assert outcome == {"result": False}, outcome
        assert session.session_id == sid, "the member's session survived the reconnection"
        data, stat = kazoo_client.get(path)
        assert (data, stat.ephemeralOwner) == (b"other-0", other), \
            "the other member's claim must survive the retried release"


def test_a_leader_release_lost_with_its_connection_is_not_repeated_over_the_next_owner(
        zk_connect, kazoo_client, unique):
    """Leader mode releases with one multi (last commit + owner deletion). Its answer is lost
    with the connection after it was applied, and the next owner claims the partition and
    commits: the retried release must neither delete that claim nor write its older offset."""
    from zkconsumer.events import EventBus
    from zkconsumer.identity import TopicPartition
    from zkconsumer.metrics import RebalanceMetrics
    from zkconsumer.offsets.fenced import FencedOffsetStore
    from zkconsumer.zk import codec, paths
    from zkconsumer.zk.multi import MultiSession

    group, topic = unique("g"), "t"
    owner, offset = paths.owner(group, topic, 0), paths.offset(group, topic, 0)
    kazoo_client.ensure_path(owner.rsplit("/", 1)[0])
    with _member(zk_connect, 6000, MultiSession) as (proxy, session, sid):
        session.create_ephemeral_in_session(owner, b"member-0", sid)
        kazoo_client.create(offset, codec.encode_offset(3), makepath=True)
        store = FencedOffsetStore(session, group, EventBus("member"), RebalanceMetrics())
        assert store.read([TopicPartition(topic, 0)]) == {TopicPartition(topic, 0): 3}

        proxy.set_latency(downstream_ms=1500)  # late answers, inside the ping timeout
        thread, outcome = _in_thread(
            lambda: store.release({TopicPartition(topic, 0): 5}, sid))
        wait_until(lambda: kazoo_client.exists(owner) is None, 10, "the release to be applied")
        assert codec.decode_offset(offset, kazoo_client.get(offset)[0]) == 5
        kazoo_client.create(owner, b"next-0", ephemeral=True)  # the next owner claims...
        kazoo_client.set(offset, codec.encode_offset(9))     # ...and commits
        proxy.close_connections()
        proxy.set_latency(0, 0)

        thread.join(30)
        assert not thread.is_alive()
        assert outcome == {"result": None}, outcome
        assert session.session_id == sid
        assert kazoo_client.get(owner)[0] == b"next-0"
        assert codec.decode_offset(offset, kazoo_client.get(offset)[0]) == 9
