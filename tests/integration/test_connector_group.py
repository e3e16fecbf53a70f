"""A group on a 12-partition topic: join, clean leave and a crash, with nothing lost."""

from __future__ import annotations

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
from zkconsumer.testing.original import ZkconsumerMember

PARTITIONS = 12
# The member in its own process runs with the in-process members' quick timings (fast_config).
MEMBER_PROPS = {"consumer.id": "c4", "consumer.timeout.ms": 200,
                "zookeeper.session.timeout.ms": 4000, "rebalance.backoff.ms": 700,
                "rebalance.max.retries": 10, "auto.commit.interval.ms": 500,
                "refresh.leader.backoff.ms": 100, "fetch.wait.max.ms": 100}


def delivered(member: ZkconsumerMember) -> set[bytes]:
    """What the member process printed as handed to its application (before it died, too)."""
    return {m.value.encode() for m in member.messages()}


def _produce_round(bootstrap: str, topic: str, tag: str, per_partition: int) -> dict[int, int]:
    for p in range(PARTITIONS):
        produce(bootstrap, topic, [f"{tag}-{p}-{i}" for i in range(per_partition)], partition=p)
    return {p: per_partition for p in range(PARTITIONS)}


def test_group_join_clean_leave_and_crash_keep_exactly_one_owner_and_lose_nothing(
        zk_connect, broker, new_topic, unique, kazoo_client):
    topic, group = new_topic(PARTITIONS), unique("g")
    produced: set[bytes] = set()
    log_end = {p: 0 for p in range(PARTITIONS)}

    def produce_round(tag: str, n: int = 5) -> None:
        for p, count in _produce_round(broker.bootstrap, topic, tag, n).items():
            log_end[p] += count
        produced.update(f"{tag}-{p}-{i}".encode() for p in range(PARTITIONS) for i in range(n))

    conns = [ZookeeperConsumerConnector(fast_config(zk_connect, group, consumer_id=f"c{i}"))
             for i in (1, 2, 3)]
    drains = []
    member: ZkconsumerMember | None = None
    try:
        for conn in conns:
            drains.append(StreamDrain(conn.create_message_streams({topic: 2})[topic],
                                      name=conn.consumer_id))

        def threads_of(*cs: ZookeeperConsumerConnector) -> set[str]:
            return {f"{c.consumer_id}-{i}" for c in cs for i in (0, 1)}

        def received() -> set[bytes]:
            got = set().union(*(d.values() for d in drains))
            return got | (delivered(member) if member is not None else set())

        # 1. three members: all consumed, one owner each, commits reach the log end.
        produce_round("a")
        wait_until(lambda: exactly_one_owner(kazoo_client, group, topic, PARTITIONS,
                                             threads_of(*conns)), 30, "3-member ownership")
        wait_until(lambda: received() >= produced, 30, "round a consumed")
        wait_until(lambda: committed(kazoo_client, group, topic, PARTITIONS) == log_end, 15,
                   "auto-commit to reach the log end")
        assert len(set(owners(kazoo_client, group, topic).values())) == 6

        # 2. a fourth member joins (in its own process, so that it can be killed later).
        member = ZkconsumerMember(zk_connect, group, topic=topic, streams=2,
                                  props=MEMBER_PROPS).start()
        member.wait_ready(60)
        four = threads_of(*conns) | {f"{group}_c4-0", f"{group}_c4-1"}
        wait_until(lambda: exactly_one_owner(kazoo_client, group, topic, PARTITIONS, four)
                   and {f"{group}_c4-0", f"{group}_c4-1"}
                   <= set(owners(kazoo_client, group, topic).values()), 30, "4-member ownership")
        produce_round("b")
        wait_until(lambda: received() >= produced, 30, "round b consumed")

        # 3. one member leaves cleanly.
        leaving = conns.pop()
        leaving.shutdown()
        three = threads_of(*conns) | {f"{group}_c4-0", f"{group}_c4-1"}
        wait_until(lambda: exactly_one_owner(kazoo_client, group, topic, PARTITIONS, three), 30,
                   "ownership after a clean leave")
        produce_round("c")
        wait_until(lambda: received() >= produced, 30, "round c consumed")

        # 4. the subprocess member is killed: its session expires, survivors take over.
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
        assert sum(c.metrics()["rebalances"] for c in conns) >= 6
    finally:
        if member is not None:
            member.close()
        for conn in conns:
            conn.shutdown()
        for d in drains:
            d.stop()
