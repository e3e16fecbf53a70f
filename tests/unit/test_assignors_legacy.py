"""The ZooKeeper consumer's assignors: thread ordering, hash ordering, the 0.10.1 rule, and
ports of Kafka's ``PartitionAssignorTest`` (seeded)."""

from __future__ import annotations

import logging
import random

import pytest

from zkconsumer.assignors import (
    Subscription,
    TopicPartition,
    get_assignor,
    sorted_thread_ids,
)
from zkconsumer.identity import consumer_id_of


def owners_by_partition(owners: dict[TopicPartition, str]) -> dict[str, str]:
    return {f"{tp.topic}-{tp.partition}": thread for tp, thread in owners.items()}


def test_thread_ids_sort_as_whole_strings_not_by_number():
    assert sorted_thread_ids(["c-2", "c-10", "c-1", "c-0"]) == ["c-0", "c-1", "c-10", "c-2"]
    assert sorted_thread_ids(["g_host-10-0", "g_host-1-5"]) == ["g_host-1-5", "g_host-10-0"]


def test_thread_ids_sort_by_utf16_code_units_like_java():
    # U+1F600 is a surrogate pair (0xD83D...) in UTF-16 and sorts below U+FF5E in Java, although
    # its code point is larger.
    assert sorted_thread_ids(["c\uff5e-0", "c\U0001f600-0"]) == ["c\U0001f600-0", "c\uff5e-0"]


def test_consumer_id_is_everything_before_the_last_dash():
    assert consumer_id_of("g1_host-1497000000000-1a2b3c4d-3") == "g1_host-1497000000000-1a2b3c4d"
    assert consumer_id_of("group1_consumer1-0") == "group1_consumer1"


def test_legacy_range_twelve_streams_puts_thread_10_third():
    """Spec 4.2 ordering trap: threads sort c-0, c-1, c-10, c-11, c-2 ... so c-10 gets p2."""
    owners = get_assignor("legacy-range").assign_threads(
        {"t": list(range(12))}, {"t": [f"c-{i}" for i in range(12)]})
    assert owners[TopicPartition("t", 2)] == "c-10"
    assert owners[TopicPartition("t", 3)] == "c-11"
    assert owners[TopicPartition("t", 4)] == "c-2"


def test_legacy_range_idle_threads_warn_like_the_original(caplog):
    caplog.set_level(logging.WARNING, logger="zkconsumer.assignors.legacy")
    owners = get_assignor("legacy-range").assign_threads({"t": [0]}, {"t": ["a-0", "a-1"]})
    assert owners == {TopicPartition("t", 0): "a-0"}
    assert "No broker partitions consumed by consumer thread a-1 for topic t" in caplog.text


def test_legacy_range_many_idle_threads_share_one_warning_per_topic(caplog):
    caplog.set_level(logging.WARNING, logger="zkconsumer.assignors.legacy")
    threads = [f"a-{i}" for i in range(30)]
    owners = get_assignor("legacy-range").assign_threads({"t": [0, 1]}, {"t": threads})
    assert set(owners.values()) == {"a-0", "a-1"}
    idle_lines = [r.getMessage() for r in caplog.records
                  if "No broker partitions" in r.getMessage()]
    assert idle_lines == ["No broker partitions consumed by consumer threads a-10, a-11, a-12, "
                          "a-13, a-14, a-15, a-16, a-17, a-18, a-19 and 18 more for topic t"]


def test_legacy_range_sorts_partition_ids_numerically():
    owners = get_assignor("legacy-range").assign_threads(
        {"t": [10, 2, 1]}, {"t": ["a-0", "a-1"]})
    assert owners_by_partition(owners) == {"t-1": "a-0", "t-2": "a-0", "t-10": "a-1"}


def test_legacy_roundrobin_spec_example_three_threads_four_partitions():
    """Spec 4.3: g_c1 (2 streams) and g_c2 (1 stream), topic t with 4 partitions."""
    owners = get_assignor("legacy-roundrobin").assign_threads(
        {"t": [0, 1, 2, 3]}, {"t": ["g_c1-0", "g_c1-1", "g_c2-0"]})
    assert owners_by_partition(owners) == {"t-0": "g_c1-0", "t-1": "g_c1-1", "t-2": "g_c2-0",
                                           "t-3": "g_c1-0"}


