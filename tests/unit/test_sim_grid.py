"""Pure pieces of the Spark jobs: the grid, the model registry, the cross-task stability rule,
the table rows and the validation tolerances."""

from __future__ import annotations

import pytest

from zkconsumer.lab.records import RunRecords
from zkconsumer.sim import PROTOCOLS, SimConfig, simulate
from zkconsumer.sim.leader import LeaderGroup
from zkconsumer.sim.legacy import LegacyGroup
from zkconsumer.sim.models import MODELS
from zkconsumer.spark.herd.grid import cells
from zkconsumer.spark.herd.tables import TABLE_COLUMNS, to_record
from zkconsumer.spark.herd.validate import Check
from zkconsumer.spark.script import parse_ints
from zkconsumer.spark.task_control import (
    FORMED,
    TaskStatus,
    drained,
    formation_state,
    group_idle,
    group_stable,
)
from zkconsumer.spark.task_host import rebalancing_members


def test_grid_is_the_full_product_without_impossible_cells_most_expensive_first():
    grid = cells(("zk-range", "eager-range"), (1, 10_000, 64), (16,), ("join", "crash"), 2)
    # N=1 cannot crash (nobody would take over): 2 protocols x (3 joins + 2 crashes) x 2 seeds
    assert len(grid) == 2 * 5 * 2
    assert (grid[0].protocol, grid[0].members) == ("zk-range", 10_000)
    assert len({c.key() for c in grid}) == len(grid)


def test_grid_lists_are_checked():
    assert parse_ints("4, 64,1000") == (4, 64, 1000)
    with pytest.raises(ValueError, match="integers"):
        parse_ints("4,x")
    with pytest.raises(ValueError, match=">= 1"):
        parse_ints("0")


def test_every_registered_protocol_is_simulated_by_its_model():
    assert PROTOCOLS == tuple(MODELS)
    for protocol in PROTOCOLS:  # a ZooKeeper protocol on a ZooKeeper model, a broker one not
        zookeeper_model = MODELS[protocol] in (LegacyGroup, LeaderGroup)
        assert zookeeper_model == (SimConfig(protocol, 4, 8, "join").family == "zookeeper")
    assert SimConfig("kip848", 4, 8, "join").simulated_only
    with pytest.raises(ValueError, match="not simulated yet"):
        SimConfig("zk-leader-nope", 4, 8, "join")


def test_legacy_join_wakes_all_n_members_and_eager_has_one_leader_compute():
    n = 40
    legacy = simulate(SimConfig("zk-range", n, 16, "join", seed=3))
    assert legacy.members_woken == legacy.watch_notifications == n
    assert legacy.leader_computations == 0  # everybody computes for itself
    eager = simulate(SimConfig("eager-range", n, 16, "join", seed=3))
    assert eager.leader_computations == 1 and eager.watch_notifications == 0


def _status(task, fetchers, live=2, idle=0, last_change=0.0, at=10.0, top=None, rebalancing=0):
    return TaskStatus(task=task, at=at, fetchers=fetchers, live=live, idle=idle,
                      last_change=last_change, delivered_max=top or {}, rebalancing=rebalancing)


def test_the_group_is_stable_only_when_all_tasks_together_own_each_partition_once():
    a, b = _status(0, [1, 0, 1, 0]), _status(1, [0, 1, 0, 1])
    assert group_stable([a, b], 2, 4, now=10.0, quiet_s=3.0, fresh_after=5.0)
    assert not group_stable([a], 2, 4, 10.0, 3.0, 5.0)  # a task has not reported
    assert not group_stable([a, _status(1, [1, 1, 0, 1])], 2, 4, 10.0, 3.0, 5.0)  # doubled
    assert not group_stable([a, _status(1, [0, 0, 0, 1])], 2, 4, 10.0, 3.0, 5.0)  # orphan
    assert not group_stable([a, _status(1, [0, 1, 0, 1], last_change=8.0)], 2, 4, 10.0, 3.0,
                            5.0)  # not quiet yet
    assert not group_stable([a, _status(1, [0, 1, 0, 1], at=4.0)], 2, 4, 10.0, 3.0, 5.0)
    assert not group_stable([a, _status(1, [0, 1, 0, 1], idle=1)], 2, 4, 10.0, 3.0, 5.0)


def test_the_herd_rule_for_zookeeper_groups_waits_for_every_rebalance_to_end():
    # task 1 owns its partitions as before, but one of its members has begun a rebalance
    a, inside = _status(0, [1, 0, 1, 0]), _status(1, [0, 1, 0, 1], rebalancing=1)
    assert group_stable([a, inside], 2, 4, 10.0, 3.0, 5.0)  # ownership alone: settled
    assert not group_stable([a, inside], 2, 4, 10.0, 3.0, 5.0, rebalances_ended=True)
    assert group_stable([a, _status(1, [0, 1, 0, 1])], 2, 4, 10.0, 3.0, 5.0,
                        rebalances_ended=True)
    # the herd waits so for the ZooKeeper family only, whose members record both ends
    from zkconsumer.spark.task_control import waits_for_rebalances

    assert [waits_for_rebalances(p) for p in ("zk-range", "zk-leader-range", "eager-range",
                                              "cooperative-sticky")] == [True, True, False, False]


