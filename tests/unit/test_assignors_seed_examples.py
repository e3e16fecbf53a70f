"""Every worked example of the seed articles (the project's reference notes, 000-004), as a test.

000  "ConsumerPartitionAssignor" (Kafka 2.8 walk-through of Range, RoundRobin, Sticky,
     CooperativeSticky)
001  "kafka源码分析-consumer的分区策略" (Kafka 2.0.1 source analysis)
002  group coordinator overview: describes the four strategies, no worked example
003  "深入理解kafka核心设计与实践原理" reading notes (Range, RoundRobin, Sticky examples)
004  high-level (ZooKeeper) consumer source analysis: the legacy per-thread range example

The articles write ``t1p0`` for partition 0 of topic ``t1``; :func:`parts` reads that notation.

Two of the articles (000 and 003) repeat the StickyAssignor javadoc example of a member
leaving a group of three. Their figures predate KAFKA-9987 (Kafka 2.4/2.5/2.6), which gave
identical subscriptions the constrained path; from then on, and in the Kafka 3.x this package
follows, the freed partitions are dealt round-robin in partition order to the sorted survivors.
Those two tests assert what the articles promise (every survivor keeps all it had, 4 each) and
the exact Kafka 3.x distribution, and name the article's figure in a comment.
"""

from __future__ import annotations

import re

from zkconsumer.assignors import Subscription, TopicPartition, get_assignor
from zkconsumer.assignors._sticky_movements import PartitionMovements


def parts(text: str) -> list[TopicPartition]:
    """``"t1p0 t1p1"`` -> sorted partitions, in the articles' notation."""
    result = []
    for token in text.replace(",", " ").split():
        match = re.fullmatch(r"(t\d*)p(\d+)", token)
        assert match, token
        result.append(TopicPartition(match.group(1), int(match.group(2))))
    return sorted(result)


def subs(**topics_by_member: str) -> dict[str, Subscription]:
    return {m: Subscription(topics.split()) for m, topics in topics_by_member.items()}


def rejoin(previous: dict[str, list[TopicPartition]], subscriptions: dict[str, Subscription],
           members: list[str], generation: int = 1) -> dict[str, Subscription]:
    """The next round's subscriptions: each member reports what it owns now."""
    return {m: Subscription(subscriptions[m].topics, previous[m], generation) for m in members}


# --- Article 000 (Kafka 2.8) -----------------------------------------------------------------

def test_seed000_range_two_topics_three_partitions_two_members():
    """000, Range example: t1, t2 with 3 partitions each, members c1 and c2."""
    result = get_assignor("range").assign({"t1": 3, "t2": 3}, subs(c1="t1 t2", c2="t1 t2"))
    assert result == {"c1": parts("t1p0 t1p1 t2p0 t2p1"), "c2": parts("t1p2 t2p2")}


def test_seed000_roundrobin_two_topics_three_partitions_two_members():
    """000, RoundRobin example: the same group alternates partitions."""
    result = get_assignor("roundrobin").assign({"t1": 3, "t2": 3}, subs(c1="t1 t2", c2="t1 t2"))
    assert result == {"c1": parts("t1p0 t1p2 t2p1"), "c2": parts("t1p1 t2p0 t2p2")}


def test_seed000_roundrobin_unequal_subscriptions_leave_c3_overloaded():
    """000, RoundRobin with c1 on t1, c2 on t1+t2, c3 on t1+t2+t3 (1, 2, 2 partitions)."""
    result = get_assignor("roundrobin").assign(
        {"t1": 1, "t2": 2, "t3": 2}, subs(c1="t1", c2="t2 t1", c3="t1 t2 t3"))
    assert result == {"c1": parts("t1p0"), "c2": parts("t2p0"), "c3": parts("t2p1 t3p0 t3p1")}


def test_seed000_sticky_unequal_subscriptions_balance_c2_and_c3():
    """000, Sticky on the same group: t2p1 goes to c2, as the article says it should."""
    result = get_assignor("sticky").assign(
        {"t1": 1, "t2": 2, "t3": 2}, subs(c1="t1", c2="t2 t1", c3="t1 t2 t3"))
    assert result == {"c1": parts("t1p0"), "c2": parts("t2p0 t2p1"), "c3": parts("t3p0 t3p1")}


