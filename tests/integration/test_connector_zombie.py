"""A member cut off from ZooKeeper: the original's zombie window, and the stop-fetchers policy."""

from __future__ import annotations

import time
from typing import Any

import pytest
from connector_helpers import StreamDrain, fast_config, wait_until

from zkconsumer import ZookeeperConsumerConnector
from zkconsumer.admin import produce
from zkconsumer.faults import FaultProxy
from zkconsumer.zk import paths

# How long an absence is observed: well above the fetch wait (100 ms) and leader backoff (100 ms).
ABSENCE_WINDOW_S = 1.5


@pytest.mark.parametrize("policy", ["legacy", "stop-fetchers"])
def test_member_cut_off_from_zookeeper(policy, zk_connect, broker, new_topic, unique,
                                       kazoo_client):
    topic, group = new_topic(2), unique("g")
    events: list[dict[str, Any]] = []
    with FaultProxy.for_address(zk_connect, name="zk") as proxy:
        cfg = fast_config(proxy.address, group, consumer_id="z",
                          zkconsumer_session_lost_policy=policy)
        conn = ZookeeperConsumerConnector(cfg)
        conn.add_event_listener(events.append)
        try:
            drain = StreamDrain(conn.create_message_streams({topic: 1})[topic])
            produce(broker.bootstrap, topic, ["before"], partition=0)
            wait_until(lambda: b"before" in drain.values(), 30, "a message before the cut")
            reg = paths.consumer_registration(group, f"{group}_z")

            proxy.blackhole()
            wait_until(lambda: kazoo_client.exists(reg) is None, 30,
                       "the server to expire the cut-off member's session")
            if policy == "stop-fetchers":
                wait_until(lambda: any(e["type"] == "fetchers_stopped_on_session_loss"
                                       for e in events), 30, "fetchers stopped on session loss")
            produce(broker.bootstrap, topic, ["during"], partition=0)
            if policy == "legacy":
                # The original ignored disconnection: a member nobody counts keeps delivering.
                wait_until(lambda: b"during" in drain.values(), 30, "zombie delivery")
            else:
                time.sleep(ABSENCE_WINDOW_S)
                assert b"during" not in drain.values(), "no delivery once the session is lost"

            proxy.heal()
            wait_until(lambda: (s := kazoo_client.exists(reg)) is not None
                       and s.ephemeralOwner == (conn.zk_client_id or (0,))[0], 30,
                       "registration in a new session after healing")
            produce(broker.bootstrap, topic, ["after"], partition=1)
            wait_until(lambda: drain.values() >= {b"before", b"during", b"after"}, 30,
                       "every message after healing")
            assert not drain.errors
        finally:
            conn.shutdown()
