"""Kafka offset storage against Apache Kafka 2.4.1, whose coordinator fences commits: what goes
out is a non-member's commit (generation -1, no member id), and the documented migration moves a
live legacy group to broker coordination losing nothing and re-reading nothing at the switch."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from connector_helpers import wait_until

from zkconsumer.admin import create_topic
from zkconsumer.admin.kafka_group import (
    BrokerOffsetsError,
    commit_broker_offsets,
    fetch_broker_offsets,
)
from zkconsumer.lab.migration import MigrationSpec, run_migration
from zkconsumer.lab.spec import Timing
from zkconsumer.testing import EmbeddedZooKeeper, KafkaBroker, shared_kafka_home


@pytest.fixture(scope="module")
def kafka() -> Iterator[tuple[str, KafkaBroker]]:
    home = shared_kafka_home("2.4.1")
    if home is None:
        pytest.fail("no shared/kafka-2.4.1 beside this checkout: the Kafka builds are part of "
                    "the test environment")
    with EmbeddedZooKeeper() as zk, KafkaBroker(zk.connect_string, home,
                                                props=("group.initial.rebalance.delay.ms=0",
                                                       "offsets.topic.num.partitions=1")) as b:
        yield zk.connect_string, b


def test_a_commit_goes_out_as_a_non_member_and_is_fenced_while_the_group_has_members(
        kafka, unique):
    zk_connect, broker = kafka
    from confluent_kafka import Consumer

    topic, group = unique("mt"), unique("mg")
    create_topic(zk_connect, topic, 2, bootstrap=broker.bootstrap)
    commit_broker_offsets(broker.bootstrap, group, {(topic, 0): 4})  # an empty group: stored
    member = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group,
                       "session.timeout.ms": 6000, "log_level": 0})
    assigned: list[object] = []
    member.subscribe([topic], on_assign=lambda _c, parts: assigned.extend(parts))
    try:
        wait_until(lambda: member.poll(0.2) is None and bool(assigned), 60, "an assignment")
        # The coordinator (2.4's GroupCoordinator.handleCommitOffsets) stores a commit without
        # a member only when its generation is negative and the group is empty; with members,
        # a commit from no member is UNKNOWN_MEMBER_ID.
        with pytest.raises(BrokerOffsetsError, match="UNKNOWN_MEMBER_ID") as err:
            commit_broker_offsets(broker.bootstrap, group, {(topic, 0): 9})
        assert "the group has live broker-coordinated members" in str(err.value)
    finally:
        member.close()
    # Empty again, after generations > 0 existed: a commit with generation >= 0 would now be
    # UNKNOWN_MEMBER_ID too, so its acceptance shows the generation sent is -1.
    commit_broker_offsets(broker.bootstrap, group, {(topic, 0): 9, (topic, 1): 1})
    assert fetch_broker_offsets(broker.bootstrap, group, [(topic, 0), (topic, 1)]) == {
        (topic, 0): 9, (topic, 1): 1}


def test_the_documented_migration_moves_a_live_group_losing_and_rereading_nothing(
        kafka, tmp_path):
    zk_connect, broker = kafka
    spec = MigrationSpec(plan="documented", members=2, partitions=4, tail_s=2.0,
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