def test_legacy_roundrobin_orders_partitions_by_java_hash_not_by_name():
    """hash("[topic1,0]") = -315570884 < hash("[t,0]") = 87540032: topic1-0 is dealt first."""
    owners = get_assignor("legacy-roundrobin").assign_threads(
        {"t": [0], "topic1": [0]}, {"t": ["a-0", "a-1"], "topic1": ["a-0", "a-1"]})
    assert owners_by_partition(owners) == {"topic1-0": "a-0", "t-0": "a-1"}


def test_legacy_roundrobin_equal_hashes_keep_topic_order():
    """"[Aa,1]" and "[BB,1]" share a hash; the tie keeps topic, then partition order."""
    owners = get_assignor("legacy-roundrobin").assign_threads(
        {"BB": [1], "Aa": [1]}, {"BB": ["x-0", "x-1"], "Aa": ["x-0", "x-1"]})
    assert owners_by_partition(owners) == {"Aa-1": "x-0", "BB-1": "x-1"}


def test_legacy_roundrobin_skips_threads_not_subscribed_to_a_topic():
    """0.10.2's rule: one cycle over all threads; b's turn skips g_c2-0, which reads only a."""
    owners = get_assignor("legacy-roundrobin").assign_threads(
        {"a": [0, 1], "b": [0, 1]},
        {"a": ["g_c1-0", "g_c2-0"], "b": ["g_c1-0"]})
    assert owners_by_partition(owners) == {"a-0": "g_c1-0", "a-1": "g_c2-0", "b-0": "g_c1-0",
                                           "b-1": "g_c1-0"}


def test_legacy_roundrobin_matches_the_original_0_10_2_on_different_subscriptions():
    """Decided by two original 0.10.2.2 members (a: topic ta, 1 stream; c: tb, 2 streams)."""
    owners = get_assignor("legacy-roundrobin").assign_threads(
        {"ta": [0, 1, 2], "tb": [0, 1, 2]},
        {"ta": ["gorig_a-0"], "tb": ["gorig_c-0", "gorig_c-1"]})
    assert owners_by_partition(owners) == {
        "ta-0": "gorig_a-0", "ta-1": "gorig_a-0", "ta-2": "gorig_a-0",
        "tb-0": "gorig_c-0", "tb-1": "gorig_c-1", "tb-2": "gorig_c-0"}


def test_legacy_roundrobin_different_stream_counts_across_topics():
    # Hash order a-0, b-0; b's turn falls on g_c1-1, which b does not have.
    owners = get_assignor("legacy-roundrobin").assign_threads(
        {"a": [0], "b": [0]},
        {"a": ["g_c1-0", "g_c1-1", "g_c2-0"], "b": ["g_c1-0", "g_c2-0"]})
    assert owners_by_partition(owners) == {"a-0": "g_c1-0", "b-0": "g_c2-0"}


def test_legacy_roundrobin_accepts_different_stream_counts_between_consumers():
    """The rule is per consumer across topics: g_c1 with 2 streams and g_c2 with 1 is fine."""
    owners = get_assignor("legacy-roundrobin").assign_threads(
        {"a": [0, 1], "b": [0, 1]},
        {"a": ["g_c1-0", "g_c1-1", "g_c2-0"], "b": ["g_c2-0", "g_c1-1", "g_c1-0"]})
    assert len(owners) == 4 and set(owners.values()) == {"g_c1-0", "g_c1-1", "g_c2-0"}


def test_legacy_assign_treats_subscription_keys_as_threads():
    result = get_assignor("legacy-range").assign(
        {"t": 5}, {t: Subscription(["t"]) for t in ["C2-1", "C1-0", "C2-0", "C1-1"]})
    assert result == {"C1-0": [("t", 0), ("t", 1)], "C1-1": [("t", 2)], "C2-0": [("t", 3)],
                      "C2-1": [("t", 4)]}


def test_legacy_roundrobin_assign_gives_a_topic_only_to_its_subscribers():
    """Hash order a-0 .. a-3, b-0, b-1 dealt over c1, c2, c3: g_c3-0 gets a-2 on its first
    turn, and b-1, arriving on its second, passes it by for g_c1-0."""
    result = get_assignor("legacy-roundrobin").assign({"a": 4, "b": 2}, {
        "g_c1-0": Subscription(["a", "b"]), "g_c2-0": Subscription(["a", "b"]),
        "g_c3-0": Subscription(["a"])})
    assert result == {"g_c1-0": [("a", 0), ("a", 3), ("b", 1)], "g_c2-0": [("a", 1), ("b", 0)],
                      "g_c3-0": [("a", 2)]}


def test_legacy_roundrobin_with_no_subscribed_topic_assigns_nothing():
    assert get_assignor("legacy-roundrobin").assign_threads({"t": [0]}, {}) == {}
    assert get_assignor("legacy-roundrobin").assign({"t": 1}, {"a-0": Subscription([])}) == {
        "a-0": []}


