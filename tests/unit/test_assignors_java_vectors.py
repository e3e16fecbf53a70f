"""Vectors ported from Apache Kafka's own assignor tests (3.6+, rack-unaware cases).

Test names keep the Java names (``AbstractStickyAssignorTest``, ``RoundRobinAssignorTest``,
``AbstractPartitionAssignorTest``) so a disagreement can be traced back. Where Java checks
``partitionsTransferringOwnership`` for the sticky assignor, the cooperative-sticky test here
checks that exactly those partitions are withheld from their new owner.
"""

from __future__ import annotations

import pytest

from zkconsumer.assignors import Subscription, TopicPartition, get_assignor

STICKY_KINDS = ["sticky", "cooperative-sticky"]


def tps(text: str) -> list[TopicPartition]:
    """``"topic1-0, topic2-1"`` (Kafka's ``TopicPartition.toString``) -> sorted partitions."""
    result = []
    for token in text.split(","):
        token = token.strip()
        if token:
            topic, _, p = token.rpartition("-")
            result.append(TopicPartition(topic, int(p)))
    return sorted(result)


def owned_sub(topics: str, owned: str, generation: int | None) -> Subscription:
    return Subscription(topics.split(), tps(owned), generation)


def withheld(sticky: dict, transferring: dict[TopicPartition, str]) -> dict:
    """The cooperative result: the sticky result minus partitions changing owner."""
    return {m: [tp for tp in parts if transferring.get(tp) != m] for m, parts in sticky.items()}


def check_sticky_pair(counts, subscriptions, expected, transferring):
    assert get_assignor("sticky").assign(counts, subscriptions) == expected
    assert get_assignor("cooperative-sticky").assign(counts, subscriptions) == \
        withheld(expected, transferring)


@pytest.mark.parametrize("kind", STICKY_KINDS)
def test_testMultipleConsumersMixedTopicSubscriptions(kind):
    result = get_assignor(kind).assign({"topic1": 3, "topic2": 2}, {
        "consumer1": Subscription(["topic1"]),
        "consumer2": Subscription(["topic1", "topic2"]),
        "consumer3": Subscription(["topic1"])})
    assert result == {"consumer1": tps("topic1-0, topic1-2"),
                      "consumer2": tps("topic2-0, topic2-1"), "consumer3": tps("topic1-1")}


@pytest.mark.parametrize("kind", STICKY_KINDS)
def test_testTwoConsumersTwoTopicsSixPartitions(kind):
    both = ["topic1", "topic2"]
    result = get_assignor(kind).assign({"topic1": 3, "topic2": 3}, {
        "consumer1": Subscription(both), "consumer2": Subscription(both)})
    assert result == {"consumer1": tps("topic1-0, topic1-2, topic2-1"),
                      "consumer2": tps("topic1-1, topic2-0, topic2-2")}


def test_testConsumerOwningMinQuotaExpectedMaxQuota():
    check_sticky_pair(
        {"topic1": 2, "topic2": 3},
        {"consumer1": owned_sub("topic1 topic2", "topic1-0, topic2-1", 1),
         "consumer2": owned_sub("topic1 topic2", "topic1-1, topic2-2", 1)},
        {"consumer1": tps("topic1-0, topic2-1, topic2-0"),
         "consumer2": tps("topic1-1, topic2-2")},
        transferring={})


def test_testMaxQuotaConsumerMoreThanNumExpectedMaxCapacityMembers():
    """Two members own the larger quota but only one may keep it: Java's HashMap visits
    consumer2 before consumer1, so consumer1 gives up topic2-0."""
    check_sticky_pair(
        {"topic1": 2, "topic2": 2},
        {"consumer1": owned_sub("topic1 topic2", "topic1-0, topic2-0", 1),
         "consumer2": owned_sub("topic1 topic2", "topic1-1, topic2-1", 1),
         "consumer3": owned_sub("topic1 topic2", "", 1)},
        {"consumer1": tps("topic1-0"), "consumer2": tps("topic1-1, topic2-1"),
         "consumer3": tps("topic2-0")},
        transferring={TopicPartition("topic2", 0): "consumer3"})


def test_testAllConsumersAreUnderMinQuota():
    check_sticky_pair(
        {"topic1": 2, "topic2": 3},
        {"consumer1": owned_sub("topic1 topic2", "topic1-0", 1),
         "consumer2": owned_sub("topic1 topic2", "topic1-1", 1),
         "consumer3": owned_sub("topic1 topic2", "", 1)},
        {"consumer1": tps("topic1-0, topic2-1"), "consumer2": tps("topic1-1, topic2-2"),
         "consumer3": tps("topic2-0")},
        transferring={})


