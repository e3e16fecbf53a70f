"""Invariants every strategy must keep, checked on generated groups (Hypothesis, derandomized).

Groups mix awkward member ids (``c-10`` vs ``c-2``, non-ASCII, non-BMP), topics nobody
subscribes to, subscribed topics that do not exist, empty subscriptions, owned partitions of
vanished partitions, and random generations.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zkconsumer.assignors import Subscription, TopicPartition, get_assignor

SETTINGS = settings(derandomize=True, max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

MEMBERS = ["C0", "C1", "C2", "c-2", "c-10", "consumer1", "consumer2", "m\u00e9-0",
           "\U0001d4b3-0", "\uff5e-0", "A", "zz-1"]
TOPICS = ["t0", "t1", "t2", "t3"]
ALL_NAMES = ["range", "roundrobin", "sticky", "cooperative-sticky", "legacy-range",
             "legacy-roundrobin"]

Group = tuple[dict[str, int], dict[str, Subscription]]


@st.composite
def groups(draw: st.DrawFn, *, identical: bool | None = None, owned: str = "none",
           max_members: int = 7) -> Group:
    """``owned``: "none", "disjoint" (a consistent previous assignment) or "any" (claims may
    overlap, as after a lost generation)."""
    topics = draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=4, unique=True))
    counts = {t: draw(st.integers(1 if i == 0 else 0, 8)) for i, t in enumerate(topics)}
    members = draw(st.lists(st.sampled_from(MEMBERS), min_size=1, max_size=max_members,
                            unique=True))

    def topic_list() -> list[str]:
        if draw(st.integers(0, 9)) == 0:
            return []  # a member that subscribes to nothing
        chosen = draw(st.lists(st.sampled_from(topics), min_size=1, max_size=4, unique=True))
        if draw(st.integers(0, 5)) == 0:
            chosen.append("not-created")
        return chosen

    if identical is None:
        identical = draw(st.integers(0, 2)) == 0
    if identical:
        common = topic_list()
        wanted = {m: common for m in members}
    else:
        wanted = {m: topic_list() for m in members}
    claimable = [TopicPartition(t, p) for t in topics for p in range(counts[t] + 1)]
    claims: dict[str, list[TopicPartition]] = {m: [] for m in members}
    if owned == "disjoint":
        for tp in claimable:
            owner = draw(st.integers(-1, len(members) - 1))
            if owner >= 0:
                claims[members[owner]].append(tp)
    elif owned == "any":
        for m in members:
            claims[m] = draw(st.lists(st.sampled_from(claimable), max_size=6, unique=True)) \
                if claimable else []
    generations = {m: draw(st.one_of(st.none(), st.integers(0, 3))) if owned != "none" else None
                   for m in members}
    return counts, {m: Subscription(wanted[m], claims[m], generations[m]) for m in members}


def subscribed_partitions(counts: dict[str, int], subs: dict[str, Subscription]) -> set:
    wanted = {t for s in subs.values() for t in s.topics}
    return {TopicPartition(t, p) for t, n in counts.items() if t in wanted for p in range(n)}


def check_valid(counts: dict[str, int], subs: dict[str, Subscription],
                result: dict[str, list[TopicPartition]]) -> set[TopicPartition]:
    """Every member present, lists sorted, subscribed topics only, nothing assigned twice."""
    assert list(result) == sorted(subs)
    seen: set[TopicPartition] = set()
    for member, parts in result.items():
        assert parts == sorted(parts)
        for tp in parts:
            assert tp.topic in subs[member].topics, (member, tp)
            assert 0 <= tp.partition < counts[tp.topic]
            assert tp not in seen, tp
            seen.add(tp)
    return seen


@pytest.mark.parametrize("name", ALL_NAMES)
@SETTINGS
@given(group=groups(owned="any"))
def test_valid_complete_and_deterministic(name, group):
    """Valid; every subscribed partition assigned (cooperative: unless still owned by another
    member); the same answer however the caller ordered its dicts."""
    counts, subs = group
    # every assignor, legacy-roundrobin included (0.10.2 rule), takes any valid group
    result = get_assignor(name).assign(counts, subs)
    seen = check_valid(counts, subs, result)
    missing = subscribed_partitions(counts, subs) - seen
    if name == "cooperative-sticky":
        claimed = {tp for s in subs.values() for tp in s.owned_partitions}
        assert missing <= claimed
    else:
        assert not missing
    shuffled_members = list(subs.items())
    random.Random(len(shuffled_members)).shuffle(shuffled_members)
    assert get_assignor(name).assign(dict(reversed(list(counts.items()))),
                                     dict(shuffled_members)) == result


@pytest.mark.parametrize("name", ["roundrobin", "sticky", "cooperative-sticky",
                                  "legacy-roundrobin"])
@SETTINGS
@given(group=groups(identical=True))
def test_identical_subscriptions_spread_counts_within_one(name, group):
    counts, subs = group
    sizes = [len(parts) for parts in get_assignor(name).assign(counts, subs).values()]
    assert max(sizes) - min(sizes) <= 1


@pytest.mark.parametrize("name", ["range", "legacy-range"])
@SETTINGS
@given(group=groups(identical=True))
def test_range_spreads_each_topic_within_one(name, group):
    counts, subs = group
    result = get_assignor(name).assign(counts, subs)
    for topic in {tp.topic for parts in result.values() for tp in parts}:
        per_member = [sum(tp.topic == topic for tp in parts) for parts in result.values()]
        assert max(per_member) - min(per_member) <= 1


@SETTINGS
@given(group=groups(identical=True, owned="any"))
def test_sticky_with_identical_subscriptions_stays_balanced_whatever_was_owned(group):
    counts, subs = group
    sizes = [len(p) for p in get_assignor("sticky").assign(counts, subs).values()]
    assert max(sizes) - min(sizes) <= 1


def _valid_owned(counts, subs, member):
    sub = subs[member]
    return {tp for tp in sub.owned_partitions
            if tp.topic in sub.topics and tp.partition < counts.get(tp.topic, 0)}


@pytest.mark.parametrize("name", ["sticky", "cooperative-sticky"])
@SETTINGS
@given(group=groups(identical=True, owned="disjoint"))
def test_sticky_keeps_owned_partitions_unless_balance_forbids(name, group):
    """Each member keeps its still-valid owned partitions up to the smaller quota; when keeping
    all of them fits the quotas, every member keeps all of them."""
    counts, subs = group
    result = get_assignor(name).assign(counts, subs)
    total = len(subscribed_partitions(counts, subs))
    min_quota, extra = divmod(total, len(subs))
    valid = {m: _valid_owned(counts, subs, m) for m in subs}
    for member, owned in valid.items():
        assert len(owned & set(result[member])) >= min(len(owned), min_quota)
    over = [m for m in subs if len(valid[m]) > min_quota]
    if len(over) <= extra and all(len(valid[m]) <= min_quota + 1 for m in subs):
        for member, owned in valid.items():
            assert owned <= set(result[member])


@pytest.mark.parametrize("name", ["sticky", "cooperative-sticky"])
@SETTINGS
@given(group=groups())
def test_a_rebalance_with_nothing_changed_moves_nothing(name, group):
    counts, subs = group
    first = get_assignor(name).assign(counts, subs)
    again = {m: Subscription(s.topics, first[m], 1) for m, s in subs.items()}
    assert get_assignor(name).assign(counts, again) == first


def _movable_imbalance(subs, result):
    """A partition some member could take from a fellow subscriber holding 2+ more."""
    sizes = {m: len(p) for m, p in result.items()}
    for member, parts in result.items():
        for tp in parts:
            for other, sub in subs.items():
                if tp.topic in sub.topics and sizes[member] > sizes[other] + 1:
                    return tp, member, other
    return None


@SETTINGS
@given(group=groups(owned="disjoint"))
def test_sticky_leaves_no_partition_that_could_move_to_a_member_with_two_fewer(group):
    """The balance Java's sticky tests check (``verifyValidityAndBalance``), in its strict form."""
    counts, subs = group
    result = get_assignor("sticky").assign(counts, subs)
    assert _movable_imbalance(subs, result) is None


@SETTINGS
@given(group=groups(owned="disjoint"))
def test_cooperative_never_hands_over_a_partition_its_owner_still_holds_and_converges(group):
    """Round by round, with each round's result reported back as owned: no member is given a
    partition another member still owns, and within four rounds the assignment is complete
    and stable."""
    counts, subs = group
    coop = get_assignor("cooperative-sticky")
    previous = None
    for generation in range(1, 6):
        owner = {tp: m for m, s in subs.items() for tp in s.owned_partitions}
        result = coop.assign(counts, subs)
        check_valid(counts, subs, result)
        for member, parts in result.items():
            for tp in parts:
                assert owner.get(tp, member) == member, (tp, member, owner.get(tp))
        if result == previous:
            break
        previous = result
        subs = {m: Subscription(s.topics, result[m], generation) for m, s in subs.items()}
    else:
        pytest.fail("cooperative-sticky did not settle in four follow-up rebalances")
    assert set().union(*map(set, result.values())) == subscribed_partitions(counts, subs)
