"""The one lab member entry point and the one builder of a lab member's connector properties."""

from __future__ import annotations

import pytest

from zkconsumer.lab.chaos.consumer import ChaosMemberSpec
from zkconsumer.lab.drivers import MemberSpec
from zkconsumer.lab.drivers.zk import connector_config
from zkconsumer.lab.member import parse_args
from zkconsumer.scenarios.timing import Timing


def test_a_chaos_member_commits_by_hand_with_the_lab_members_shared_properties() -> None:
    spec = ChaosMemberSpec(name="c3", group="g", topic="t", zk_connect="127.0.0.1:1/x",
                           records_path="c3.jsonl", session_timeout_ms=6000,
                           session_lost_policy="stop-fetchers")
    assert spec.connector_config() == {
        "zookeeper.connect": "127.0.0.1:1/x", "group.id": "g", "consumer.id": "c3",
        "auto.offset.reset": "smallest", "consumer.timeout.ms": 200,
        "zookeeper.session.timeout.ms": 6000, "rebalance.backoff.ms": 500,
        "rebalance.max.retries": 20, "auto.commit.enable": False,
        "refresh.leader.backoff.ms": 100, "zkconsumer.session.lost.policy": "stop-fetchers",
        # a member started on a crowded machine gets 20 s to reach ZooKeeper, not one session
        "zookeeper.connection.timeout.ms": 20000,
    }


def test_a_protocol_member_adds_its_assignor_mode_and_offsets_to_the_shared_properties() -> None:
    spec = MemberSpec(protocol="zk-range-kafka", member="m02", incarnation=3, topic="t",
                      group="g", partitions=4, zk_connect="127.0.0.1:1", bootstrap="127.0.0.1:2",
                      records_path="m02.3.jsonl",
                      timing=Timing(session_timeout_ms=4000, rebalance_backoff_ms=700,
                                    rebalance_max_retries=5, auto_commit_interval_ms=900,
                                    request_sample_interval_s=0.2))
    props = connector_config(spec, "roundrobin", "leader", (("offsets.storage", "kafka"),))
    assert props == {
        "zookeeper.connect": "127.0.0.1:1", "group.id": "g", "consumer.id": "m02-i3",
        "auto.offset.reset": "smallest", "consumer.timeout.ms": 200,
        "zookeeper.session.timeout.ms": 4000, "rebalance.backoff.ms": 700,
        "rebalance.max.retries": 5, "offsets.storage": "kafka", "coordination.mode": "leader",
        "partition.assignment.strategy": "roundrobin", "auto.commit.interval.ms": 900,
    }


def test_the_chaos_member_is_an_option_of_the_one_entry_point() -> None:
    args = parse_args(["--chaos", "--leave-deadline", "25.0", "{}"])
    assert (args.chaos, args.leave_deadline, args.spec) == (True, 25.0, "{}")
    plain = parse_args(["{}"])
    assert (plain.chaos, plain.leave_deadline) == (False, None)


def test_a_member_without_its_spec_is_refused() -> None:
    with pytest.raises(SystemExit) as exc:
        parse_args(["--chaos"])
    assert exc.value.code == 2
