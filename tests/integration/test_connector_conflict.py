"""Split brain, forced: a member whose view is stale still holds partitions another claims."""

from __future__ import annotations

import threading
from typing import Any

from connector_helpers import exactly_one_owner, fast_config, owners, wait_until

from zkconsumer import ZookeeperConsumerConnector
from zkconsumer.zk import paths


class GateBeforeRelease:
    """A rebalance listener that holds its member before it releases anything, once armed."""

    def __init__(self) -> None:
        self.armed = threading.Event()
        self.open = threading.Event()
        self.held = threading.Event()
        self.released: list[dict[str, set[int]]] = []
        self.started: list[tuple[str, dict[str, dict[int, str]]]] = []

    def before_releasing_partitions(self, partition_ownership: dict[str, set[int]]) -> None:
        self.released.append(partition_ownership)
        if self.armed.is_set():
            self.held.set()
            assert self.open.wait(30), "gate never opened"

    def before_starting_fetchers(self, consumer_id: str,
                                 assignment: dict[str, dict[int, str]]) -> None:
        self.started.append((consumer_id, assignment))


def test_owner_conflict_rolls_back_every_claim_of_the_attempt_and_the_retry_succeeds(
        zk_connect, broker, new_topic, unique, kazoo_client):
    shared, only_b, group = new_topic(4), new_topic(4), unique("g")
    gate = GateBeforeRelease()
    a = ZookeeperConsumerConnector(fast_config(zk_connect, group, consumer_id="a"))
    b = ZookeeperConsumerConnector(fast_config(zk_connect, group, consumer_id="b"))
    b_events: list[dict[str, Any]] = []
    at_rollback: list[dict[int, str]] = []

    def on_b_event(event: dict[str, Any]) -> None:
        b_events.append(event)
        if event["type"] == "rollback" and not at_rollback:
            # Runs on b's rebalancer thread, before its backoff: the rollback is complete here.
            at_rollback.append(owners(kazoo_client, group, only_b))
            gate.open.set()

    try:
        a.set_consumer_rebalance_listener(gate)
        a.create_message_streams({shared: 1})
        assert owners(kazoo_client, group, shared) == {p: f"{group}_a-0" for p in range(4)}
        assert gate.released == [{}]  # the first rebalance releases nothing
        assert gate.started == [(f"{group}_a", {shared: {p: f"{group}_a-0" for p in range(4)}})]
        gate.armed.set()  # from now on a keeps its old partitions until b has rolled back

        b.add_event_listener(on_b_event)
        b.create_message_streams({shared: 1, only_b: 1})  # returns after b's retry succeeded

        conflicts = [e for e in b_events if e["type"] == "owner_conflict"]
        rollbacks = [e for e in b_events if e["type"] == "rollback"]
        assert conflicts and {e["topic"] for e in conflicts} == {shared}
        assert {(e["partition"], e["owner"]) for e in conflicts[:2]} == {
            (2, f"{group}_a-0"), (3, f"{group}_a-0")}
        assert sorted(rollbacks[0]["partitions"]) == [f"{only_b}/{p}" for p in range(4)]
        assert at_rollback == [{}], "every owner znode created by the failed attempt is gone"
        attempts = [e for e in b_events if e["type"] == "attempt_started"]
        assert len(attempts) >= 2
        assert any(e["type"] == "rebalance_succeeded" for e in b_events)

        wait_until(lambda: exactly_one_owner(kazoo_client, group, shared, 4)
                   and owners(kazoo_client, group, shared) == {
                       0: f"{group}_a-0", 1: f"{group}_a-0", 2: f"{group}_b-0", 3: f"{group}_b-0"},
                   20, "the shared topic split between a and b")
        assert owners(kazoo_client, group, only_b) == {p: f"{group}_b-0" for p in range(4)}
        assert b.metrics()["rollbacks"] >= 1 and b.metrics()["owner_conflicts"] >= 2
        assert kazoo_client.exists(paths.owner(group, only_b, 0)) is not None
    finally:
        gate.open.set()
        b.shutdown()
        a.shutdown()


def test_owner_znode_with_our_thread_id_in_another_session_is_not_adopted(
        zk_connect, broker, new_topic, unique, kazoo_client):
    """An owner znode holding our thread id but kept alive by another session (our previous
    one, not yet reaped) would vanish under us: it is a conflict until it goes, then claimed
    in our own session, so the partition is never fetched without an owner znode."""
    from kazoo.client import KazooClient

    topic, group = new_topic(1), unique("g")
    owner_path = paths.owner(group, topic, 0)
    other = KazooClient(hosts=zk_connect)
    other.start(timeout=15)
    other.create(owner_path, f"{group}_c-0".encode(), ephemeral=True, makepath=True)
    events: list[dict[str, Any]] = []
    conn = ZookeeperConsumerConnector(fast_config(zk_connect, group, consumer_id="c"))
    conn.add_event_listener(events.append)
    closer = threading.Timer(1.5, lambda: (other.stop(), other.close()))
    closer.start()
    try:
        conn.create_message_streams({topic: 1})
        wait_until(lambda: (kazoo_client.exists(owner_path) or None) is not None
                   and kazoo_client.exists(owner_path).ephemeralOwner == conn.zk_client_id[0],
                   30, "the partition claimed in the connector's own session")
        assert any(e["type"] == "owner_conflict" for e in events), \
            "the other session's znode must not be adopted"
        assert owners(kazoo_client, group, topic) == {0: f"{group}_c-0"}
    finally:
        closer.join()
        conn.shutdown()