def test_seed000_sticky_four_topics_matches_roundrobin_then_survives_c1_leaving():
    """000, Sticky with t1..t4 (2 partitions each) and c1..c3, then c1 leaves."""
    counts = {"t1": 2, "t2": 2, "t3": 2, "t4": 2}
    group = subs(c1="t1 t2 t3 t4", c2="t1 t2 t3 t4", c3="t1 t2 t3 t4")
    first = get_assignor("sticky").assign(counts, group)
    expected_first = {"c1": parts("t1p0 t2p1 t4p0"), "c2": parts("t1p1 t3p0 t4p1"),
                      "c3": parts("t2p0 t3p1")}
    assert first == expected_first
    assert get_assignor("roundrobin").assign(counts, group) == expected_first

    survivors = rejoin(first, group, ["c2", "c3"])
    assert get_assignor("roundrobin").assign(counts, survivors) == {
        "c2": parts("t1p0 t2p0 t3p0 t4p0"), "c3": parts("t1p1 t2p1 t3p1 t4p1")}
    second = get_assignor("sticky").assign(counts, survivors)
    assert set(first["c2"]) <= set(second["c2"]) and set(first["c3"]) <= set(second["c3"])
    assert len(second["c2"]) == len(second["c3"]) == 4
    # Article (pre-KAFKA-9987 figure): c2 + t2p1, c3 + t1p0, t4p0. Kafka 3.x deals the freed
    # t1p0, t2p1, t4p0 round-robin to the sorted survivors still short of 4:
    assert second == {"c2": parts("t1p1 t3p0 t4p1 t1p0"), "c3": parts("t2p0 t3p1 t2p1 t4p0")}


def test_seed000_cooperative_sticky_moves_p2_to_c3_in_two_rebalances():
    """000, CooperativeSticky: c1 [p1, p2], c2 [p3], c3 joins. Sticky gives c3 p2 at once;
    cooperative first lets c1 revoke p2 (nobody holds it), the next rebalance gives it to c3.
    The article's p1..p3 are partitions 0..2 of one topic."""
    counts = {"t": 3}
    owned = {"c1": [TopicPartition("t", 0), TopicPartition("t", 1)],
             "c2": [TopicPartition("t", 2)], "c3": []}
    group = {m: Subscription(["t"], tps, 1) for m, tps in owned.items()}
    assert get_assignor("sticky").assign(counts, group) == {
        "c1": [("t", 0)], "c2": [("t", 2)], "c3": [("t", 1)]}

    first = get_assignor("cooperative-sticky").assign(counts, group)
    assert first == {"c1": [("t", 0)], "c2": [("t", 2)], "c3": []}
    second = get_assignor("cooperative-sticky").assign(
        counts, {m: Subscription(["t"], first[m], 2) for m in first})
    assert second == {"c1": [("t", 0)], "c2": [("t", 2)], "c3": [("t", 1)]}


# --- Article 001 (Kafka 2.0.1) ---------------------------------------------------------------

def test_seed001_example1_range_seven_partitions_three_consumers():
    """001, 例1: one topic of 7 partitions, 3 consumers: 3, 2, 2 consecutive partitions."""
    result = get_assignor("range").assign(
        {"t": 7}, subs(consumer0="t", consumer1="t", consumer2="t"))
    assert result == {"consumer0": parts("tp0 tp1 tp2"), "consumer1": parts("tp3 tp4"),
                      "consumer2": parts("tp5 tp6")}


EXAMPLE2_COUNTS = {"t0": 3, "t1": 2, "t2": 1}
EXAMPLE_SUBS = dict(consumer0="t0 t1 t2", consumer1="t0 t1", consumer2="t2")


