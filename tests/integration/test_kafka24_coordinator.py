"""What only a real group coordinator does, on Apache Kafka 2.4.1 (../shared/kafka-2.4.1).

Tansu 0.6.0 accepts these requests but behaves otherwise; the comparison's broker-side numbers
rest on these three behaviours of Kafka's GroupCoordinator:

- KIP-345: a static member (``group.instance.id``) restarted within its session timeout gets its
  partitions back, and nobody else rebalances;
- KIP-429: when a member joins a cooperative-sticky group, the owner revokes only the partitions
  that move, and keeps fetching the others;
- generation fencing: an offset commit from a generation that ended is refused, with
  ILLEGAL_GENERATION from a member still in the group and UNKNOWN_MEMBER_ID from one the group
  evicted, and the committed offset does not move.

One ZooKeeper and one broker for the module; group sessions are short (the broker's minimum is
lowered for that), so each test takes seconds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from connector_helpers import wait_until
from group_member import GroupMember, settled
from kafka_wire import (
    ILLEGAL_GENERATION,
    NONE,
    REBALANCE_IN_PROGRESS,
    UNKNOWN_MEMBER_ID,
    WireMember,
)

from zkconsumer.admin import create_topic
from zkconsumer.testing import EmbeddedZooKeeper, KafkaBroker

SESSION_MS = 3000
PARTITIONS = 4


@pytest.fixture(scope="module")
def kafka(kafka_build) -> Iterator[tuple[str, KafkaBroker]]:
    home = kafka_build("2.4.1")
    props = ["group.min.session.timeout.ms=500", "offsets.topic.num.partitions=1"]
    with EmbeddedZooKeeper() as zk, KafkaBroker(zk.connect_string, home, props=props) as b:
        yield zk.connect_string, b


@pytest.fixture
def topic(kafka: tuple[str, KafkaBroker], unique: Any) -> str:
    name = unique("k24")
    create_topic(kafka[0], name, PARTITIONS, bootstrap=kafka[1].bootstrap)
    return name


def new_member(bootstrap: str, group: str, topic: str, strategy: str = "range",
               instance: str | None = None) -> GroupMember:
    """A classic-protocol member: the client's strategy and short session timeouts."""
    return GroupMember(bootstrap, group, topic, {
        "session.timeout.ms": SESSION_MS, "heartbeat.interval.ms": 300,
        "partition.assignment.strategy": strategy}, instance=instance)


def _settled(*members: GroupMember) -> bool:
    return settled(PARTITIONS, *members)


