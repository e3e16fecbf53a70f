"""Names become znode paths only when they cannot change the path's shape.

kazoo joins paths textually, so a group ``../../brokers`` or a topic ``a/b`` would write outside
the group's subtree. For any string, every path builder either raises InvalidName or returns a
path with exactly the expected components, the name among them unchanged; and which of the two
is decided by Kafka's rule, restated here on its own: a legal name is always accepted, so a
validator that refused everything would fail.
"""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zkconsumer import ConsumerConfig, ZookeeperConsumerConnector
from zkconsumer.admin.offset_tools import BadOffsetsFile, parse_lines
from zkconsumer.errors import InvalidConfig, InvalidName
from zkconsumer.zk import paths

SETTINGS = settings(derandomize=True, max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

HOSTILE = ["..", ".", "../x", "a/b", "/abs", "a\x00b", "a\nb", "a b", "", "x" * 250,
           "..\\x", "a\u2215b", "zoo%2fkeeper", "-/-", "g/../../brokers", "\u00e9t\u00e9",
           "a\tb", "a:b"]
# Kafka's rule for topic and group names, and the wider set a consumer id may use.
NAME_CHARS = string.ascii_letters + string.digits + "._-"
MEMBER_CHARS = NAME_CHARS + ":@+="
_LEGAL = st.text(alphabet=NAME_CHARS, min_size=1, max_size=30).filter(
    lambda n: n not in (".", "..")) | st.sampled_from(["x" * 249, "...", "-", "_", "a.b"])
_LEGAL_MEMBERS = st.text(alphabet=MEMBER_CHARS, min_size=1, max_size=30).filter(
    lambda n: n not in (".", ".."))
_NAMES = st.sampled_from(HOSTILE) | st.text(max_size=30) | st.text(
    alphabet="./\\-_:@+=a\x00 ", max_size=8) | _LEGAL


def legal(name: str, chars: str = NAME_CHARS, limit: int = 249) -> bool:
    return 1 <= len(name) <= limit and name not in (".", "..") and all(c in chars for c in name)


def _segments_ok(path: str, expected: list[str]) -> bool:
    return path.split("/") == ["", *expected]


def _builders(group: str, topic: str, partition: int):
    return [
        (lambda: paths.owner(group, topic, partition),
         ["consumers", group, "owners", topic, str(partition)], legal(group) and legal(topic)),
        (lambda: paths.offset(group, topic, partition),
         ["consumers", group, "offsets", topic, str(partition)], legal(group) and legal(topic)),
        (lambda: paths.partition_state(topic, partition),
         ["brokers", "topics", topic, "partitions", str(partition), "state"], legal(topic)),
    ]


@SETTINGS
@given(_LEGAL, _LEGAL, st.integers(min_value=0, max_value=10**6))
def test_legal_group_and_topic_names_always_give_their_paths(group, topic, partition):
    for build, expected, _ in _builders(group, topic, partition):
        assert _segments_ok(build(), expected)


@SETTINGS
@given(_NAMES, _NAMES, st.integers(min_value=0, max_value=10**6))
def test_group_and_topic_paths_keep_their_shape(group, topic, partition):
    for build, expected, accepted in _builders(group, topic, partition):
        if not accepted:
            with pytest.raises(InvalidName):
                build()
            continue
        path = build()
        assert _segments_ok(path, expected), path


@SETTINGS
@given(_NAMES | _LEGAL_MEMBERS, _NAMES | _LEGAL_MEMBERS)
def test_member_paths_keep_their_shape(group, member):
    if not (legal(group) and legal(member, MEMBER_CHARS, 1024)):
        with pytest.raises(InvalidName):
            paths.consumer_registration(group, member)
        return
    path = paths.consumer_registration(group, member)
    assert _segments_ok(path, ["consumers", group, "ids", member]), path


@pytest.mark.parametrize("name", [n for n in HOSTILE if len(n) <= 249])
def test_hostile_group_ids_are_refused_by_the_config(name):
    with pytest.raises(InvalidConfig):
        ConsumerConfig({"zookeeper.connect": "127.0.0.1:1", "group.id": name})


@pytest.mark.parametrize("consumer_id", ["../../brokers/ids/0", "a/b", "x\x00", "a b", "/"])
def test_hostile_consumer_ids_are_refused_before_any_connection(consumer_id):
    # Port 1 would refuse a connection; the name is rejected before one is attempted.
    cfg = ConsumerConfig({"zookeeper.connect": "127.0.0.1:1", "group.id": "g",
                          "consumer.id": consumer_id})
    with pytest.raises(InvalidName):
        ZookeeperConsumerConnector(cfg)


@pytest.mark.parametrize("topic", ["../x", "a/b", "..", "t\x00", ""])
def test_hostile_topics_in_a_subscription_are_refused(topic):
    from zkconsumer.topic_filter import StaticTopicCount

    with pytest.raises(InvalidName):
        StaticTopicCount.of("g_c", {topic: 1})


@pytest.mark.parametrize("line", [
    "/consumers/../offsets/t/0:5",
    "/consumers/g/offsets/../0:5",
    "/consumers/g/offsets/t/0/../../../../brokers:5",
    "/consumers/g/../../brokers/ids/0:5",
    "/consumers/g%2f../offsets/t/0:5",
])
def test_offset_files_cannot_name_a_path_outside_the_offsets_tree(line):
    with pytest.raises(BadOffsetsFile):
        parse_lines([line])


@SETTINGS
@given(_LEGAL, _LEGAL, st.integers(min_value=0, max_value=10**6))
def test_an_offsets_path_parses_back_to_its_parts(group, topic, partition):
    assert paths.parse_offset(paths.offset(group, topic, partition)) == (group, topic, partition)


@pytest.mark.parametrize(("path", "message"), [
    ("/consumers/g/owners/t/0", "'/consumers/g/owners/t/0' is not an offsets path"),
    ("/consumers/g/offsets/t/0/x", "'/consumers/g/offsets/t/0/x' is not an offsets path"),
    ("/consumers/g/offsets/t/-1", "partition '-1' of '/consumers/g/offsets/t/-1' is not"),
    ("/consumers/g/offsets/t/\u0663", "partition '\u0663'"),
    ("/consumers/../offsets/t/0", "'..'"),
])
def test_a_path_that_is_not_an_offsets_znode_is_named_in_the_error(path, message):
    with pytest.raises(InvalidName, match=re.escape(message)):
        paths.parse_offset(path)


def test_an_offsets_line_keeps_a_negative_offset_and_names_a_malformed_one():
    [entry] = parse_lines(["/consumers/g/offsets/t/3:-1"])
    assert (entry.group, entry.topic, entry.partition, entry.offset) == ("g", "t", 3, -1)
    with pytest.raises(BadOffsetsFile, match=r"line 1: '/consumers/g/offsets/t/3:--1' is not"):
        parse_lines(["/consumers/g/offsets/t/3:--1"])
