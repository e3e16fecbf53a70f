"""Topic changes: a topic grows, and a wildcard subscription finds a new matching topic."""

from __future__ import annotations

import json
from typing import Any

from connector_helpers import StreamDrain, exactly_one_owner, fast_config, owners, wait_until

from zkconsumer import Whitelist, ZookeeperConsumerConnector
from zkconsumer.admin import add_partitions, create_topic, produce
from zkconsumer.zk import paths


def test_added_partitions_are_picked_up_by_a_rebalance(zk_connect, broker, new_topic, unique,
                                                      kazoo_client):
    topic = new_topic(4, broker_partitions=8)
    group = unique("g")
    a = ZookeeperConsumerConnector(fast_config(zk_connect, group, consumer_id="a"))
    b = ZookeeperConsumerConnector(fast_config(zk_connect, group, consumer_id="b"))
    a_events: list[dict[str, Any]] = []
    a.add_event_listener(a_events.append)
    try:
        drains = [StreamDrain(c.create_message_streams({topic: 1})[topic]) for c in (a, b)]
        wait_until(lambda: exactly_one_owner(kazoo_client, group, topic, 4), 20, "4 owners")
        add_partitions(zk_connect, topic, 8, bootstrap=broker.bootstrap)
        wait_until(lambda: exactly_one_owner(kazoo_client, group, topic, 8), 30,
                   "owners of the 8 partitions")
        assert owners(kazoo_client, group, topic) == {
            **{p: f"{group}_a-0" for p in range(4)}, **{p: f"{group}_b-0" for p in range(4, 8)}}
        for p in range(8):
            produce(broker.bootstrap, topic, [f"p{p}-{i}" for i in range(3)], partition=p)
        expected = {f"p{p}-{i}".encode() for p in range(8) for i in range(3)}
        wait_until(lambda: drains[0].values() | drains[1].values() >= expected, 30,
                   "messages from old and new partitions")
        assert any(e["type"] == "rebalance_started" and "topic_data" in e["reasons"]
                   for e in a_events), "the topic's data watch triggered the rebalance"
        for d in drains:
            d.stop()
            assert d.errors == []
    finally:
        a.shutdown()
        b.shutdown()


def test_wildcard_subscription_picks_up_a_new_matching_topic(zk_connect, broker, unique,
                                                             kazoo_client):
    prefix = unique("wild").replace("-", "_")
    first, other = f"{prefix}.orders", f"{prefix}x.other"
    create_topic(zk_connect, first, 2, bootstrap=broker.bootstrap)
    create_topic(zk_connect, other, 2, bootstrap=broker.bootstrap)
    group = unique("g")
    regex = f"{prefix}\\..*"
    conn = ZookeeperConsumerConnector(fast_config(zk_connect, group, consumer_id="w"))
    try:
        streams = conn.create_message_streams_by_filter(Whitelist(regex), num_streams=2)
        assert len(streams) == 2
        data, _ = kazoo_client.get(paths.consumer_registration(group, f"{group}_w"))
        assert data.decode().startswith(
            '{"version":1,"subscription":{"' + regex.replace("\\", "\\\\") + '":2},'
            '"pattern":"white_list","timestamp":"')
        assert json.loads(data)["subscription"] == {regex: 2}
        assert owners(kazoo_client, group, first) == {0: f"{group}_w-0", 1: f"{group}_w-1"}
        assert owners(kazoo_client, group, other) == {}
        drain = StreamDrain(streams)
        second = f"{prefix}.payments"
        create_topic(zk_connect, second, 3, bootstrap=broker.bootstrap)
        wait_until(lambda: exactly_one_owner(kazoo_client, group, second, 3), 30,
                   "owners of the new matching topic")
        produce(broker.bootstrap, first, ["o1", "o2"])
        produce(broker.bootstrap, second, ["p1", "p2", "p3"])
        produce(broker.bootstrap, other, ["x1"])
        wait_until(lambda: drain.values() >= {b"o1", b"o2", b"p1", b"p2", b"p3"}, 30,
                   "messages of both matching topics")
        assert b"x1" not in drain.values()
        assert {m.topic for m in drain.messages} == {first, second}
        drain.stop()
        assert drain.errors == []
    finally:
        conn.shutdown()