def _group_state(bootstrap: str, group: str) -> tuple[str, int] | None:
    """The coordinator's own view: (state, members), None while it cannot say."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    try:
        found = admin.describe_consumer_groups([group])[group].result(timeout=10)
    except KafkaException:  # the coordinator is loading or moving
        return None
    return found.state.name, len(found.members)


def test_a_static_member_restarted_within_its_session_gets_its_partitions_back_alone(
        kafka, topic, unique):
    bootstrap, group = kafka[1].bootstrap, unique("static")
    a = new_member(bootstrap, group, topic, instance="static-a").start()
    b = new_member(bootstrap, group, topic, instance="static-b").start()
    try:
        wait_until(lambda: _settled(a, b) and _group_state(bootstrap, group) == ("STABLE", 2),
                   30, "two static members sharing the topic in a stable group")
        before_a, before_b = set(a.owned), set(b.owned)
        restarted = time.time()
        b.close()
        b = new_member(bootstrap, group, topic, instance="static-b").start()
        wait_until(lambda: b.owned == before_b, 10, "the restarted static member's partitions")
        # Past the old incarnation's session: the coordinator never rebalanced the group.
        time.sleep(SESSION_MS / 1000 + 1.0)
        assert b.since(restarted) == [("assign", frozenset(before_b))]
        assert a.since(restarted) == []
        assert a.owned == before_a and b.owned == before_b
    finally:
        a.close()
        b.close()


def test_a_cooperative_join_revokes_only_the_partitions_that_move(kafka, topic, unique):
    bootstrap, group = kafka[1].bootstrap, unique("coop")
    a = new_member(bootstrap, group, topic, strategy="cooperative-sticky").start()
    b: GroupMember | None = None
    try:
        wait_until(lambda: a.owned == set(range(PARTITIONS)), 30, "the first member owns all")
        joined = time.time()
        b = new_member(bootstrap, group, topic, strategy="cooperative-sticky").start()
        wait_until(lambda: len(a.owned) == PARTITIONS // 2 == len(b.owned), 30,
                   "the partitions shared by the two members")
        moved = frozenset(b.owned)
        # Round one: the owner gives up exactly the two partitions that move, and keeps the
        # other two (no revocation of them, no second assignment of them); round two hands the
        # moved ones to the joiner.
        assert a.since(joined) == [("revoke", moved)]
        assert b.since(joined) == [("assign", moved)]
        assert a.owned == set(range(PARTITIONS)) - moved
    finally:
        a.close()
        if b is not None:
            b.close()


def test_a_commit_from_a_generation_that_ended_is_refused(kafka, topic, unique):
    """A member still in the group, committing with its previous generation's id."""
    bootstrap, group = kafka[1].bootstrap, unique("fence")
    x = WireMember(bootstrap, group, "x")
    y = WireMember(bootstrap, group, "y")
    try:
        x.wait_for_coordinator()
        first = x.join(SESSION_MS, SESSION_MS)
        assert (first.error, first.generation, first.leader) == (NONE, 1, x.member_id)
        assert x.sync({x.member_id: b""}) == NONE
        assert x.commit(topic, 0, 5) == NONE

        joined: list[Any] = []
        second = threading.Thread(target=lambda: joined.append(y.join(SESSION_MS, SESSION_MS)))
        second.start()
        # The coordinator holds y's JoinGroup and tells x through its heartbeat.
        wait_until(lambda: x.heartbeat() == REBALANCE_IN_PROGRESS, 10, "x told to rejoin")
        rejoined = x.join(SESSION_MS, SESSION_MS)
        second.join(timeout=10)
        assert (rejoined.error, rejoined.generation) == (NONE, 2)
        assert joined[0].generation == 2 and sorted(rejoined.members) == sorted(
            [x.member_id, y.member_id])
        assert x.sync({x.member_id: b"", y.member_id: b""}) == NONE
        assert y.sync({}) == NONE

        assert x.commit(topic, 0, 3, generation=1) == ILLEGAL_GENERATION
        assert x.commit(topic, 0, 7) == NONE
    finally:
        x.close()
        y.close()


def test_an_evicted_members_late_commit_is_refused_and_the_offset_stays(kafka, topic, unique):
    """The zombie: its session expired, another member took over and committed; its late commit
    with its old member id and generation is refused (UNKNOWN_MEMBER_ID)."""
    from confluent_kafka import Consumer, TopicPartition

    bootstrap, group = kafka[1].bootstrap, unique("zombie")
    zombie = WireMember(bootstrap, group, "zombie")
    heir = WireMember(bootstrap, group, "heir")
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "log_level": 3})
    try:
        zombie.wait_for_coordinator()
        assert zombie.join(1000, 1000).error == NONE
        assert zombie.sync({zombie.member_id: b""}) == NONE
        assert zombie.commit(topic, 0, 5) == NONE
        # Silent past its 1 s session: the coordinator evicts it (its heartbeat now says so).
        wait_until(lambda: _group_state(bootstrap, group) == ("EMPTY", 0), 30,
                   "the coordinator to evict the silent member")
        assert zombie.heartbeat() == UNKNOWN_MEMBER_ID

        took_over = heir.join(SESSION_MS, SESSION_MS)
        assert took_over.error == NONE and took_over.members == [heir.member_id]
        assert took_over.generation > zombie.generation
        assert heir.sync({heir.member_id: b""}) == NONE
        assert heir.commit(topic, 0, 10) == NONE

        assert zombie.commit(topic, 0, 3) == UNKNOWN_MEMBER_ID
        committed = reader.committed([TopicPartition(topic, 0)], timeout=10)
        assert committed[0].offset == 10
    finally:
        reader.close()
        zombie.close()
        heir.close()
