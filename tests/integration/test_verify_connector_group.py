"""``groups verify`` on a connector-formed group: tampering is caught, a rebalance repairs it."""

from __future__ import annotations

import json
import subprocess
import sys

from connector_helpers import StreamDrain, exactly_one_owner, fast_config, wait_until

from zkconsumer import ZookeeperConsumerConnector
from zkconsumer.zk import codec, paths


def verify(zk_connect: str, group: str) -> tuple[int, dict]:
    out = subprocess.run([sys.executable, "-m", "zkconsumer", "groups", "verify", "--zk",
                          zk_connect, "--group", group, "--json"], capture_output=True,
                         text=True, timeout=60)
    return out.returncode, json.loads(out.stdout)


def test_tampered_owner_is_a_violation_until_the_group_rebalances(zk_connect, broker, new_topic,
                                                                  unique, kazoo_client):
    topic, group = new_topic(4), unique("verify")
    first = ZookeeperConsumerConnector(fast_config(zk_connect, group))
    drains = [StreamDrain(first.create_message_streams({topic: 2})[topic])]
    joiner = None
    try:
        wait_until(lambda: exactly_one_owner(kazoo_client, group, topic, 4), what="ownership")
        assert verify(zk_connect, group) == (0, {"ok": True, "violations": []})

        path = paths.owner(group, topic, 1)
        kazoo_client.delete(path)
        kazoo_client.create(path, codec.encode_owner(f"{group}_intruder-0"), ephemeral=True)
        rc, report = verify(zk_connect, group)
        assert rc == 1
        assert report["violations"] == [{"topic": topic, "partition": 1,
                                         "kind": "owner-not-registered",
                                         "owner": f"{group}_intruder-0"}]

        kazoo_client.delete(path)  # the intruder goes; a new member triggers a rebalance
        joiner = ZookeeperConsumerConnector(fast_config(zk_connect, group))
        drains.append(StreamDrain(joiner.create_message_streams({topic: 2})[topic]))
        wait_until(lambda: verify(zk_connect, group)[0] == 0, timeout=30,
                   what="verify to pass after the rebalance")
        for d in drains:
            d.stop()
        assert [d.errors for d in drains] == [[], []]
    finally:
        for d in drains:
            d.stop()
        for conn in (joiner, first):
            if conn is not None:
                conn.shutdown()