def test_testAddRemoveTwoConsumersTwoTopics():
    counts = {"topic1": 3, "topic2": 4}
    both = "topic1 topic2"
    sticky = get_assignor("sticky")
    first = sticky.assign(counts, {"consumer1": Subscription(both.split()),
                                   "consumer2": Subscription(both.split())})
    assert first == {"consumer1": tps("topic1-0, topic1-2, topic2-1, topic2-3"),
                     "consumer2": tps("topic1-1, topic2-0, topic2-2")}

    grown = {"consumer1": Subscription(both.split(), first["consumer1"], 1),
             "consumer2": Subscription(both.split(), first["consumer2"], 1),
             "consumer3": Subscription(both.split(), [], 1),
             "consumer4": Subscription(both.split(), [], 1)}
    second = {"consumer1": tps("topic1-0, topic2-1"), "consumer2": tps("topic2-0, topic1-1"),
              "consumer3": tps("topic1-2, topic2-3"), "consumer4": tps("topic2-2")}
    check_sticky_pair(counts, grown, second, transferring={
        TopicPartition("topic1", 2): "consumer3", TopicPartition("topic2", 3): "consumer3",
        TopicPartition("topic2", 2): "consumer4"})

    shrunk = {"consumer3": Subscription(both.split(), second["consumer3"], 1),
              "consumer4": Subscription(both.split(), second["consumer4"], 1)}
    check_sticky_pair(counts, shrunk, {
        "consumer3": tps("topic1-2, topic2-3, topic1-0, topic2-1"),
        "consumer4": tps("topic2-2, topic1-1, topic2-0")}, transferring={})


def test_testAllConsumersReachExpectedQuotaAndAreConsideredFilled():
    check_sticky_pair(
        {"topic": 4},
        {"consumer1": owned_sub("topic", "topic-0, topic-1", 1),
         "consumer2": owned_sub("topic", "topic-2", 1),
         "consumer3": owned_sub("topic", "", 1)},
        {"consumer1": tps("topic-0, topic-1"), "consumer2": tps("topic-2"),
         "consumer3": tps("topic-3")},
        transferring={})


@pytest.mark.parametrize("older", [9, None], ids=["stale-generation", "no-generation"])
def test_testOwnedPartitionsAreInvalidatedForConsumerWithStaleGeneration(older):
    """(and ...WithNoGeneration): both claim the same three partitions; generation 10 wins."""
    claim = "topic-0, topic-2, topic2-1"
    check_sticky_pair(
        {"topic": 3, "topic2": 3},
        {"consumer1": owned_sub("topic topic2", claim, 10),
         "consumer2": owned_sub("topic topic2", claim, older)},
        {"consumer1": tps(claim), "consumer2": tps("topic-1, topic2-0, topic2-2")},
        transferring={})


def test_testPartitionsTransferringOwnershipIncludeThePartitionClaimedByMultipleConsumersInSameGeneration():  # noqa: E501
    """topic-0 is claimed by consumer1 and consumer2 in the same generation: neither keeps it,
    and cooperative-sticky withholds it from consumer3 for one round."""
    check_sticky_pair(
        {"topic": 3},
        {"consumer1": owned_sub("topic", "topic-0, topic-1", 1),
         "consumer2": owned_sub("topic", "topic-0, topic-2", 1),
         "consumer3": owned_sub("topic", "", 1)},
        {"consumer1": tps("topic-1"), "consumer2": tps("topic-2"), "consumer3": tps("topic-0")},
        transferring={TopicPartition("topic", 0): "consumer3"})


def test_testEnsurePartitionsAssignedToHighestGeneration():
    all3 = "topic topic2 topic3"
    check_sticky_pair(
        {"topic": 3, "topic2": 3, "topic3": 3},
        {"consumer1": owned_sub(all3, "topic-0, topic2-0, topic3-0", 10),
         "consumer2": owned_sub(all3, "topic-1, topic2-1, topic3-1", 9),
         "consumer3": owned_sub(all3, "topic2-1, topic3-0, topic3-2", 8)},
        {"consumer1": tps("topic-0, topic2-0, topic3-0"),
         "consumer2": tps("topic-1, topic2-1, topic3-1"),
         "consumer3": tps("topic-2, topic2-2, topic3-2")},
        transferring={})


def test_testNoReassignmentOnCurrentMembers():
    """Members of older generations keep what nobody else claims (Kafka 3.5+): only the
    member without partitions gets the three unowned ones."""
    all4 = "topic topic2 topic3 topic1"
    subscriptions = {
        "consumer1": owned_sub(all4, "", None),
        "consumer2": owned_sub(all4, "topic-0, topic2-0, topic1-0", 9),
        "consumer3": owned_sub(all4, "topic3-2, topic2-2, topic1-1", 8),
        "consumer4": owned_sub(all4, "topic3-1, topic-1, topic-2", 7)}
    expected = {m: tps(",".join(f"{tp.topic}-{tp.partition}" for tp in s.owned_partitions))
                for m, s in subscriptions.items()}
    expected["consumer1"] = tps("topic1-2, topic2-1, topic3-0")
    check_sticky_pair({"topic": 3, "topic1": 3, "topic2": 3, "topic3": 3}, subscriptions,
                      expected, transferring={})


def test_testOwnedPartitionsAreInvalidatedForConsumerWithMultipleGeneration():
    check_sticky_pair(
        {"topic": 3, "topic2": 3},
        {"consumer1": owned_sub("topic topic2", "topic-0, topic2-1, topic-1", 10),
         "consumer2": owned_sub("topic topic2", "topic-0, topic2-1, topic2-2", 8)},
        {"consumer1": tps("topic-0, topic2-1, topic-1"),
         "consumer2": tps("topic-2, topic2-2, topic2-0")},
        transferring={})


