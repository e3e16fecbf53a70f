"""coordination.mode=leader on real servers: a group forms, members join, leave and crash."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

from connector_helpers import (
    StreamDrain,
    committed,
    exactly_one_owner,
    fast_config,
    owners,
    wait_until,
)

from zkconsumer import ZookeeperConsumerConnector
from zkconsumer.admin import produce
from zkconsumer.admin.groups import verify_group
from zkconsumer.coordination.record import decode_assignment
from zkconsumer.zk import paths

PARTITIONS = 6

# A member in its own process (so that it can be SIGKILLed: no cleanup at all).
MEMBER = r"""
import sys, threading
from zkconsumer import ConsumerTimeoutException, ZookeeperConsumerConnector
from zkconsumer.config import ConsumerConfig
zk, group, topic, cid = sys.argv[1:5]
conn = ZookeeperConsumerConnector(ConsumerConfig({
    "zookeeper.connect": zk, "group.id": group, "consumer.id": cid,
    "auto.offset.reset": "smallest", "consumer.timeout.ms": 200,
    "zookeeper.session.timeout.ms": 4000, "rebalance.backoff.ms": 700,
    "rebalance.max.retries": 10, "auto.commit.interval.ms": 500,
    "refresh.leader.backoff.ms": 100, "coordination.mode": "leader"}))
it = iter(conn.create_message_streams({topic: 1})[topic][0])
print("READY", flush=True)
while True:
    try:
        m = next(it)
    except ConsumerTimeoutException:
        continue
    sys.stdout.write("MSG " + m.message.decode() + "\n")
    sys.stdout.flush()
