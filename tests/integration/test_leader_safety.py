"""coordination.mode=leader on real servers: all-or-nothing claims, fenced commits, no zombie."""

from __future__ import annotations

import threading
import time
from typing import Any

from connector_helpers import StreamDrain, committed, fast_config, owners, wait_until
from kazoo.client import KazooClient

from zkconsumer import ZookeeperConsumerConnector
from zkconsumer.admin import produce
from zkconsumer.faults import FaultProxy
from zkconsumer.zk import paths

# How long an absence is observed: well above the fetch wait (100 ms) and leader backoff (100 ms).
ABSENCE_WINDOW_S = 1.5


def leader_config(zk_connect: str, group: str, **overrides: object):
    return fast_config(zk_connect, group, coordination_mode="leader", **overrides)


def test_claim_is_all_or_nothing_and_waits_for_the_previous_owner(
        zk_connect, broker, new_topic, unique, kazoo_client):
    """A foreign owner znode on one partition holds back the whole claim, with no rollback."""
    topic, group = new_topic(2), unique("g")
    foreign = paths.owner(group, topic, 1)
    kazoo_client.create(foreign, b"someone-else-0", ephemeral=True, makepath=True)
    events: list[dict[str, Any]] = []
    conn = ZookeeperConsumerConnector(leader_config(zk_connect, group, consumer_id="c"))
    conn.add_event_listener(events.append)
    result: list[object] = []
    joiner = threading.Thread(
        target=lambda: result.append(conn.create_message_streams({topic: 1})), daemon=True)
    try:
        joiner.start()
        wait_until(lambda: any(e["type"] == "claim_waiting" and e["path"] == foreign
                               for e in events), 30, "the claim to wait for the foreign owner")
        time.sleep(ABSENCE_WINDOW_S)
        # Nothing was claimed: partition 0 is free but was not taken on its own.
        assert owners(kazoo_client, group, topic) == {1: "someone-else-0"}
        assert not any(e["type"] in ("owner_conflict", "rollback") for e in events)
        kazoo_client.delete(foreign)
        wait_until(lambda: owners(kazoo_client, group, topic)
                   == {0: f"{group}_c-0", 1: f"{group}_c-0"}, 30, "both partitions claimed")
        joiner.join(30)
        assert result, "create_message_streams returned once the claim succeeded"
        assert conn.metrics()["zookeeper"]["requests"]["multi"] >= 2
    finally:
        conn.shutdown()


def test_commit_with_a_stale_generation_is_refused(zk_connect, broker, new_topic, unique,
                                                   kazoo_client):
    """Commits are fenced on the adopted assignment version: a stale member writes nothing."""
    topic, group = new_topic(2), unique("g")
    produce(broker.bootstrap, topic, ["m0", "m1"], partition=0)
    a = ZookeeperConsumerConnector(leader_config(zk_connect, group, consumer_id="a",
                                                 auto_commit_enable=False))
    b: ZookeeperConsumerConnector | None = None
    events: list[dict[str, Any]] = []
    a.add_event_listener(events.append)
    try:
        drain = StreamDrain(a.create_message_streams({topic: 1})[topic])
        wait_until(lambda: drain.values() >= {b"m0", b"m1"}, 30, "a consumes")
        store = a._offsets  # the connector's fenced store
        _, stat = kazoo_client.get(paths.assignment(group))
        stale = stat.version
        # Another member joins: the leader publishes a new version of the assignment.
        b = ZookeeperConsumerConnector(leader_config(zk_connect, group, consumer_id="b"))
        b.create_message_streams({topic: 1})
        wait_until(lambda: kazoo_client.get(paths.assignment(group))[1].version > stale, 30,
                   "a new generation")
        session_id = a.zk_client_id[0]
        infos = [i for i in a._ownership.current.infos.values() if i.partition == 0]
        store.set_fence(stale, session_id)  # as a member that has not seen the new version
        assert store.commit(infos) == {}
        assert committed(kazoo_client, group, topic, 2)[0] == -1
        assert any(e["type"] == "commit_fenced" for e in events)
        current = kazoo_client.get(paths.assignment(group))[1].version
        store.set_fence(current, session_id)
        if infos:  # still a's partition under the new generation: the commit goes through
            assert store.commit(infos)
            assert committed(kazoo_client, group, topic, 2)[0] == 2
    finally:
        a.shutdown()
        if b is not None:
            b.shutdown()


