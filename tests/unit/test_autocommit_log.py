"""The auto-commit task's log: an expected refusal (the leader mode's fenced commit of a member
whose session expired) is one warning line; any other failure keeps its traceback."""

from __future__ import annotations

import logging
import threading

from zkconsumer.events import EventBus
from zkconsumer.identity import TopicPartition
from zkconsumer.offsets.auto_commit import AutoCommitter, autocommit_failure_line
from zkconsumer.offsets.store import OffsetCommitRefused


def test_an_expected_refusal_of_an_auto_commit_is_one_line_naming_group_and_partitions():
    refused = OffsetCommitRefused("g1", {TopicPartition("t", 3): 40, TopicPartition("t", 0): 7},
                                  "its session 0x1a has expired")
    assert autocommit_failure_line("g1_c", refused) == (
        "[g1_c] autoCommit refused for group 'g1', partitions t/0, t/3: its session 0x1a has "
        "expired (expected after a session expiry)")
    assert autocommit_failure_line("g1_c", RuntimeError("offset commit failed")) is None


def test_the_auto_commit_task_logs_a_refusal_in_one_line_and_anything_else_with_its_traceback(
        caplog):
    failures = [OffsetCommitRefused("g1", {TopicPartition("t", 0): 7}, "its session 0x1a has "
                                    "expired"), RuntimeError("offset commit failed")]
    events: list[dict[str, object]] = []
    bus = EventBus("g1_c")
    bus.add_listener(events.append)
    done = threading.Event()

    def commit() -> None:
        if failures:
            raise failures.pop(0)
        done.set()

    task = AutoCommitter("autocommit-test", 1, commit, bus)
    with caplog.at_level(logging.WARNING, logger="zkconsumer.offsets.auto_commit"):
        task.start()
        assert done.wait(30)
        task.stop()
    records = [r for r in caplog.records if r.name == "zkconsumer.offsets.auto_commit"]
    assert [(r.levelno, r.exc_info is None) for r in records] == [
        (logging.WARNING, True), (logging.ERROR, False)]
    assert records[0].getMessage().startswith("[g1_c] autoCommit refused for group 'g1', "
                                              "partitions t/0: its session 0x1a has expired")
    # both still reach the member's listeners as the auto-commit errors they are
    assert [e["where"] for e in events if e["type"] == "error"] == ["auto_commit"] * 2
