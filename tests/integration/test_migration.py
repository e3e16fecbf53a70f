"""The documented migration, end to end on real ZooKeeper and the embedded broker: a live legacy
group rolled to Kafka storage with dual commit, then without, then replaced by broker-coordinated
members, under steady production, loses nothing and re-reads nothing at the switch.

(The coordinator's fencing of commits from outside the group, which Tansu does not do, is
pinned on Apache Kafka 0.10.2 and 2.4.1 in ``test_kafka_broker.py``.)"""

from __future__ import annotations

from zkconsumer.lab.migration.run import MigrationSpec, run_migration
from zkconsumer.scenarios.timing import Timing


def test_the_documented_migration_moves_a_live_group_losing_and_rereading_nothing(
        zk_connect, broker, tmp_path):
    spec = MigrationSpec(plan="documented", members=2, partitions=4, dwell_s=0.5, tail_s=2.0,
                         timing=Timing(session_timeout_ms=6000, rebalance_backoff_ms=500,
                                       auto_commit_interval_ms=500, quiet_s=1.5,
                                       produce_rate=30.0))
    result = run_migration(spec, zk_connect, broker.bootstrap, tmp_path)
    assert [p.phase for p in result.phases] == ["zookeeper", "dual-commit", "kafka",
                                                "broker-group"]
    assert result.produced > 100
    assert result.lost == 0
    assert result.delivered_distinct == result.produced
    # The broker members started exactly where the legacy members had committed.
    assert result.rewind == 0
