"""plan_rebalance / plan_release: pure decisions, checked without any server."""

from __future__ import annotations

import random

import pytest

from zkconsumer.assignors import TopicPartition, get_assignor
from zkconsumer.rebalance.plan import (
    GroupView,
    consumers_per_topic,
    plan_rebalance,
    plan_release,
)
from zkconsumer.topic_filter import topic_count_from_registration
from zkconsumer.zk.codec import ConsumerRegistration

RANGE = get_assignor("legacy-range")
ROUNDROBIN = get_assignor("legacy-roundrobin")


def static(**topics: int) -> ConsumerRegistration:
    return ConsumerRegistration(tuple(topics.items()), "static", 1)


def my_threads(view: GroupView, member: str) -> dict[str, list[str]]:
    count = topic_count_from_registration(member, view.registrations[member],
                                          view.exclude_internal_topics)
    return count.thread_ids_per_topic(view.all_topics)


def test_range_worked_example_of_the_original():
    view = GroupView({"C1": static(t=2), "C2": static(t=2)}, {"t": range(5)})
    plan = plan_rebalance(view, my_threads(view, "C1"), RANGE)
    assert plan.claims == {TopicPartition("t", 0): "C1-0", TopicPartition("t", 1): "C1-0",
                           TopicPartition("t", 2): "C1-1"}
    assert plan.offsets_to_read == tuple(plan.claims)
    other = plan_rebalance(view, my_threads(view, "C2"), RANGE)
    assert other.claims == {TopicPartition("t", 3): "C2-0", TopicPartition("t", 4): "C2-1"}
    assert plan.listener_assignment == other.listener_assignment == {
        "t": {0: "C1-0", 1: "C1-0", 2: "C1-1", 3: "C2-0", 4: "C2-1"}}


def test_thread_ids_sort_as_strings_so_c10_gets_partition_2():
    view = GroupView({"c": static(t=12)}, {"t": range(12)})
    plan = plan_rebalance(view, my_threads(view, "c"), RANGE)
    assert plan.claims[TopicPartition("t", 2)] == "c-10"
    assert plan.claims[TopicPartition("t", 11)] == "c-9"


def test_wildcard_members_are_expanded_by_the_reader_with_its_own_exclusion_flag():
    regs = {"g_w": ConsumerRegistration(((".*", 1),), "white_list"), "g_s": static(a=1)}
    topics = ["a", "b", "__consumer_offsets"]
    assert consumers_per_topic(regs, topics, True) == {
        "a": ["g_s-0", "g_w-0"], "b": ["g_w-0"]}
    assert "__consumer_offsets" in consumers_per_topic(regs, topics, False)


def test_range_listener_map_has_only_my_topics_roundrobin_has_all():
    view = GroupView({"a": static(x=1), "b": static(x=1, y=1)}, {"x": range(2), "y": range(2)})
    plan = plan_rebalance(view, my_threads(view, "a"), RANGE, "range")
    assert set(plan.listener_assignment) == {"x"}
    assert set(plan.global_assignment) == {TopicPartition(t, p) for t in "xy" for p in (0, 1)}
    same = GroupView({"a": static(x=1, y=1), "b": static(x=1, y=1)},
                     {"x": range(2), "y": range(2)})
    rr = plan_rebalance(same, my_threads(same, "a"), ROUNDROBIN, "roundrobin")
    assert set(rr.listener_assignment) == {"x", "y"}


def test_roundrobin_takes_differing_subscriptions_like_0_10_2():
    """One cycle a-0, b-0 over x-0, x-1, y-0, y-1: y's turns skip a-0, which reads only x."""
    view = GroupView({"a": static(x=1), "b": static(x=1, y=1)}, {"x": range(2), "y": range(2)})
    plan = plan_rebalance(view, my_threads(view, "a"), ROUNDROBIN, "roundrobin")
    assert plan.claims == {TopicPartition("x", 0): "a-0"}
    assert plan.global_assignment == {TopicPartition("x", 0): "a-0", TopicPartition("x", 1): "b-0",
                                      TopicPartition("y", 0): "b-0", TopicPartition("y", 1): "b-0"}


def test_a_member_with_an_empty_subscription_owns_nothing():
    view = GroupView({"a": static(t=1), "e": static()}, {"t": range(3)})
    assert plan_rebalance(view, my_threads(view, "e"), RANGE).claims == {}
    assert len(plan_rebalance(view, my_threads(view, "a"), RANGE).claims) == 3


def test_missing_topic_node_means_no_partitions():
    view = GroupView({"a": static(gone=2)}, {})
    assert plan_rebalance(view, my_threads(view, "a"), RANGE).claims == {}


def test_release_is_eager_and_the_listener_gets_topic_to_partitions():
    owned = [TopicPartition("b", 1), TopicPartition("a", 2), TopicPartition("a", 0)]
    plan = plan_release(owned)
    assert plan.partitions == (TopicPartition("a", 0), TopicPartition("a", 2),
                               TopicPartition("b", 1))
    assert plan.listener_map == {"a": {0, 2}, "b": {1}}
    assert plan_release([]).listener_map == {}


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("assignor", ["legacy-range", "legacy-roundrobin"])
def test_members_deciding_independently_agree(seed, assignor):
    """PartitionAssignorTest's property: disjoint shares that cover every partition."""
    rng = random.Random(seed)
    topics = {f"topic-{i}": range(max(1, rng.randrange(12))) for i in range(rng.randrange(1, 6))}
    members = [f"g1c{i}" for i in range(1, rng.randrange(2, 8))]
    if assignor == "legacy-range":
        regs = {m: static(**{t: rng.randrange(1, 4) for t in topics}) for m in members}
    else:
        regs = {m: static(**dict.fromkeys(topics, 1)) for m in members}
    view = GroupView(regs, topics)
    shares = [plan_rebalance(view, my_threads(view, m), get_assignor(assignor)).claims
              for m in members]
    claimed = [tp for share in shares for tp in share]
    assert len(claimed) == len(set(claimed)), "a partition was claimed twice"
    assert set(claimed) == {TopicPartition(t, p) for t, ps in topics.items() for p in ps}
