"""Sticky and cooperative-sticky scenarios: generations, revocation, the general path's
preferences, and the results at the lab's largest size (its speed is measured by
``benchmarks/assignors.py``, not asserted here)."""

from __future__ import annotations

import pytest

from zkconsumer.assignors import Subscription, TopicPartition, get_assignor


def tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)


def test_general_path_higher_generation_keeps_a_partition_two_members_claim():
    """Mixed subscriptions: A (generation 5) and B (generation 4) both report t-0; A keeps it
    and B, whose claim was stale, does not get it back."""
    subs = {"A": Subscription(["t"], [tp("t", 0)], 5),
            "B": Subscription(["t", "u"], [tp("t", 0), tp("u", 0)], 4)}
    for name in ("sticky", "cooperative-sticky"):
        result = get_assignor(name).assign({"t": 2, "u": 1}, subs)
        assert tp("t", 0) in result["A"]
        assert tp("t", 0) not in result["B"]


def test_member_of_an_older_generation_keeps_what_nobody_else_claims():
    """Kafka 3.5+ (KAFKA-14639): only contested claims of an older generation are dropped."""
    subs = {"A": Subscription(["t"], [tp("t", 0), tp("t", 1)], 2),
            "B": Subscription(["t"], [tp("t", 2)], 3)}
    result = get_assignor("sticky").assign({"t": 3}, subs)
    assert result == {"A": [tp("t", 0), tp("t", 1)], "B": [tp("t", 2)]}


def test_equal_generation_claims_are_dropped_and_cooperative_withholds_the_partition():
    subs = {"A": Subscription(["t"], [tp("t", 0), tp("t", 1)], 7),
            "B": Subscription(["t"], [tp("t", 0), tp("t", 2)], 7),
            "C": Subscription(["t"], [tp("t", 3)], 7)}
    sticky = get_assignor("sticky").assign({"t": 4}, subs)
    coop = get_assignor("cooperative-sticky").assign({"t": 4}, subs)
    # Neither claimant keeps t-0: all three keep one partition, and the unowned t-0 is dealt
    # to the first member (sorted) allowed a second one, which happens to be claimant A.
    assert sticky == {"A": [tp("t", 0), tp("t", 1)], "B": [tp("t", 2)], "C": [tp("t", 3)]}
    # B may still be consuming t-0, so even A must wait for the follow-up rebalance.
    assert coop == {"A": [tp("t", 1)], "B": [tp("t", 2)], "C": [tp("t", 3)]}


def test_partition_returns_to_its_previous_owner_of_an_older_generation():
    """General path: when B (generation 1) owned t-1 before A (generation 2) did, and A has to
    shed partitions, t-1 goes back to B rather than to the least-loaded member C."""
    def group(b_claims: list[TopicPartition]) -> dict[str, Subscription]:
        return {"A": Subscription(["t"], [tp("t", i) for i in range(6)], 2),
                "B": Subscription(["t", "u"], b_claims + [tp("u", 0), tp("u", 1)], 1),
                "C": Subscription(["t"])}
    counts = {"t": 6, "u": 2}
    with_history = get_assignor("sticky").assign(counts, group([tp("t", 1)]))
    assert tp("t", 1) in with_history["B"]
    without_history = get_assignor("sticky").assign(counts, group([]))
    assert tp("t", 1) in without_history["C"]
    for result in (with_history, without_history):
        assert sorted(len(parts) for parts in result.values()) == [2, 3, 3]


def test_unsubscribing_a_topic_revokes_only_that_topics_partitions():
    counts = {"t": 4, "u": 4}
    first = get_assignor("sticky").assign(counts, {m: Subscription(["t", "u"]) for m in "ABC"})
    subs = {m: Subscription(["t", "u"], first[m], 1) for m in "AB"}
    subs["C"] = Subscription(["t"], first["C"], 1)
    assert first == {"A": [tp("t", 0), tp("t", 3), tp("u", 2)],
                     "B": [tp("t", 1), tp("u", 0), tp("u", 3)], "C": [tp("t", 2), tp("u", 1)]}
    second = get_assignor("sticky").assign(counts, subs)
    # As in Java's general path: u-1 first goes to the least-loaded subscriber of u (A), then
    # balancing moves one t partition from A, now at 4, to C. Two partitions move, no more.
    assert second == {"A": [tp("t", 3), tp("u", 1), tp("u", 2)],
                      "B": [tp("t", 1), tp("u", 0), tp("u", 3)], "C": [tp("t", 0), tp("t", 2)]}
    # Cooperative: u-1 is still C's and t-0 still A's until they revoke them.
    coop = get_assignor("cooperative-sticky").assign(counts, subs)
    assert coop == {"A": [tp("t", 3), tp("u", 2)], "B": [tp("t", 1), tp("u", 0), tp("u", 3)],
                    "C": [tp("t", 2)]}