"""


class MemberProcess:
    def __init__(self, zk_connect: str, group: str, topic: str, consumer_id: str) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", MEMBER, zk_connect, group, topic, consumer_id],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        self.values: set[bytes] = set()
        self.ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("READY"):
                self.ready.set()
            elif line.startswith("MSG "):
                self.values.add(line[4:].rstrip("\n").encode())

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self._reader.join(5)


def leader_config(zk_connect: str, group: str, **overrides: object):
    return fast_config(zk_connect, group, coordination_mode="leader", **overrides)


def published(client, group: str):
    data, stat = client.get(paths.assignment(group))
    return decode_assignment(paths.assignment(group), data), stat


def test_leader_group_join_leave_crash_keeps_one_owner_and_loses_nothing(
        zk_connect, broker, new_topic, unique, kazoo_client):
    topic, group = new_topic(PARTITIONS), unique("g")
    produced: set[bytes] = set()
    log_end = {p: 0 for p in range(PARTITIONS)}

    def produce_round(tag: str, n: int = 3) -> None:
        for p in range(PARTITIONS):
            produce(broker.bootstrap, topic, [f"{tag}-{p}-{i}" for i in range(n)], partition=p)
            log_end[p] += n
        produced.update(f"{tag}-{p}-{i}".encode() for p in range(PARTITIONS) for i in range(n))

    conns = [ZookeeperConsumerConnector(leader_config(zk_connect, group, consumer_id=f"c{i}"))
             for i in (1, 2, 3)]
    drains: list[StreamDrain] = []
    member: MemberProcess | None = None

    def threads_of(*cs: ZookeeperConsumerConnector) -> set[str]:
        return {f"{c.consumer_id}-0" for c in cs}

    def received() -> set[bytes]:
        got = set().union(*(d.values() for d in drains))
        return got | (member.values if member is not None else set())

    try:
        for conn in conns:
            drains.append(StreamDrain(conn.create_message_streams({topic: 1})[topic]))
        # 1. three members: one leader, one record listing all three, one owner per partition.
        produce_round("a")
        wait_until(lambda: exactly_one_owner(kazoo_client, group, topic, PARTITIONS,
                                             threads_of(*conns)), 30, "3-member ownership")
        assert sum(c.metrics()["coordination"]["leader"] for c in conns) == 1
        record, _ = published(kazoo_client, group)
        assert set(record.members) == {c.consumer_id for c in conns}
        assert len(kazoo_client.get_children(paths.leader_election(group))) == 3
        assert verify_group(zk_connect, group).ok  # the operator tools read the same znodes
        wait_until(lambda: received() >= produced, 30, "round a consumed")
        wait_until(lambda: committed(kazoo_client, group, topic, PARTITIONS) == log_end, 15,
                   "fenced auto-commits to reach the log end")

        # 2. a fourth member joins in its own process.
        member = MemberProcess(zk_connect, group, topic, "c4")
        assert member.ready.wait(60), "the fourth member was never assigned"
        four = threads_of(*conns) | {f"{group}_c4-0"}
        wait_until(lambda: exactly_one_owner(kazoo_client, group, topic, PARTITIONS, four)
                   and f"{group}_c4-0" in owners(kazoo_client, group, topic).values(), 30,
                   "4-member ownership")
        produce_round("b")
        wait_until(lambda: received() >= produced, 30, "round b consumed")

        # 3. the leader leaves cleanly: a successor takes over and the group carries on.
        leader = next(c for c in conns if c.metrics()["coordination"]["leader"])
        conns.remove(leader)
        before, _ = published(kazoo_client, group)
        leader.shutdown()
        three = threads_of(*conns) | {f"{group}_c4-0"}
        wait_until(lambda: exactly_one_owner(kazoo_client, group, topic, PARTITIONS, three), 30,
                   "ownership after the leader left")
        after, _ = published(kazoo_client, group)
        assert after.generation > before.generation and after.leader != leader.consumer_id
        produce_round("c")
        wait_until(lambda: received() >= produced, 30, "round c consumed")

        # 4. the subprocess member is killed: once its session expires, survivors take over.
        produce_round("d")
        member.kill()
        produce_round("e")
        wait_until(lambda: exactly_one_owner(kazoo_client, group, topic, PARTITIONS,
                                             threads_of(*conns)), 40, "ownership after a crash")
        wait_until(lambda: received() >= produced, 30, "rounds d and e consumed")
        for conn in conns:
            conn.commit_offsets()
        wait_until(lambda: committed(kazoo_client, group, topic, PARTITIONS) == log_end, 15,
                   "commits to reach the log end after the crash")
        assert all(not d.errors for d in drains)
        # No owner conflict and no rollback: claims wait for the release instead.
        assert sum(c.metrics()["owner_conflicts"] + c.metrics()["rollbacks"] for c in conns) == 0
        assert all(c.metrics()["zookeeper"]["requests"].get("multi", 0) > 0 for c in conns)
        json.dumps(conns[0].metrics())  # metrics stay JSON-friendly
    finally:
        if member is not None:
            member.kill()
        for conn in conns:
            conn.shutdown()
        for d in drains:
            d.stop()


def test_cooperative_join_stops_only_the_partitions_that_move(zk_connect, broker, new_topic,
                                                              unique, kazoo_client):
    topic, group = new_topic(PARTITIONS), unique("g")
    stopped: dict[str, list[tuple[str, int]]] = {}

    def recorder(name: str):
        def on_event(e: dict) -> None:
            if e["type"] == "fetchers_stopped":
                stopped.setdefault(name, []).extend(tuple(p) for p in e["partitions"])
        return on_event

    conns = []
    try:
        for name in ("a", "b"):
            conn = ZookeeperConsumerConnector(leader_config(
                zk_connect, group, consumer_id=name,
                partition_assignment_strategy="cooperative-sticky"))
            conn.add_event_listener(recorder(name))
            conn.create_message_streams({topic: 1})
            conns.append(conn)
        wait_until(lambda: len(set(owners(kazoo_client, group, topic).values())) == 2, 30,
                   "two members share the partitions")
        before = owners(kazoo_client, group, topic)
        stopped.clear()
        joiner = ZookeeperConsumerConnector(leader_config(
            zk_connect, group, consumer_id="c", partition_assignment_strategy="cooperative-sticky"))
        conns.append(joiner)
        joiner.create_message_streams({topic: 1})
        wait_until(lambda: sorted(owners(kazoo_client, group, topic).values()).count(
            f"{group}_c-0") == 2, 30, "the joiner owns its two partitions")
        after = owners(kazoo_client, group, topic)
        moved = {p for p in after if after[p] != before[p]}
        assert len(moved) == 2 and all(after[p] == f"{group}_c-0" for p in moved)
        # The old members stopped exactly the partitions they handed over, nothing else.
        assert {p for name in ("a", "b") for t, p in stopped.get(name, []) if t == topic} \
            == moved
        assert sum(c.metrics()["owner_conflicts"] for c in conns) == 0
    finally:
        for conn in conns:
            conn.shutdown()