def test_zombie_stops_delivering_and_cannot_commit(zk_connect, broker, new_topic, unique,
                                                   kazoo_client):
    topic, group = new_topic(2), unique("g")
    events: list[dict[str, Any]] = []
    with FaultProxy.for_address(zk_connect, name="zk") as proxy:
        zombie = ZookeeperConsumerConnector(leader_config(proxy.address, group, consumer_id="z",
                                                          auto_commit_enable=False))
        zombie.add_event_listener(events.append)
        other: ZookeeperConsumerConnector | None = None
        try:
            zdrain = StreamDrain(zombie.create_message_streams({topic: 1})[topic])
            other = ZookeeperConsumerConnector(leader_config(zk_connect, group, consumer_id="o"))
            odrain = StreamDrain(other.create_message_streams({topic: 1})[topic])
            wait_until(lambda: len(set(owners(kazoo_client, group, topic).values())) == 2, 30,
                       "both members own a partition")
            zparts = [p for p, o in owners(kazoo_client, group, topic).items()
                      if o == f"{group}_z-0"]
            produce(broker.bootstrap, topic, ["before"], partition=zparts[0])
            wait_until(lambda: b"before" in zdrain.values(), 30, "the zombie consumed")

            proxy.blackhole()
            wait_until(lambda: any(e["type"] == "fetchers_paused_on_disconnect"
                                   for e in events), 30, "fetchers paused on disconnection")
            reg = paths.consumer_registration(group, f"{group}_z")
            wait_until(lambda: kazoo_client.exists(reg) is None, 30, "the zombie's expiry")
            wait_until(lambda: set(owners(kazoo_client, group, topic).values())
                       == {f"{group}_o-0"}, 30, "the survivor to own everything")
            produce(broker.bootstrap, topic, ["during"], partition=zparts[0])
            wait_until(lambda: b"during" in odrain.values(), 30, "the survivor consumes")
            time.sleep(ABSENCE_WINDOW_S)
            assert b"during" not in zdrain.values(), "the zombie delivered after its expiry"
            other.commit_offsets()
            survivor_offsets = committed(kazoo_client, group, topic, 2)

            # Healed, the zombie tries to commit what it consumed in the old generation.
            proxy.heal()
            try:
                zombie.commit_offsets()
            except Exception:  # the old session is gone: refusing by raising is fine too
                pass
            wait_until(lambda: kazoo_client.exists(reg) is not None, 30,
                       "the zombie re-registers in a new session")
            assert committed(kazoo_client, group, topic, 2) == survivor_offsets
            wait_until(lambda: len(set(owners(kazoo_client, group, topic).values())) == 2, 30,
                       "the healed member is given a partition again")
            assert not zdrain.errors and not odrain.errors
        finally:
            zombie.shutdown()
            if other is not None:
                other.shutdown()


def test_new_leader_after_the_leader_crashes(zk_connect, broker, new_topic, unique):
    """The leader's session dies: its successor (the next candidate only) takes over."""
    topic, group = new_topic(4), unique("g")
    conns = [ZookeeperConsumerConnector(leader_config(zk_connect, group, consumer_id=f"c{i}"))
             for i in range(3)]
    try:
        for c in conns:
            c.create_message_streams({topic: 1})
        leader = next(c for c in conns if c.metrics()["coordination"]["leader"])
        rest = [c for c in conns if c is not leader]
        # Expire the leader's session from a second client: what a crash looks like to others.
        sid, pwd = leader.zk_client_id
        thief = KazooClient(hosts=zk_connect, client_id=(sid, pwd))
        thief.start(15)
        thief.stop()
        thief.close()
        wait_until(lambda: sum(c.metrics()["coordination"]["leader"] for c in rest) == 1, 30,
                   "a survivor leads")
        wait_until(lambda: all(c.metrics()["owned_partitions"] >= 1 for c in conns)
                   and sum(c.metrics()["coordination"]["leader"] for c in conns) == 1
                   and not leader.metrics()["coordination"]["leader"], 30,
                   "one leader, and every member owns something again")
    finally:
        for c in conns:
            c.shutdown()


def test_fetchers_pause_while_suspended_and_resume_in_the_same_session(
        zk_connect, broker, new_topic, unique, kazoo_client):
    topic, group = new_topic(1), unique("g")
    events: list[dict[str, Any]] = []
    with FaultProxy.for_address(zk_connect, name="zk") as proxy:
        # The connection is cut and reconnecting refused for less than the session timeout:
        # suspended at once, never expired.
        conn = ZookeeperConsumerConnector(leader_config(proxy.address, group, consumer_id="p",
                                                        zookeeper_session_timeout_ms=8000))
        conn.add_event_listener(events.append)
        try:
            drain = StreamDrain(conn.create_message_streams({topic: 1})[topic])
            session = conn.zk_client_id[0]
            produce(broker.bootstrap, topic, ["before"], partition=0)
            wait_until(lambda: b"before" in drain.values(), 30, "a message before the cut")
            proxy.refuse()
            proxy.close_connections()
            wait_until(lambda: any(e["type"] == "fetchers_paused_on_disconnect"
                                   for e in events), 5, "fetchers paused while suspended")
            produce(broker.bootstrap, topic, ["while-suspended"], partition=0)
            time.sleep(ABSENCE_WINDOW_S)
            assert b"while-suspended" not in drain.values(), "delivered while suspended"
            proxy.heal()
            wait_until(lambda: any(e["type"] == "fetchers_resumed" for e in events), 30,
                       "fetchers resumed when the same session came back")
            assert conn.zk_client_id[0] == session, "the same session, not a new one"
            wait_until(lambda: b"while-suspended" in drain.values(), 30,
                       "the message produced during the suspension, after resuming")
            assert owners(kazoo_client, group, topic) == {0: f"{group}_p-0"}
            assert not drain.errors
        finally:
            conn.shutdown()
