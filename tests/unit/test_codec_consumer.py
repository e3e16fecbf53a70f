"""Consumer znode values: registration JSON (with the escaped regex), owner and offset text."""

from __future__ import annotations

import json

import pytest

from zkconsumer.errors import CorruptZnode
from zkconsumer.zk import codec

PATH = "/consumers/g/ids/g_c1"


def test_static_registration_is_the_originals_compact_json_in_key_order():
    reg = codec.ConsumerRegistration((("topicA", 2), ("topicB", 1)), "static", 1497000000000)
    assert codec.encode_registration(reg) == (
        b'{"version":1,"subscription":{"topicA":2,"topicB":1},"pattern":"static",'
        b'"timestamp":"1497000000000"}')


@pytest.mark.parametrize("regex, escaped", [
    ('-"-', '-\\"-'), ("-/-", "-\\/-"), ("-\\-", "-\\\\-"), ("-\b-", "-\\b-"),
    ("-\f-", "-\\f-"), ("-\n-", "-\\n-"), ("-\r-", "-\\r-"), ("-\t-", "-\\t-"),
    ("-\u0000-", "-\\u0000-"), ("-\u001f-", "-\\u001f-"), ("-\u007f-", "-\\u007f-"),
    ("-\u009f-", "-\\u009f-"), ("a.*|b+", "a.*|b+"),
])
def test_json_escape_matches_kafkas_JSONEscapeString(regex, escaped):
    # testWildcardTopicCountGetTopicCountMapEscapeJson
    assert codec.json_escape(regex) == escaped


def test_wildcard_registration_round_trips_through_the_escaped_key():
    regex = 'pay/.*|"x"\\d+'
    reg = codec.ConsumerRegistration(((regex, 3),), "white_list", 5)
    data = codec.encode_registration(reg)
    assert b'"pay\\/.*|\\"x\\"\\\\d+":3' in data
    assert json.loads(data)["subscription"] == {regex: 3}
    back = codec.decode_registration(PATH, data)
    assert back == reg and back.is_wildcard


def test_registration_written_by_the_original_without_timestamp_decodes():
    data = b'{"version":1,"subscription":{".*":4},"pattern":"white_list"}'
    reg = codec.decode_registration(PATH, data)
    assert reg.subscription == ((".*", 4),) and reg.timestamp_ms is None and reg.is_wildcard


def test_empty_subscription_or_unknown_pattern_is_static():
    empty = codec.decode_registration(PATH, b'{"subscription":{},"pattern":"white_list"}')
    odd = codec.decode_registration(PATH, b'{"subscription":{"t":1},"pattern":"whatever"}')
    assert not empty.is_wildcard and not odd.is_wildcard


@pytest.mark.parametrize("data", [
    b'{"version":1,"subscription":{"t":1}}', b'{"version":1,"pattern":"static"}', b"[1]",
    b"not json", b"", None, b'{"subscription":{"t":"x"},"pattern":"static"}',
])
def test_corrupt_registration_names_the_path(data):
    with pytest.raises(CorruptZnode, match=PATH):
        codec.decode_registration(PATH, data)


def test_owner_value_is_the_thread_id_as_plain_text():
    assert codec.encode_owner("g_c1-0") == b"g_c1-0"
    assert codec.decode_owner("/p", b"g_c1-0") == "g_c1-0"
    with pytest.raises(CorruptZnode, match="/p"):
        codec.decode_owner("/p", None)


def test_offset_is_decimal_text():
    assert codec.encode_offset(1234) == b"1234"
    assert codec.decode_offset("/o", b"1234") == 1234
    assert codec.decode_offset("/o", b"-1") == -1


@pytest.mark.parametrize("data", [b"abc", b"", None, b"1_000", b" 12", b"1.5", b"\xff"])
def test_bad_offset_is_corrupt_and_names_path_and_value(data):
    with pytest.raises(CorruptZnode, match="/consumers/g/offsets/t/3"):
        codec.decode_offset("/consumers/g/offsets/t/3", data)
