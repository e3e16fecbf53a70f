"""Whitelist/Blacklist (TopicFilterTest's vectors) and TopicCount thread ids."""

from __future__ import annotations

import pytest

from zkconsumer import Blacklist, Whitelist
from zkconsumer.errors import InvalidConfig
from zkconsumer.topic_filter import (
    StaticTopicCount,
    WildcardTopicCount,
    topic_count_from_registration,
)
from zkconsumer.zk.codec import ConsumerRegistration


@pytest.mark.parametrize("excl", [True, False])
def test_whitelist_vectors_of_the_original(excl):
    assert Whitelist("white1,white2").is_topic_allowed("white2", excl)
    assert not Whitelist("white1,white2").is_topic_allowed("black1", excl)
    assert Whitelist(".+").is_topic_allowed("alltopics", excl)
    assert Whitelist(".+").is_topic_allowed("__consumer_offsets", excl) is (not excl)
    assert Whitelist("white_listed-topic.+").is_topic_allowed("white_listed-topic1", excl)
    assert Whitelist("test-(?!bad\\b)[\\w]+").is_topic_allowed("test-good", excl)
    assert not Whitelist("test-(?!bad\\b)[\\w]+").is_topic_allowed("test-bad", excl)


@pytest.mark.parametrize("excl", [True, False])
def test_blacklist_vectors_of_the_original(excl):
    assert Blacklist("black1").is_topic_allowed("white2", excl)
    assert not Blacklist("black1").is_topic_allowed("black1", excl)
    assert Blacklist("black1").is_topic_allowed("__consumer_offsets", excl) is (not excl)


def test_regex_is_normalised_and_fully_matched():
    assert Whitelist(" 'a, b' ").regex == "a|b"
    assert Whitelist('"orders"').regex == "orders"
    assert not Whitelist("order").is_topic_allowed("orders", True)  # whole name, not search


def test_invalid_regex_names_the_regex():
    with pytest.raises(InvalidConfig, match=r"\(unclosed is an invalid regex"):
        Whitelist("(unclosed")


def test_static_thread_ids_restart_per_topic_and_sort_as_strings():
    count = StaticTopicCount.of("g_c", {"a": 12, "b": 1})
    threads = count.thread_ids_per_topic()
    assert threads["b"] == ["g_c-0"]
    assert threads["a"][:4] == ["g_c-0", "g_c-1", "g_c-10", "g_c-11"]
    assert count.registration(1).subscription == (("a", 12), ("b", 1))


@pytest.mark.parametrize("bad", [{"t": 0}, {"t": -1}, {"t": "2"}, {"bad/topic": 1}])
def test_static_stream_counts_must_be_positive_and_topics_legal(bad):
    with pytest.raises(ValueError):
        StaticTopicCount.of("g_c", bad)


def test_wildcard_topics_are_evaluated_against_the_current_topic_list():
    count = WildcardTopicCount("g_w", Whitelist("pay.*|orders"), 2, True)
    topics = ["orders", "payments", "other", "__consumer_offsets", "pay"]
    assert count.thread_ids_per_topic(topics) == {
        "orders": ["g_w-0", "g_w-1"], "pay": ["g_w-0", "g_w-1"], "payments": ["g_w-0", "g_w-1"]}
    reg = count.registration(7)
    assert (reg.subscription, reg.pattern) == ((("pay.*|orders", 2),), "white_list")


def test_registration_of_another_member_becomes_the_right_topic_count():
    wild = topic_count_from_registration(
        "g_x", ConsumerRegistration(((".*", 3),), "black_list"), False)
    assert isinstance(wild, WildcardTopicCount) and isinstance(wild.topic_filter, Blacklist)
    static = topic_count_from_registration("g_y", ConsumerRegistration((), "white_list"), True)
    assert isinstance(static, StaticTopicCount) and static.thread_ids_per_topic() == {}