RACK_TEST_COUNTS = {"t1": 6, "t2": 7, "t3": 2}


@pytest.mark.parametrize("kind", STICKY_KINDS)
def test_testRackAwareAssignmentWithUniformSubscription_without_racks(kind):
    """The non-rack-aware expectation of the Java test, fresh and with itself as owned."""
    expected = {"consumer0": tps("t1-0, t1-3, t2-0, t2-3, t2-6"),
                "consumer1": tps("t1-1, t1-4, t2-1, t2-4, t3-0"),
                "consumer2": tps("t1-2, t1-5, t2-2, t2-5, t3-1")}
    topics = ["t1", "t2", "t3"]
    assignor = get_assignor(kind)
    fresh = {m: Subscription(topics) for m in expected}
    assert assignor.assign(RACK_TEST_COUNTS, fresh) == expected
    assert assignor.assign(RACK_TEST_COUNTS,
                           {m: Subscription(topics, tp) for m, tp in expected.items()}) == expected


NON_EQUAL_TOPICS = {"consumer0": ["t1", "t2", "t3"], "consumer1": ["t1", "t2", "t3"],
                    "consumer2": ["t1", "t3"]}


@pytest.mark.parametrize("kind", STICKY_KINDS)
def test_testRackAwareAssignmentWithNonEqualSubscription_without_racks(kind):
    """General path, fresh: exercises the balancing moves and the movement log."""
    result = get_assignor(kind).assign(
        RACK_TEST_COUNTS, {m: Subscription(t) for m, t in NON_EQUAL_TOPICS.items()})
    assert result == {"consumer0": tps("t1-5, t2-0, t2-2, t2-4, t2-6"),
                      "consumer1": tps("t1-3, t2-1, t2-3, t2-5, t3-0"),
                      "consumer2": tps("t1-0, t1-1, t1-2, t1-4, t3-1")}


def test_testRackAwareAssignmentWithNonEqualSubscription_cooperative_two_rounds():
    """General path with owned partitions: consumer2 must give up t2 (no longer subscribed);
    the first cooperative round withholds every partition that changes owner, the second
    round completes the assignment."""
    owned = {"consumer0": "t1-0, t1-1, t1-2, t1-3, t1-4",
             "consumer1": "t1-5, t2-0, t2-1, t2-2, t2-3",
             "consumer2": "t2-4, t2-5, t2-6, t3-0, t3-1"}
    coop = get_assignor("cooperative-sticky")
    first = coop.assign(RACK_TEST_COUNTS, {m: Subscription(NON_EQUAL_TOPICS[m], tps(o))
                                           for m, o in owned.items()})
    assert first == {"consumer0": tps("t1-2, t1-3, t1-4"),
                     "consumer1": tps("t2-0, t2-1, t2-2, t2-3"),
                     "consumer2": tps("t3-0, t3-1")}
    second = coop.assign(RACK_TEST_COUNTS, {m: Subscription(NON_EQUAL_TOPICS[m], first[m])
                                            for m in owned})
    assert second == {"consumer0": tps("t1-2, t1-3, t1-4, t2-4, t2-5"),
                      "consumer1": tps("t2-0, t2-1, t2-2, t2-3, t2-6"),
                      "consumer2": tps("t1-0, t1-1, t1-5, t3-0, t3-1")}


def test_RoundRobinAssignor_javadoc_static_members_keep_their_slots():
    """RoundRobinAssignor javadoc: static members are ordered by group.instance.id, so new
    member ids after a rolling bounce do not reshuffle the assignment."""
    both = ["t0", "t1"]
    counts = {"t0": 3, "t1": 3}
    before = get_assignor("roundrobin").assign(counts, {
        "C0": Subscription(both, group_instance_id="I0"),
        "C1": Subscription(both, group_instance_id="I1"),
        "C2": Subscription(both, group_instance_id="I2")})
    after = get_assignor("roundrobin").assign(counts, {
        "C5": Subscription(both, group_instance_id="I0"),
        "C3": Subscription(both, group_instance_id="I1"),
        "C4": Subscription(both, group_instance_id="I2")})
    assert before == {"C0": tps("t0-0, t1-0"), "C1": tps("t0-1, t1-1"), "C2": tps("t0-2, t1-2")}
    assert after == {"C5": before["C0"], "C3": before["C1"], "C4": before["C2"]}


@pytest.mark.parametrize("kind", ["range", "roundrobin"])
def test_testMemberInfoSortingSomeGroupInstanceId(kind):
    """Static members first, by instance id (c as x, b as y), then dynamic ones (a)."""
    result = get_assignor(kind).assign({"t": 3}, {
        "a": Subscription(["t"]),
        "b": Subscription(["t"], group_instance_id="y"),
        "c": Subscription(["t"], group_instance_id="x")})
    assert result == {"c": tps("t-0"), "b": tps("t-1"), "a": tps("t-2")}