def test_a_group_forms_only_with_every_initial_member_alive():
    a, b = _status(0, [1, 0, 1, 0], live=3), _status(1, [0, 1, 0, 1], live=3)
    assert formation_state([a, b], 2, 6, since=5.0, stable=True, max_retries=1) == FORMED
    assert formation_state([a, b], 2, 6, since=5.0, stable=False, max_retries=1) is None
    # two members gave up their first rebalance and exited: not a group of 6, whatever else
    short = _status(1, [0, 1, 0, 1], live=1)
    assert formation_state([a, short], 2, 6, since=5.0, stable=True, max_retries=1) == (
        "the group did not form: 2 of 6 initial members exited before it was stable "
        "(rebalance.max.retries = 1)")
    # a status from before the formation began says nothing yet
    assert formation_state([a, _status(1, [0, 1, 0, 1], live=1, at=4.0)], 2, 6, since=5.0,
                           stable=False, max_retries=1) is None


def test_idleness_is_counted_from_the_start_of_the_observation():
    quiet_before = [_status(0, [1, 0], last_change=1.0), _status(1, [0, 0], last_change=2.0)]
    # nothing changed since 2.0, but the observation began at 9.0: 1 s of silence seen
    assert not group_idle(quiet_before, 2, now=10.0, idle_s=4.5, fresh_after=9.0)
    assert group_idle(quiet_before, 2, now=13.5, idle_s=4.5, fresh_after=9.0)
    changed = [quiet_before[0], _status(1, [0, 1], last_change=11.0, at=12.0)]
    assert not group_idle(changed, 2, now=15.0, idle_s=4.5, fresh_after=9.0)
    assert group_idle(changed, 2, now=15.5, idle_s=4.5, fresh_after=9.0)
    assert not group_idle(quiet_before[:1], 2, now=20.0, idle_s=4.5, fresh_after=9.0)


def test_a_group_with_a_member_inside_a_rebalance_is_not_idle_however_long_it_is_silent():
    # a member reconnecting through a slow proxy mid-rebalance records nothing for seconds:
    # the group has not stopped trying, so the observation goes on (to the event's deadline)
    silent = [_status(0, [1, 0], last_change=1.0), _status(1, [0, 0], last_change=2.0,
                                                          rebalancing=1)]
    assert not group_idle(silent, 2, now=100.0, idle_s=4.5, fresh_after=9.0)
    ended = [silent[0], _status(1, [0, 0], last_change=2.0)]
    assert group_idle(ended, 2, now=100.0, idle_s=4.5, fresh_after=9.0)


def test_a_member_is_rebalancing_from_its_start_until_it_succeeds_or_gives_up():
    records = RunRecords()
    for line in [{"k": "co", "ts": 1.0, "m": "m00", "i": 0, "w": "rebalance_started"},
                 {"k": "co", "ts": 1.1, "m": "m00", "i": 0, "w": "rebalance_succeeded"},
                 {"k": "co", "ts": 1.0, "m": "m01", "i": 0, "w": "rebalance_started"},
                 {"k": "co", "ts": 1.2, "m": "m01", "i": 0, "w": "owner_conflict"},
                 {"k": "co", "ts": 1.0, "m": "m02", "i": 0, "w": "rebalance_started"},
                 {"k": "co", "ts": 3.0, "m": "m02", "i": 0, "w": "rebalance_failed"},
                 # killed inside a rebalance, restarted: only the new incarnation counts
                 {"k": "co", "ts": 1.0, "m": "m03", "i": 0, "w": "rebalance_started"},
                 {"k": "co", "ts": 4.0, "m": "m03", "i": 1, "w": "rebalance_started"},
                 {"k": "co", "ts": 4.5, "m": "m03", "i": 1, "w": "rebalance_succeeded"}]:
        records.add(line)
    assert rebalancing_members(records) == {"m01"}


def test_drained_when_every_last_offset_was_delivered_somewhere():
    statuses = [_status(0, [1], top={"0": 9}), _status(1, [0], top={"1": 4})]
    assert drained(statuses, {"0": 9, "1": 4})
    assert not drained(statuses, {"0": 9, "1": 5})


def test_a_simulated_row_fits_the_table_schema_in_order():
    row = simulate(SimConfig("cooperative-sticky", 4, 8, "leave", seed=1)).row()
    record = to_record(row)
    assert len(record) == len(TABLE_COLUMNS)
    assert record[TABLE_COLUMNS.index("mode")] == "sim"
    assert record[TABLE_COLUMNS.index("tasks")] is None  # a real-mode figure


def test_validation_tolerances():
    # the plan's: requests within 10 %, attempts equal, time to stable within 20 %
    base = dict(protocol="zk-range", members=8, partitions=8, event="join", real_runs=1,
                real_requests=100.0, real_attempts=2.0, real_tts=1.0)
    assert Check(**base, sim_requests=109.0, sim_attempts=2.0, sim_tts=1.19).ok
    assert not Check(**base, sim_requests=111.0, sim_attempts=2.0, sim_tts=1.0).ok
    assert not Check(**base, sim_requests=100.0, sim_attempts=3.0, sim_tts=1.0).ok
    assert not Check(**base, sim_requests=100.0, sim_attempts=2.0, sim_tts=1.21).ok
