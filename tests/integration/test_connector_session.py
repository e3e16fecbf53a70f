"""Session expiry of a live member: it registers again, rebalances and keeps consuming."""

from __future__ import annotations

from typing import Any

from connector_helpers import StreamDrain, exactly_one_owner, fast_config, owners, wait_until
from kazoo.client import KazooClient

from zkconsumer import ZookeeperConsumerConnector
from zkconsumer.admin import produce
from zkconsumer.zk import paths


def expire_session(zk_connect: str, client_id: tuple[int, bytes]) -> None:
    """Open the same session from a second client and close it: the server ends it for real."""
    twin = KazooClient(hosts=zk_connect, client_id=client_id)
    twin.start(timeout=15)
    twin.stop()
    twin.close()


def test_expired_member_registers_again_rebalances_and_keeps_consuming(
        zk_connect, broker, new_topic, unique, kazoo_client):
    topic, group = new_topic(4), unique("g")
    events: list[dict[str, Any]] = []
    conn = ZookeeperConsumerConnector(fast_config(zk_connect, group, consumer_id="c"))
    conn.add_event_listener(events.append)
    reg_path = paths.consumer_registration(group, f"{group}_c")
    try:
        drain = StreamDrain(conn.create_message_streams({topic: 2})[topic])
        produce(broker.bootstrap, topic, [f"before-{i}" for i in range(20)])
        wait_until(lambda: len(drain.values()) == 20, 30, "messages before the expiry")
        _, stat = kazoo_client.get(reg_path)
        old_session = stat.ephemeralOwner
        client_id = conn.zk_client_id
        assert client_id is not None and client_id[0] == old_session
        rebalances_before = conn.metrics()["rebalances"]

        expire_session(zk_connect, client_id)

        def re_registered() -> bool:
            stat = kazoo_client.exists(reg_path)
            return stat is not None and stat.ephemeralOwner not in (0, old_session)
        wait_until(re_registered, 30, "a registration in a new session")
        wait_until(lambda: conn.metrics()["rebalances"] > rebalances_before, 30,
                   "a rebalance after the new session")

        def owned_in_new_session() -> bool:
            # A second rebalance (the registration's own child event) may still release and
            # reclaim, so the owners are read as one condition rather than asserted one by one.
            if not exactly_one_owner(kazoo_client, group, topic, 4,
                                     {f"{group}_c-0", f"{group}_c-1"}):
                return False
            stats = [kazoo_client.exists(paths.owner(group, topic, p)) for p in range(4)]
            return all(s is not None and s.ephemeralOwner == conn.zk_client_id[0]
                       for s in stats)
        wait_until(owned_in_new_session, 30, "ownership re-established in the new session")
        states = [(e["state"], e["new_session"]) for e in events if e["type"] == "session_state"]
        assert ("LOST", False) in states and ("CONNECTED", True) in states
        lost_at = next(i for i, e in enumerate(events)
                       if e["type"] == "session_state" and e["state"] == "LOST")
        after = events[lost_at:]
        assert any(e["type"] == "registered" for e in after)
        assert any(e["type"] == "rebalance_succeeded" and "new_session" in e["reasons"]
                   for e in after), "a rebalance for the new session"

        produce(broker.bootstrap, topic, [f"after-{i}" for i in range(20)])
        expected = {f"{t}-{i}".encode() for t in ("before", "after") for i in range(20)}
        wait_until(lambda: drain.values() >= expected, 30, "messages after the expiry")
        assert not drain.errors
        wait_until(lambda: owners(kazoo_client, group, topic).keys() == {0, 1, 2, 3}, 30,
                   "every partition owned at the end")
    finally:
        conn.shutdown()