def test_seed001_example2_range_leaves_consumer2_idle():
    """001, 例2: range hands t2's only partition to consumer0; consumer2 gets nothing."""
    result = get_assignor("range").assign(EXAMPLE2_COUNTS, subs(**EXAMPLE_SUBS))
    assert result == {"consumer0": parts("t0p0 t0p1 t1p0 t2p0"),
                      "consumer1": parts("t0p2 t1p1"), "consumer2": []}


def test_seed001_example2_roundrobin_rounds():
    """001, 例2 with RoundRobin (the article's table of three rounds)."""
    result = get_assignor("roundrobin").assign(EXAMPLE2_COUNTS, subs(**EXAMPLE_SUBS))
    assert result == {"consumer0": parts("t0p0 t0p2 t1p1"), "consumer1": parts("t0p1 t1p0"),
                      "consumer2": parts("t2p0")}


EXAMPLE3_COUNTS = {"t0": 4, "t1": 3, "t2": 2}


def test_seed001_example3_roundrobin_is_still_unbalanced():
    """001, 例3: t0, t1, t2 with 4, 3, 2 partitions; consumer0 ends with five."""
    result = get_assignor("roundrobin").assign(EXAMPLE3_COUNTS, subs(**EXAMPLE_SUBS))
    assert result == {"consumer0": parts("t0p0 t0p2 t1p0 t1p2 t2p1"),
                      "consumer1": parts("t0p1 t0p3 t1p1"), "consumer2": parts("t2p0")}


def test_seed001_example3_sticky_balances_then_consumer3_joins():
    """001, 例3 with StickyAssignor, then consumer3 (subscribed to t0 only) joins: the
    walk-through moves t0p0 from consumer0 and t0p1 from consumer1 to consumer3."""
    sticky = get_assignor("sticky")
    group = subs(**EXAMPLE_SUBS)
    first = sticky.assign(EXAMPLE3_COUNTS, group)
    assert first == {"consumer0": parts("t0p0 t0p2 t1p0 t1p2"),
                     "consumer1": parts("t0p1 t0p3 t1p1"), "consumer2": parts("t2p0 t2p1")}

    joined = rejoin(first, group, list(group))
    joined["consumer3"] = Subscription(["t0"])
    second = sticky.assign(EXAMPLE3_COUNTS, joined)
    assert second == {"consumer0": parts("t0p2 t1p0 t1p2"), "consumer1": parts("t0p3 t1p1"),
                      "consumer2": parts("t2p0 t2p1"), "consumer3": parts("t0p0 t0p1")}


def test_seed001_movement_log_undoes_the_reverse_move():
    """001, getTheActualPartitionToBeMoved comments: moving p0 from A to B after p1 went from
    B to A moves p1 back instead; and if p0 itself came A -> C, moving it C -> B is answered
    the same way (the log looks at where p0 came from)."""
    p0, p1 = TopicPartition("t", 0), TopicPartition("t", 1)
    log = PartitionMovements()
    assert log.partition_to_move(p0, "A", "B") == p0  # nothing moved yet
    log.move(p1, "B", "A")
    assert log.partition_to_move(p0, "A", "B") == p1

    log = PartitionMovements()
    log.move(p0, "A", "C")
    log.move(p1, "B", "A")
    assert log.partition_to_move(p0, "C", "B") == p1


# --- Article 002 has no worked example; Article 003 (reading notes) -------------------------

def test_seed003_range_example1_four_partitions_each():
    """003, Range ①: C0, C1 on t0, t1 with 4 partitions each (the article's "t1p1, t1p1" is a
    typo for t1p0, t1p1)."""
    result = get_assignor("range").assign({"t0": 4, "t1": 4}, subs(C0="t0 t1", C1="t0 t1"))
    assert result == {"C0": parts("t0p0 t0p1 t1p0 t1p1"), "C1": parts("t0p2 t0p3 t1p2 t1p3")}


def test_seed003_range_example2_three_partitions_each_is_lopsided():
    """003, Range ②: with 3 partitions per topic C0 gets 4 and C1 gets 2."""
    result = get_assignor("range").assign({"t0": 3, "t1": 3}, subs(C0="t0 t1", C1="t0 t1"))
    assert result == {"C0": parts("t0p0 t0p1 t1p0 t1p1"), "C1": parts("t0p2 t1p2")}


