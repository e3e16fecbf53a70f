"""The static-membership probe's decision rule, what it costs to be wrong, and the ApiVersions
answer that says whether static membership can be requested at all."""

from __future__ import annotations

import struct

import pytest

from zkconsumer.lab.api_versions import decode_response, encode_request, static_membership_refusal
from zkconsumer.lab.probe import BOUNCES, honours_static_membership


def test_one_revoke_means_not_honoured_wherever_it_falls() -> None:
    assert honours_static_membership([True]) is False
    assert honours_static_membership([False] * (BOUNCES - 1) + [True]) is False


def test_honoured_needs_every_bounce_quiet() -> None:
    assert honours_static_membership([False] * BOUNCES) is True


def test_fewer_quiet_bounces_than_the_rule_needs_is_an_error_naming_the_count() -> None:
    with pytest.raises(ValueError, match=f"3 quiet bounces decide nothing: the rule needs "
                                         f"{BOUNCES} in a row"):
        honours_static_membership([False] * 3)


def test_a_broker_revoking_half_the_time_is_misjudged_below_four_in_a_thousand() -> None:
    # The probe stops at the first revoke, so it says "honoured" only after BOUNCES quiet ones.
    assert 0.5 ** BOUNCES < 0.004


# --- can static membership be requested at all? (from the broker's ApiVersions) ----------------

def _response(correlation_id: int, error: int, entries: list[tuple[int, int, int]]) -> bytes:
    body = struct.pack(">ihi", correlation_id, error, len(entries))
    return body + b"".join(struct.pack(">hhh", *e) for e in entries)


def test_the_api_versions_request_is_a_v0_header_with_no_body() -> None:
    frame = encode_request(7, "cid")
    assert frame == struct.pack(">ihhih", 13, 18, 0, 7, 3) + b"cid"


def test_the_answer_becomes_api_key_to_version_range() -> None:
    versions = decode_response(_response(7, 0, [(11, 0, 1), (18, 0, 0)]), 7)
    assert versions == {11: (0, 1), 18: (0, 0)}


@pytest.mark.parametrize(("payload", "said"), [
    (_response(8, 0, []), "correlation id 8, expected 7"),
    (_response(7, 35, []), "error code 35"),
    (_response(7, 0, [(11, 0, 1)])[:-2], "14 bytes is truncated"),
])
def test_a_wrong_answer_is_refused_saying_what_is_wrong(payload: bytes, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        decode_response(payload, 7)


def test_joingroup_below_v5_means_static_membership_cannot_be_requested() -> None:
    assert static_membership_refusal("apache-kafka-0.10.2.2", {11: (0, 1)}) == (
        "apache-kafka-0.10.2.2 cannot be asked for static membership: its JoinGroup goes up to "
        "v1, and group.instance.id travels only in JoinGroup v5 and later (Apache Kafka 2.3, "
        "KIP-345), so no client can send it")
    assert static_membership_refusal("b", {11: (0, 4)}) is not None


def test_joingroup_v5_or_later_leaves_the_verdict_to_the_bounces() -> None:
    assert static_membership_refusal("apache-kafka-2.4.1", {11: (0, 6)}) is None
    assert static_membership_refusal("b", {11: (0, 5)}) is None


def test_a_broker_without_joingroup_cannot_be_asked_either() -> None:
    assert static_membership_refusal("b", {18: (0, 2)}) == (
        "b cannot be asked for static membership: it offers no JoinGroup request at all "
        "(no broker-side consumer groups)")


def test_only_a_broker_offering_consumer_group_heartbeat_has_kip848_groups():
    from zkconsumer.lab.api_versions import consumer_protocol_refusal

    assert consumer_protocol_refusal("apache-kafka-4.0.2", {11: (2, 9), 68: (0, 1)}) is None
    assert consumer_protocol_refusal("apache-kafka-2.4.1", {11: (0, 6)}) == (
        "apache-kafka-2.4.1 has no KIP-848 consumer groups: it does not offer the "
        "ConsumerGroupHeartbeat request (api key 68; Apache Kafka 4.0 and later)")
