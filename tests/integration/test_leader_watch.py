"""coordination.mode=leader: a member never stops following the assignment znode.

A member re-arms its data watch on the assignment znode with every read. When the next
publication fires that new watch while the read that set it is still returning (the two
publications of a burst, e.g. members coming back one after another after a cut), the member
must still watch the znode afterwards; otherwise it misses every later generation, and a
partition the leader gives it stays without an owner for good.
"""

from __future__ import annotations

import threading
from typing import Any

from connector_helpers import StreamDrain, exactly_one_owner, fast_config, owners, wait_until

from zkconsumer import ZookeeperConsumerConnector
from zkconsumer.admin import produce
from zkconsumer.coordination.record import decode_assignment
from zkconsumer.zk import paths

PARTITIONS = 3


def leader_config(zk_connect: str, group: str, cid: str):
    return fast_config(zk_connect, group, consumer_id=cid, coordination_mode="leader")


class HeldRead:
    """Holds one assignment read of a member after ZooKeeper answered it (and set its watch)
    until that new watch has fired: the interleaving a loaded process produces by chance."""

    def __init__(self, conn: ZookeeperConsumerConnector, path: str) -> None:
        self.path = path
        self.armed = threading.Event()
        self.holding = threading.Event()
        self.fired = threading.Event()
        self.released = threading.Event()
        session = conn._session  # the member's own session object: only its reads are held
        assert session is not None
        self._get = session.get
        session.get = self.get  # type: ignore[method-assign]
        conn.add_event_listener(self.on_event)

    def on_event(self, event: dict[str, Any]) -> None:
        if self.holding.is_set() and event["type"] == "watch_fired" \
                and event.get("path") == self.path:
            self.fired.set()

    def get(self, path: str, watch: Any = None) -> Any:
        result = self._get(path, watch)
        if path == self.path and watch is not None and self.armed.is_set() \
                and not self.holding.is_set():
            self.holding.set()
            self.fired.wait(20)
            self.released.set()
        return result


def test_watch_fired_while_its_read_returns_is_set_again(zk_connect, broker, new_topic, unique,
                                                         kazoo_client):
    topic, group = new_topic(PARTITIONS), unique("g")
    conns: dict[str, ZookeeperConsumerConnector] = {}
    drains: dict[str, StreamDrain] = {}

    def join(cid: str) -> None:
        conns[cid] = ZookeeperConsumerConnector(leader_config(zk_connect, group, cid))
        drains[cid] = StreamDrain(conns[cid].create_message_streams({topic: 1})[topic], name=cid)

    def generation_of(cid: str) -> int | None:
        return conns[cid].metrics()["coordination"]["generation"]

    def published() -> int:
        data, _ = kazoo_client.get(paths.assignment(group))
        return decode_assignment(paths.assignment(group), data).generation

    try:
        # Candidates in this order: a leads, c stands second, b third (b's leaving wakes
        # nobody but the leader). Range over the ids a < b < c: a p0, b p1, c p2.
        for cid in ("a", "c", "b"):
            join(cid)
        wait_until(lambda: owners(kazoo_client, group, topic)
                   == {0: f"{group}_a-0", 1: f"{group}_b-0", 2: f"{group}_c-0"}, 30,
                   "a p0, b p1, c p2")
        assert conns["a"].metrics()["coordination"]["leader"]
        held = HeldRead(conns["c"], paths.assignment(group))
        held.armed.set()
        join("d")  # generation +1, nobody's part changes; c reads it and is held
        assert held.holding.wait(20), "c read the new generation"
        join("e")  # generation +2 fires the watch c's held read has just set
        assert held.released.wait(20), "the watch set by c's held read fired"
        wait_until(lambda: generation_of("c") == published(), 20, "c to adopt generation +2")

        # b leaves: range gives a p0, c p1, d p2. Only the published record tells c so.
        conns.pop("b").shutdown()
        left = drains.pop("b")
        left.stop()
        assert left.errors == []
        live = {f"{group}_{cid}-0" for cid in conns}
        wait_until(lambda: exactly_one_owner(kazoo_client, group, topic, PARTITIONS, live)
                   and owners(kazoo_client, group, topic)
                   == {0: f"{group}_a-0", 1: f"{group}_c-0", 2: f"{group}_d-0"}, 20,
                   "c to claim p1 and d p2 after b left")
        assert generation_of("c") == published()
        values = {p: [f"after-{p}-{i}" for i in range(3)] for p in range(PARTITIONS)}
        for p, vs in values.items():
            produce(broker.bootstrap, topic, vs, partition=p)
        expected = {v.encode() for vs in values.values() for v in vs}
        wait_until(lambda: set().union(*(d.values() for d in drains.values())) >= expected, 20,
                   "every message produced after b left to be delivered")
        assert expected <= drains["c"].values() | drains["a"].values() | drains["d"].values()
        assert {v.encode() for v in values[1]} <= drains["c"].values()
        for d in drains.values():
            d.stop()
        assert {cid: d.errors for cid, d in drains.items()} == dict.fromkeys(drains, [])
    finally:
        for d in drains.values():
            d.stop()
        for c in conns.values():
            c.shutdown()
