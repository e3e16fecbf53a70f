"""The decisions of Kafka offset storage: how a commit attempt is judged, how dual fetch merges."""

from __future__ import annotations

from zkconsumer.identity import TopicPartition
from zkconsumer.offsets.kafka import TRANSPORT, commit_attempts, judge_commit, merge_dual

A, B, C = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)


def test_a_commit_with_no_error_is_done_and_accepts_everything():
    out = judge_commit({A: 5, B: 7}, {A: None, B: None})
    assert out.done and out.accepted == {A: 5, B: 7} and out.errors == {}
    assert not out.refresh_coordinator


def test_one_partition_error_fails_the_attempt_and_keeps_what_was_accepted():
    out = judge_commit({A: 5, B: 7}, {A: None, B: "UNKNOWN_MEMBER_ID"})
    assert not out.done and out.retriable
    assert out.accepted == {A: 5} and out.errors == {B: "UNKNOWN_MEMBER_ID"}
    assert not out.refresh_coordinator


def test_coordinator_errors_drop_the_channel_and_are_retried():
    for err in ("NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE"):
        out = judge_commit({A: 5}, {A: err})
        assert (out.done, out.retriable, out.refresh_coordinator) == (False, True, True)


def test_metadata_too_large_alone_is_not_retried_but_still_reported():
    out = judge_commit({A: 5, B: 1}, {A: "OFFSET_METADATA_TOO_LARGE", B: None})
    assert out.done and not out.retriable and out.errors == {A: "OFFSET_METADATA_TOO_LARGE"}
    mixed = judge_commit({A: 5, B: 1}, {A: "OFFSET_METADATA_TOO_LARGE", B: "NOT_COORDINATOR"})
    assert not mixed.done


def test_a_partition_missing_from_the_answer_counts_as_not_committed():
    out = judge_commit({A: 5, C: 2}, {A: None})
    assert out.accepted == {A: 5} and out.errors == {C: TRANSPORT}
    assert out.refresh_coordinator and not out.done


def test_attempts_are_one_plus_the_retries():
    assert [commit_attempts(n) for n in (0, 1, 5, -3)] == [1, 2, 6, 1]


def test_dual_fetch_takes_the_larger_offset_and_keeps_none_as_minus_one():
    kafka = {A: 10, B: -1, C: 3}
    zookeeper = {A: 8, B: 4, C: -1}
    assert merge_dual(kafka, zookeeper) == {A: 10, B: 4, C: 3}
    assert merge_dual({A: -1}, {A: -1}) == {A: -1}
