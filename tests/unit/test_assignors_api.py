"""The package contract other code relies on: names, records, input checks, output shape."""

from __future__ import annotations

import dataclasses

import pytest

from zkconsumer.assignors import (
    ASSIGNORS,
    AssignmentError,
    PartitionAssignor,
    Subscription,
    TopicPartition,
    get_assignor,
)
from zkconsumer.errors import ZkConsumerError

ALL_NAMES = ["range", "roundrobin", "sticky", "cooperative-sticky", "legacy-range",
             "legacy-roundrobin"]


def test_all_six_strategies_are_registered():
    assert list(ASSIGNORS) == ALL_NAMES


@pytest.mark.parametrize("name", ALL_NAMES)
def test_get_assignor_returns_a_fresh_instance_with_its_name(name):
    first, second = get_assignor(name), get_assignor(name)
    assert isinstance(first, PartitionAssignor)
    assert first is not second
    assert first.name == name
    assert first.protocol in ("eager", "cooperative")
    assert first.protocol in first.supported_protocols


def test_only_cooperative_sticky_speaks_the_cooperative_protocol():
    protocols = {name: get_assignor(name).protocol for name in ALL_NAMES}
    assert protocols == {name: "cooperative" if name == "cooperative-sticky" else "eager"
                         for name in ALL_NAMES}
    assert get_assignor("cooperative-sticky").supported_protocols == ("cooperative", "eager")


@pytest.mark.parametrize("bad", ["Range", "sticky ", "", "uniform", None])
def test_unknown_assignor_name_lists_the_valid_ones(bad):
    with pytest.raises(ValueError) as err:
        get_assignor(bad)  # type: ignore[arg-type]
    assert isinstance(err.value, ZkConsumerError)
    for name in ALL_NAMES:
        assert name in str(err.value)
    assert repr(bad) in str(err.value)


def test_topic_partition_is_a_sortable_named_tuple():
    tp = TopicPartition("t", 3)
    assert (tp.topic, tp.partition) == ("t", 3) == tp
    assert sorted([TopicPartition("t", 10), TopicPartition("s", 5), TopicPartition("t", 2)]) == [
        ("s", 5), ("t", 2), ("t", 10)]


def test_subscription_accepts_lists_and_stores_tuples():
    sub = Subscription(topics=["t0", "t1"], owned_partitions=[("t0", 1)], generation=4)
    assert sub.topics == ("t0", "t1")
    assert sub.owned_partitions == (TopicPartition("t0", 1),)
    assert isinstance(sub.owned_partitions[0], TopicPartition)
    assert sub.generation == 4 and sub.group_instance_id is None
    assert sub == Subscription(("t0", "t1"), (TopicPartition("t0", 1),), 4)
    assert hash(sub) == hash(Subscription(("t0", "t1"), (TopicPartition("t0", 1),), 4))


def test_subscription_defaults_and_duplicates():
    sub = Subscription(["t", "t", "u"], [("t", 0), ("t", 0)])
    assert sub.topics == ("t", "u")
    assert sub.owned_partitions == (("t", 0),)
    assert sub.generation is None


def test_subscription_is_frozen():
    sub = Subscription(["t"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        sub.topics = ("u",)  # type: ignore[misc]


@pytest.mark.parametrize("kwargs, fragment", [
    ({"topics": "orders"}, "got the string 'orders'"),
    ({"topics": ["t", 3]}, "must be strings"),
    ({"topics": ["t"], "owned_partitions": [("t", -1)]}, "partition >= 0"),
    ({"topics": ["t"], "owned_partitions": ["t0"]}, "got 't0'"),
    ({"topics": ["t"], "generation": "7"}, "generation"),
    ({"topics": ["t"], "generation": True}, "generation"),
])
def test_malformed_subscriptions_are_refused_with_the_value(kwargs, fragment):
    with pytest.raises(AssignmentError, match=fragment):
        Subscription(**kwargs)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_every_member_appears_with_sorted_partitions(name):
    result = get_assignor(name).assign(
        partitions_per_topic={"b": 3, "a": 2},
        subscriptions={"z-0": Subscription(["a", "b"]), "y-0": Subscription(["a", "b"]),
                       "x-0": Subscription(["a", "b"])})
    assert list(result) == ["x-0", "y-0", "z-0"]
    for partitions in result.values():
        assert partitions == sorted(partitions)
    assert sorted(tp for parts in result.values() for tp in parts) == [
        ("a", 0), ("a", 1), ("b", 0), ("b", 1), ("b", 2)]


@pytest.mark.parametrize("name", ALL_NAMES)
def test_unsubscribed_and_missing_topics_are_ignored(name):
    result = get_assignor(name).assign(
        {"t": 2, "nobody-reads-this": 5},
        {"m-0": Subscription(["t", "not-created-yet"]),
         "m-1": Subscription(["t", "not-created-yet"])})
    assigned = [tp for parts in result.values() for tp in parts]
    assert sorted(assigned) == [("t", 0), ("t", 1)]


@pytest.mark.parametrize("name", ALL_NAMES)
def test_member_with_nothing_to_read_still_appears(name):
    """Also for legacy-roundrobin: a consumer registered with an empty topic map has no
    threads on any topic, so the original's same-subscription check never sees it."""
    subs = {"idle-0": Subscription([]), "busy-0": Subscription(["t"])}
    assert get_assignor(name).assign({"t": 1}, subs) == {"busy-0": [("t", 0)], "idle-0": []}


@pytest.mark.parametrize("name", ALL_NAMES)
def test_no_members_no_assignment(name):
    assert get_assignor(name).assign({"t": 4}, {}) == {}


@pytest.mark.parametrize("counts, fragment", [
    ({"t": -1}, "'t' must be an int >= 0, got -1"),
    ({"t": 2.0}, "'t' must be an int >= 0, got 2.0"),
    ({3: 1}, "topic names must be strings"),
])
def test_bad_partition_counts_are_refused(counts, fragment):
    with pytest.raises(AssignmentError, match=fragment):
        get_assignor("range").assign(counts, {"m": Subscription(["t"])})


def test_subscription_values_must_be_subscriptions():
    with pytest.raises(AssignmentError, match="member 'm' must be a Subscription"):
        get_assignor("range").assign({"t": 1}, {"m": ["t"]})  # type: ignore[dict-item]


@pytest.mark.parametrize("name", ALL_NAMES)
def test_one_instance_serves_many_groups_without_carrying_state(name):
    """Many connectors share a process: a reused instance answers like a fresh one."""
    group_a = ({"t": 6}, {f"a{i}-0": Subscription(["t"], [("t", i)], 3) for i in range(3)})
    group_b = ({"t": 6, "u": 2}, {f"b{i}-0": Subscription(["t", "u"]) for i in range(4)})
    shared = get_assignor(name)
    shared.assign(*group_a)
    assert shared.assign(*group_b) == get_assignor(name).assign(*group_b)
    assert shared.assign(*group_a) == get_assignor(name).assign(*group_a)
