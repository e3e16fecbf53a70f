"""Any bytes in a znode: the decoders return a value or raise CorruptZnode, nothing else.

Another client (or a bug, or an operator with zkCli) can write anything into the znodes a consumer
reads. The rebalancer and the tools catch CorruptZnode and carry on; any other exception type
escaping a decoder would crash a rebalance attempt instead of skipping one znode.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zkconsumer.errors import CorruptZnode
from zkconsumer.zk import codec, paths

SETTINGS = settings(derandomize=True, max_examples=80, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

# JSON documents of any shape, with the field names the decoders look for mixed in so that
# the interesting branches (right key, wrong type) are reached often.
_KEYS = st.sampled_from(["version", "subscription", "pattern", "timestamp", "partitions",
                         "leader", "isr", "host", "port", "endpoints", "jmx_port",
                         "leader_epoch", "controller_epoch", "0", "x", "../t", ""])
_SCALARS = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True)
            | st.text(max_size=20) | st.sampled_from(["static", "white_list", "black_list",
                                                      "PLAINTEXT://h:1", "PLAINTEXT://h:x"]))
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(_KEYS | st.text(max_size=8), inner, max_size=5),
                     max_leaves=20)
_DOCS = _JSON.map(lambda d: json.dumps(d).encode()) | st.binary(max_size=200) | st.sampled_from(
    [b"", b"1e400", b'{"partitions":{"0":[1]},"version":1e400}', b"\xff\xfe", b"NaN",
     b'{"version":1,"subscription":{"t":1e400},"pattern":"static"}'])

PATH = "/hostile/znode"


def _only_corrupt(decode, data: bytes) -> object:
    try:
        return decode(data)
    except CorruptZnode as exc:
        assert PATH in str(exc)  # the message names the znode
        return None


@SETTINGS
@given(_DOCS)
def test_registration_decoder_raises_only_corrupt_znode(data):
    reg = _only_corrupt(lambda d: codec.decode_registration(PATH, d), data)
    if reg is not None:
        assert isinstance(reg.pattern, str)
        for topic, count in reg.subscription:
            assert 0 <= count <= codec.MAX_STREAMS_PER_TOPIC
            if not reg.is_wildcard:  # a static topic will become a path: it must be legal
                assert paths.validate_topic(topic) == topic


@SETTINGS
@given(_DOCS)
def test_topic_decoder_raises_only_corrupt_znode(data):
    parts = _only_corrupt(lambda d: codec.decode_topic_assignment(PATH, d), data)
    if parts is not None:
        assert all(isinstance(p, int) and p >= 0 for p in parts)
        assert list(parts) == sorted(parts)


@SETTINGS
@given(_DOCS)
def test_partition_state_decoder_raises_only_corrupt_znode(data):
    state = _only_corrupt(lambda d: codec.decode_partition_state(PATH, d), data)
    if state is not None:
        assert isinstance(state.leader, int) and not isinstance(state.leader, bool)


@SETTINGS
@given(_DOCS, st.integers(min_value=0, max_value=10))
def test_broker_decoder_raises_only_corrupt_znode(data, broker_id):
    reg = _only_corrupt(lambda d: codec.decode_broker(PATH, broker_id, d), data)
    if reg is not None:
        host, port = reg.plaintext_endpoint()
        assert isinstance(host, str) and isinstance(port, int)


@SETTINGS
@given(st.binary(max_size=40) | st.text(max_size=30).map(str.encode))
def test_offset_and_owner_decoders_raise_only_corrupt_znode(data):
    offset = _only_corrupt(lambda d: codec.decode_offset(PATH, d), data)
    if offset is not None:  # only Long.parseLong's syntax: optional sign, decimal digits
        assert offset == int(data.decode("ascii"), 10) and data.strip() == data
    _only_corrupt(lambda d: codec.decode_owner(PATH, d), data)


@SETTINGS
@given(st.lists(st.tuples(st.from_regex(r"[a-zA-Z0-9._-]{1,20}", fullmatch=True)
                          .filter(lambda t: t not in (".", "..")),
                          st.integers(min_value=0, max_value=codec.MAX_STREAMS_PER_TOPIC)),
                max_size=4, unique_by=lambda p: p[0]),
       st.integers(min_value=0, max_value=2**53))
def test_what_a_member_writes_decodes_to_the_same_subscription(pairs, ts):
    reg = codec.ConsumerRegistration(tuple(pairs), codec.STATIC_PATTERN, ts)
    back = codec.decode_registration(PATH, codec.encode_registration(reg))
    assert back.subscription == tuple(pairs) and back.timestamp_ms == ts


def test_the_hostile_shapes_named_in_the_docs_are_refused_with_the_path():
    cases = {
        b"not json": "not valid JSON",
        b'{"version":1,"pattern":"static"}': "TopicCount",
        b'{"version":1,"subscription":{"../../brokers":1},"pattern":"static"}': "illegal",
        b'{"version":1,"subscription":{"t":2000000000},"pattern":"static"}': "out of range",
        b'{"version":1,"subscription":{"t":-1},"pattern":"static"}': "out of range",
        b'{"version":1,"subscription":{"t":1e400},"pattern":"static"}': "not a number",
    }
    for data, words in cases.items():
        try:
            codec.decode_registration(PATH, data)
        except CorruptZnode as exc:
            assert PATH in str(exc) and words in str(exc), (data, exc)
        else:
            raise AssertionError(f"{data!r} was accepted")
