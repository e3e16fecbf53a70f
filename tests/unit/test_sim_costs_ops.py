"""The cost table by operation: the same totals as the table's formula and the simulator's."""

from __future__ import annotations

import pytest

from zkconsumer.sim import Calibration, SimConfig, simulate
from zkconsumer.sim.costs import (
    clean_join_operations,
    clean_join_requests,
    clean_leave_operations,
)

NO_RACE = Calibration(jitter_cv=0.0, fetcher_stop_min_ms=0.0, fetcher_stop_max_ms=0.0)
READS = ("getData", "getChildren", "exists")


@pytest.mark.parametrize("members,partitions,brokers", [(4, 8, 1), (16, 8, 2), (5, 17, 3),
                                                        (3, 3, 1)])
def test_join_operations_add_up_to_the_table_and_the_simulated_reads_and_writes(
        members, partitions, brokers):
    ops = clean_join_operations(members, partitions, brokers)
    assert sum(ops.values()) == clean_join_requests(members, partitions, brokers)
    r = simulate(SimConfig("zk-range", members, partitions, "join", seed=1, brokers=brokers,
                           calibration=NO_RACE))
    assert (r.zk_reads, r.zk_writes) == (sum(ops[o] for o in READS),
                                         ops["create"] + ops["delete"] + ops["setData"])


def test_a_join_of_one_to_two_members_over_two_partitions_by_operation():
    # c0 owns both; c1 joins. Each attempt: own registration twice, the broker list twice, 2
    # registrations, the topic, 1 offset, the leader finder's broker and 1 state (getData);
    # the broker list twice, the group twice and the leader finder's broker list (getChildren).
    # Re-arms and subscriptions: c0's exists + getChildren, c1's exists + getChildren of the
    # group and exists of the topic. c1 registers with its 3 ancestors; 1 claim each.
    assert clean_join_operations(1, 2) == {
        "getData": 2 * (2 + 2 + 2 + 1 + 1 + 1 + 1), "getChildren": 2 * 5 + 1 + 1,
        "exists": 1 + 2, "create": 4 + 2, "delete": 2, "setData": 0}


@pytest.mark.parametrize("members,partitions,leaver", [(4, 3, 3), (4, 8, 0), (6, 12, 2)])
def test_leave_operations_match_the_simulated_clean_leave(members, partitions, leaver):
    ops = clean_leave_operations(members, partitions, leaver)
    r = simulate(SimConfig("zk-range", members, partitions, "leave", seed=1, calibration=NO_RACE,
                           member_order="start", victim_rank=leaver))
    assert r.conflicts == 0
    assert (r.zk_reads, r.zk_writes) == (sum(ops[o] for o in READS),
                                         ops["create"] + ops["delete"] + ops["setData"])


def test_a_leaver_rank_outside_the_group_is_refused():
    with pytest.raises(ValueError, match="leaver rank 4 is not one of 4 members"):
        clean_leave_operations(4, 8, 4)