# --- PartitionAssignorTest ports ------------------------------------------------------------

def _scenario(rng: random.Random, *, wildcard: bool, same_streams: bool):
    """A group as the original test built it: 1-10 members, 0-100 topics of 8-119 partitions."""
    members = [f"g1c{i}" for i in range(1, max(1, rng.randrange(11)) + 1)]
    topics = [f"topic-{i}" for i in range(1, max(0, rng.randrange(101)) + 1)]
    partitions = {t: list(range(max(8, rng.randrange(120)))) for t in topics}
    threads: dict[str, list[str]] = {t: [] for t in topics}
    for member in members:
        member_streams = max(1, rng.randrange(9)) if wildcard else 1
        for topic in topics:
            streams = member_streams if (wildcard or same_streams) else max(1, rng.randrange(9))
            threads[topic].extend(f"{member}-{i}" for i in range(streams))
    return partitions, threads


def _assign_as_each_member_would(assignor, partitions, threads, rng, members_seen=4):
    """Each member reads the group in its own order; every member must compute the same."""
    results = []
    for _ in range(members_seen):
        shuffled = {t: rng.sample(ts, len(ts)) for t, ts in rng.sample(list(threads.items()),
                                                                        len(threads))}
        results.append(assignor.assign_threads(partitions, shuffled))
    assert all(r == results[0] for r in results)
    return results[0]


def _assert_unique_and_complete(partitions, owners):
    expected = {TopicPartition(t, p) for t, ps in partitions.items() for p in ps}
    assert expected, "the seeded scenario must have partitions to check"
    assert set(owners) == expected  # a dict key cannot repeat, so uniqueness holds


@pytest.mark.parametrize("case", range(3))
def test_testRoundRobinPartitionAssignor(case):
    rng = random.Random(1000 + case)
    partitions, threads = _scenario(rng, wildcard=True, same_streams=True)
    owners = _assign_as_each_member_would(get_assignor("legacy-roundrobin"), partitions,
                                          threads, rng)
    _assert_unique_and_complete(partitions, owners)
    counts: dict[str, int] = {}
    for thread in owners.values():
        counts[thread] = counts.get(thread, 0) + 1
    if counts:
        assert max(counts.values()) - min(counts.values()) <= 1


@pytest.mark.parametrize("case", range(3))
def test_testRoundRobinPartitionAssignorStaticSubscriptions(case):
    rng = random.Random(2000 + case)
    partitions, threads = _scenario(rng, wildcard=False, same_streams=True)
    owners = _assign_as_each_member_would(get_assignor("legacy-roundrobin"), partitions,
                                          threads, rng)
    _assert_unique_and_complete(partitions, owners)
    counts: dict[str, int] = {}
    for thread in owners.values():
        counts[thread] = counts.get(thread, 0) + 1
    if counts:
        assert max(counts.values()) - min(counts.values()) <= 1


def test_testRoundRobinPartitionAssignorUnbalancedStaticSubscriptions():
    """0.10.2 allows members on different topic sets: every partition goes to exactly one
    thread subscribed to its topic, and every member with topics gets some."""
    members = [f"g1c{i}" for i in range(1, 8)]
    threads: dict[str, list[str]] = {}
    for c, member in enumerate(members, start=1):
        for t in range(1, 10 - c % 5 + 1):
            threads.setdefault(f"topic-{t}", []).extend(f"{member}-{i}" for i in range(3))
    partitions = {t: list(range(10)) for t in threads}
    owners = get_assignor("legacy-roundrobin").assign_threads(partitions, threads)
    assert set(owners) == {TopicPartition(t, p) for t, ps in partitions.items() for p in ps}
    assert all(owner in threads[tp.topic] for tp, owner in owners.items())
    assert {o.rsplit("-", 1)[0] for o in owners.values()} == set(members)


@pytest.mark.parametrize("case", range(3))
def test_testRangePartitionAssignor(case):
    rng = random.Random(3000 + case)
    partitions, threads = _scenario(rng, wildcard=False, same_streams=False)
    owners = _assign_as_each_member_would(get_assignor("legacy-range"), partitions, threads, rng)
    _assert_unique_and_complete(partitions, owners)
    for topic, ts in threads.items():
        per_thread = [sum(1 for tp, t in owners.items() if tp.topic == topic and t == thread)
                      for thread in set(ts)]
        assert max(per_thread) - min(per_thread) <= 1