def test_owned_partitions_of_a_deleted_topic_are_dropped():
    subs = {m: Subscription(["t", "gone"], [tp("gone", 0), tp("t", i)], 3)
            for i, m in enumerate("AB")}
    result = get_assignor("sticky").assign({"t": 4}, subs)
    assert result == {"A": [tp("t", 0), tp("t", 2)], "B": [tp("t", 1), tp("t", 3)]}


def test_owned_partition_beyond_the_topic_size_is_ignored():
    """Java would hand out a claimed partition number that does not exist; here it is dropped."""
    subs = {"A": Subscription(["t"], [tp("t", 9)], 1), "B": Subscription(["t"], [], 1)}
    result = get_assignor("sticky").assign({"t": 2}, subs)
    assert result == {"A": [tp("t", 0)], "B": [tp("t", 1)]}


def test_empty_subscription_does_not_count_as_identical():
    """Java would take the constrained path here (its equality check restarts after an empty
    subscription) and give the idle member partitions it never asked for."""
    result = get_assignor("sticky").assign({"t": 4}, {"A": Subscription([]),
                                                      "B": Subscription(["t"])})
    assert result == {"A": [], "B": [tp("t", p) for p in range(4)]}


@pytest.mark.parametrize("name", ["sticky", "cooperative-sticky"])
def test_rebalance_without_change_moves_nothing(name):
    counts = {"t": 7, "u": 3, "v": 5}
    topics = {"A": ["t", "u"], "B": ["t", "v"], "C": ["u", "v"], "D": ["t", "u", "v"]}
    first = get_assignor(name).assign(counts, {m: Subscription(t) for m, t in topics.items()})
    again = get_assignor(name).assign(
        counts, {m: Subscription(t, first[m], 1) for m, t in topics.items()})
    assert again == first


def _group(members: int, partitions: int, topics: int = 10, mixed: bool = False):
    names = [f"topic-{i:02d}" for i in range(topics)]
    counts = {t: partitions // topics for t in names}
    subs = {}
    for i in range(members):
        chosen = names
        if mixed:
            chosen = [t for j, t in enumerate(names) if (i * 7 + j * 3) % 5] or names[:1]
        subs[f"member-{i:05d}"] = Subscription(chosen)
    return counts, subs


@pytest.mark.parametrize("name", ["sticky", "cooperative-sticky"])
def test_thousand_members_ten_thousand_partitions_balance_and_keep_their_partitions(name):
    """The benchmark's largest size: identical subscriptions at (1000, 10000), then a rebalance
    after 10% of the members left (the time each takes is ``benchmarks/assignors.py``'s)."""
    counts, subs = _group(1000, 10000)
    first = get_assignor(name).assign(counts, subs)
    survivors = {m: Subscription(s.topics, first[m], 1) for i, (m, s) in enumerate(subs.items())
                 if i % 10}
    second = get_assignor(name).assign(counts, survivors)
    assert {len(parts) for parts in first.values()} == {10}
    if name == "sticky":
        assert {len(parts) for parts in second.values()} == {11, 12}
    for member, parts in second.items():
        assert set(first[member]) <= set(parts)


def test_general_path_at_a_thousand_mixed_members_assigns_all_and_keeps_what_it_had():
    counts, subs = _group(1000, 10000, mixed=True)
    first = get_assignor("sticky").assign(counts, subs)
    survivors = {m: Subscription(s.topics, first[m], 1) for i, (m, s) in enumerate(subs.items())
                 if i % 10}
    second = get_assignor("sticky").assign(counts, survivors)
    assert sum(len(parts) for parts in second.values()) == 10000
    kept = sum(len(set(first[m]) & set(second[m])) for m in survivors)
    assert kept == sum(len(first[m]) for m in survivors)
