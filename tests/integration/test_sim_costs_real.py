"""The simulator's cost table against the real connector's request counters, operation by
operation.

Real connectors on the suite's ZooKeeper and broker go through a join and two clean leaves; the
ZooKeeper requests each rebalance cost, summed over the group from every member's
``ZkRequestCounter`` (``metrics()["zookeeper"]``), must equal what ``zkconsumer.sim.costs``
predicts for the same cell, getData, getChildren, exists, create, delete and setData each, and
the simulator's own counts (reads, writes) for that cell must equal the table.

The table claims exactness for a rebalance without owner conflicts and without changed offsets
(``costs.py``): the cells are chosen so that none can happen whatever the timing. Nothing is
produced and auto-commit is off (no offset changes); in each event no partition moves from one
live member to another (the joiner gets nothing with P < N + 1, a leaver's partitions are free
before the others are notified, because a clean leave deletes its owner znodes before its
registration).
"""

from __future__ import annotations

from connector_helpers import (
    exactly_one_owner,
    fast_config,
    request_counters,
    settled_request_counters,
    split_reads_writes,
    wait_until,
)

from zkconsumer import ZookeeperConsumerConnector
from zkconsumer.sim import Calibration, SimConfig, simulate
from zkconsumer.sim.costs import OPERATIONS, clean_join_operations, clean_leave_operations

PARTITIONS = 2
BROKERS = 1
QUIET_S = 1.0
# Deterministic simulator: no jitter and instant fetcher stops, so no simulated race either.
NO_RACE = Calibration(jitter_cv=0.0, fetcher_stop_min_ms=0.0, fetcher_stop_max_ms=0.0)
# Count every request of the rebalance, as the settled counters above do (the simulator's
# default window closes at the stable instant, when members owning nothing may still read).
COUNT_ALL_S = 60.0


def _delta(before: dict[str, dict[str, int]], after: dict[str, dict[str, int]]
           ) -> dict[str, int]:
    total = {op: 0 for op in OPERATIONS}
    for member, ops in after.items():
        for op in OPERATIONS:
            total[op] += ops.get(op, 0) - before.get(member, {}).get(op, 0)
    return total


def _conflicts(conns: list[ZookeeperConsumerConnector]) -> list[tuple[int, int]]:
    """(owner conflicts, rollbacks) per member."""
    return [(c.metrics()["owner_conflicts"], c.metrics()["rollbacks"]) for c in conns]


def _simulated(members: int, event: str, victim_rank: int = 0) -> tuple[int, int]:
    r = simulate(SimConfig("zk-range", members, PARTITIONS, event, seed=1, brokers=BROKERS,
                           calibration=NO_RACE, member_order="start", victim_rank=victim_rank,
                           auto_commit=False, count_until_s=COUNT_ALL_S))
    assert (r.conflicts, r.rebalance_attempts) == (0, 1)
    return r.zk_reads, r.zk_writes


def test_join_and_clean_leaves_cost_what_the_table_and_the_simulator_say(
        zk_connect, broker, new_topic, unique, kazoo_client):
    topic, group = new_topic(PARTITIONS), unique("costs")

    def member(i: int) -> ZookeeperConsumerConnector:
        # ids c0, c1, c2 sort in start order, as the simulator's members do
        conn = ZookeeperConsumerConnector(fast_config(
            zk_connect, group, consumer_id=f"c{i}", auto_commit_enable=False))
        conn.create_message_streams({topic: 1})
        return conn

    conns: list[ZookeeperConsumerConnector] = []
    try:
        conns = [member(0), member(1)]
        wait_until(lambda: exactly_one_owner(kazoo_client, group, topic, PARTITIONS), 30,
                   "two members owning both partitions")
        before = settled_request_counters(conns, QUIET_S)
        clashes = _conflicts(conns)

        # 1. a third member joins; with 2 partitions it gets none, nobody's share moves.
        rebalances = [c.metrics()["rebalances"] for c in conns]
        conns.append(member(2))
        wait_until(lambda: [c.metrics()["rebalances"] for c in conns]
                   == [*(n + 1 for n in rebalances), 1], 30, "the join's rebalances")
        after = settled_request_counters(conns, QUIET_S)
        real = _delta(before, after)
        assert _conflicts(conns) == [*clashes, (0, 0)]  # none in this rebalance
        assert real == clean_join_operations(2, PARTITIONS, BROKERS)
        assert split_reads_writes(real) == _simulated(2, "join")

        # 2. the joiner (owning nothing) leaves cleanly.
        before = after
        leaver = conns.pop()
        rebalances = [c.metrics()["rebalances"] for c in conns]
        leaver.shutdown()
        wait_until(lambda: [c.metrics()["rebalances"] for c in conns]
                   == [n + 1 for n in rebalances], 30, "the leave's rebalances")
        after = {**settled_request_counters(conns, QUIET_S), **request_counters([leaver])}
        real = _delta(before, after)
        assert real == clean_leave_operations(3, PARTITIONS, leaver=2, brokers=BROKERS)
        assert split_reads_writes(real) == _simulated(3, "leave", victim_rank=2)

        # 3. c1 (owning partition 1) leaves cleanly; c0 takes both.
        before = settled_request_counters(conns, QUIET_S)
        clashes = _conflicts(conns[:1])
        leaver = conns.pop()
        rebalances = conns[0].metrics()["rebalances"]
        leaver.shutdown()
        wait_until(lambda: conns[0].metrics()["rebalances"] == rebalances + 1, 30,
                   "the second leave's rebalance")
        wait_until(lambda: exactly_one_owner(kazoo_client, group, topic, PARTITIONS,
                                             {f"{group}_c0-0"}), 30, "c0 owning both")
        after = {**settled_request_counters(conns, QUIET_S), **request_counters([leaver])}
        real = _delta(before, after)
        assert _conflicts(conns) == clashes
        assert real == clean_leave_operations(2, PARTITIONS, leaver=1, brokers=BROKERS)
        assert split_reads_writes(real) == _simulated(2, "leave", victim_rank=1)
    finally:
        for c in conns:
            c.shutdown()