def test_seed003_roundrobin_example1_identical_subscriptions():
    """003, RoundRobin ①: C0, C1 on t0, t1 with 3 partitions each."""
    result = get_assignor("roundrobin").assign({"t0": 3, "t1": 3}, subs(C0="t0 t1", C1="t0 t1"))
    assert result == {"C0": parts("t0p0 t0p2 t1p1"), "C1": parts("t0p1 t1p0 t1p2")}


NESTED_COUNTS = {"t0": 1, "t1": 2, "t2": 3}
NESTED_SUBS = dict(C0="t0", C1="t0 t1", C2="t0 t1 t2")


def test_seed003_roundrobin_example2_nested_subscriptions():
    """003, RoundRobin ②: C0 on t0, C1 on t0+t1, C2 on t0+t1+t2 (1, 2, 3 partitions)."""
    result = get_assignor("roundrobin").assign(NESTED_COUNTS, subs(**NESTED_SUBS))
    assert result == {"C0": parts("t0p0"), "C1": parts("t1p0"),
                      "C2": parts("t1p1 t2p0 t2p1 t2p2")}


def test_seed003_sticky_example3_nested_subscriptions_balanced():
    """003, Sticky ③: the same group; sticky gives t1p1 to C1 instead of C2."""
    result = get_assignor("sticky").assign(NESTED_COUNTS, subs(**NESTED_SUBS))
    assert result == {"C0": parts("t0p0"), "C1": parts("t1p0 t1p1"),
                      "C2": parts("t2p0 t2p1 t2p2")}


def test_seed003_sticky_examples1_and_2_c1_leaves():
    """003, Sticky ① and ②: C0..C2 on t0..t3 (2 partitions each), then C1 leaves."""
    counts = {"t0": 2, "t1": 2, "t2": 2, "t3": 2}
    group = subs(C0="t0 t1 t2 t3", C1="t0 t1 t2 t3", C2="t0 t1 t2 t3")
    first = get_assignor("sticky").assign(counts, group)
    assert first == {"C0": parts("t0p0 t1p1 t3p0"), "C1": parts("t0p1 t2p0 t3p1"),
                     "C2": parts("t1p0 t2p1")}
    assert get_assignor("roundrobin").assign(counts, group) == first

    survivors = rejoin(first, group, ["C0", "C2"])
    assert get_assignor("roundrobin").assign(counts, survivors) == {
        "C0": parts("t0p0 t1p0 t2p0 t3p0"), "C2": parts("t0p1 t1p1 t2p1 t3p1")}
    second = get_assignor("sticky").assign(counts, survivors)
    assert set(first["C0"]) <= set(second["C0"]) and set(first["C2"]) <= set(second["C2"])
    assert len(second["C0"]) == len(second["C2"]) == 4
    # Article (pre-KAFKA-9987 figure): C0 + t2p0, C2 + t0p1, t3p1. Kafka 3.x deals the freed
    # t0p1, t2p0, t3p1 round-robin to the sorted survivors still short of 4:
    assert second == {"C0": parts("t0p0 t1p1 t3p0 t0p1"), "C2": parts("t1p0 t2p1 t2p0 t3p1")}


# --- Article 004 (ZooKeeper consumer) --------------------------------------------------------

def test_seed004_legacy_range_two_consumers_two_streams_five_partitions():
    """004, PartitionAssignor section: C1 and C2 with two streams each, partitions p0-p4:
    p0, p1 -> C1-0; p2 -> C1-1; p3 -> C2-0; p4 -> C2-1."""
    owners = get_assignor("legacy-range").assign_threads(
        partitions_for_topic={"t": [0, 1, 2, 3, 4]},
        consumer_threads_per_topic={"t": ["C2-1", "C1-0", "C2-0", "C1-1"]})
    assert owners == {TopicPartition("t", 0): "C1-0", TopicPartition("t", 1): "C1-0",
                      TopicPartition("t", 2): "C1-1", TopicPartition("t", 3): "C2-0",
                      TopicPartition("t", 4): "C2-1"}
