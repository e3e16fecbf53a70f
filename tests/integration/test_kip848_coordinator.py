"""What only a real KIP-848 group coordinator does, on Apache Kafka 4.0 (../shared/kafka-4.0).

The lab's ``consumer-*`` protocols rest on these behaviours of Kafka 4's group coordinator with
``group.protocol=consumer``, where the coordinator computes the assignment and every member
learns its part in its own heartbeat answer, with no group-wide JoinGroup/SyncGroup barrier:

- a join revokes only the partitions that move, from the members that give them up, and nobody
  else stops (with the sticky ``uniform`` assignor exactly one partition moves);
- a member the coordinator fenced (its session expired while it was frozen) has its late commit
  refused with UNKNOWN_MEMBER_ID, and the committed offset stays the new owner's;
- a static member (``group.instance.id``) restarted within its session gets its partitions back,
  and nobody else's partitions move.

One KRaft broker for the module (no ZooKeeper: Kafka 4 has none), with 1 s heartbeats so each
test takes seconds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from connector_helpers import wait_until
from group_member import GroupMember, settled

from zkconsumer.testing import KraftBroker

SESSION_MS = 8000
HEARTBEAT_MS = 1000
PARTITIONS = 4
MEMBER_SCRIPT = Path(__file__).with_name("kip848_member.py")


@pytest.fixture(scope="module")
def kraft(kafka_build: Any) -> Iterator[KraftBroker]:
    home = kafka_build("4.0")
    props = [f"group.consumer.heartbeat.interval.ms={HEARTBEAT_MS}",
             f"group.consumer.min.heartbeat.interval.ms={HEARTBEAT_MS}",
             f"group.consumer.session.timeout.ms={SESSION_MS}",
             f"group.consumer.min.session.timeout.ms={SESSION_MS}"]
    with KraftBroker(None, home, props=props) as broker:
        yield broker


@pytest.fixture
def topic(kraft: KraftBroker, unique: Any) -> str:
    from confluent_kafka.admin import AdminClient, NewTopic

    name = unique("k848")
    admin = AdminClient({"bootstrap.servers": kraft.bootstrap, "log_level": 3})
    admin.create_topics([NewTopic(name, PARTITIONS, 1)])[name].result(30)
    return name


def new_member(kraft: KraftBroker, group: str, topic: str, assignor: str = "uniform",
               instance: str | None = None) -> GroupMember:
    """A KIP-848 member: the coordinator's assignor; timeouts are the broker's."""
    conf = {"group.protocol": "consumer", "group.remote.assignor": assignor}
    return GroupMember(kraft.bootstrap, group, topic, conf, instance=instance)


def _settled(*members: GroupMember) -> bool:
    return settled(PARTITIONS, *members)


def _changes(events: list[tuple[str, frozenset[int]]]) -> dict[str, frozenset[int]]:
    """What a member's callbacks took away and handed over, by kind."""
    out: dict[str, frozenset[int]] = {}
    for kind, parts in events:
        out[kind] = out.get(kind, frozenset()) | parts
    return out


@pytest.mark.parametrize("assignor", ["uniform", "range"])
def test_a_join_revokes_only_the_partitions_that_move_and_nobody_else_stops(
        kraft, topic, unique, assignor):
    group = unique(f"join-{assignor}")
    a = new_member(kraft, group, topic, assignor).start()
    b = new_member(kraft, group, topic, assignor).start()
    c: GroupMember | None = None
    try:
        wait_until(lambda: _settled(a, b), 30, "two members sharing the topic")
        before = {"a": frozenset(a.owned), "b": frozenset(b.owned)}
        joined = time.time()
        c = new_member(kraft, group, topic, assignor).start()
        wait_until(lambda: _settled(a, b, c), 30, "three members sharing the topic")
        # Each member is revoked exactly the partitions it no longer owns, never one it keeps,
        # and is handed only the ones it gains; a member whose assignment did not shrink is
        # never revoked anything, and nobody's assignment is lost.
        for name, member in (("a", a), ("b", b)):
            gone, got = before[name] - member.owned, frozenset(member.owned) - before[name]
            expected = {**({"revoke": gone} if gone else {}), **({"assign": got} if got else {})}
            assert _changes(member.since(joined)) == expected, name
        assert c.since(joined) == [("assign", frozenset(c.owned))]
        if assignor == "uniform":
            # The uniform assignor is sticky: exactly one partition moves (4 over 3 members),
            # from the one member that gives it up; the other is not called back at all.
            assert len(c.owned) == 1
            assert sorted(len(m.since(joined)) for m in (a, b)) == [0, 1]
    finally:
        for m in (a, b, c):
            if m is not None:
                m.close()


def test_a_fenced_members_late_commit_is_refused_and_the_offset_stays_the_new_owners(
        kraft, topic, unique):
    """The zombie: frozen past its session, it is fenced and its partitions go to the heir,
    which commits; thawed, it still believes it owns them and commits: the coordinator refuses."""
    from confluent_kafka import Consumer, TopicPartition

    group = unique("fence")
    zombie = subprocess.Popen([sys.executable, str(MEMBER_SCRIPT), kraft.bootstrap, group,
                               topic], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    heir: GroupMember | None = None
    reader = Consumer({"bootstrap.servers": kraft.bootstrap, "group.id": group, "log_level": 3})
    try:
        assert zombie.stdout is not None and zombie.stdin is not None
        assert zombie.stdout.readline().split() == ["ASSIGNED", "[0,1,2,3]"]
        os.kill(zombie.pid, signal.SIGSTOP)
        heir = new_member(kraft, group, topic).start()
        # Nothing the zombie owns can move until the coordinator fences it: then all of it does.
        wait_until(lambda: heir.owned == set(range(PARTITIONS)), 60,
                   "the heir owning every partition once the frozen member's session expired")
        heir.commit(0, 10)
        zombie.stdin.write("commit 0 3\n")
        zombie.stdin.flush()
        os.kill(zombie.pid, signal.SIGCONT)
        assert zombie.stdout.readline().split() == ["COMMIT_ERROR", "UNKNOWN_MEMBER_ID"]
        committed = reader.committed([TopicPartition(topic, 0)], timeout=10)
        assert committed[0].offset == 10
    finally:
        if zombie.poll() is None:
            os.kill(zombie.pid, signal.SIGCONT)
            zombie.kill()
        zombie.wait(timeout=10)
        reader.close()
        if heir is not None:
            heir.close()


def test_a_static_member_restarted_within_its_session_gets_its_partitions_back_alone(
        kraft, topic, unique):
    group = unique("static")
    a = new_member(kraft, group, topic, instance="static-a").start()
    b = new_member(kraft, group, topic, instance="static-b").start()
    try:
        wait_until(lambda: _settled(a, b), 30, "two static members sharing the topic")
        before_a, before_b = frozenset(a.owned), frozenset(b.owned)
        restarted = time.time()
        b.close()
        b = new_member(kraft, group, topic, instance="static-b").start()
        # Had the coordinator handed b's partitions to a meanwhile, a would have had to give
        # them up again before b could get them back: a's callbacks would show both.
        wait_until(lambda: b.owned == before_b, 30, "the restarted static member's partitions")
        assert b.since(restarted) == [("assign", before_b)]
        assert a.since(restarted) == []
        assert a.owned == before_a
    finally:
        a.close()
        b.close()
