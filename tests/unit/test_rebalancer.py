"""The rebalancer thread: retries and backoff, failure, coalescing of triggers, states."""

from __future__ import annotations

import threading
import time

import pytest

from zkconsumer.errors import ConsumerRebalanceFailedException
from zkconsumer.events import EventBus
from zkconsumer.membership.triggers import Trigger
from zkconsumer.metrics import RebalanceMetrics
from zkconsumer.rebalance.rebalancer import Rebalancer, RebalancerState


class FakeTarget:
    """Scripted attempt outcomes; can hold an attempt until released."""

    def __init__(self, outcomes: list[object]) -> None:
        self.outcomes = outcomes
        self.attempts: list[int] = []
        self.prepared: list[set[Trigger]] = []
        self.cleanups = 0
        self.hold = threading.Event()
        self.hold.set()
        self.in_attempt = threading.Event()

    def prepare(self, reasons: set[Trigger]) -> set[Trigger]:
        self.prepared.append(set(reasons))
        return set(reasons)

    def attempt(self, number: int) -> bool:
        self.attempts.append(number)
        self.in_attempt.set()
        assert self.hold.wait(10)
        outcome = self.outcomes.pop(0) if self.outcomes else True
        if isinstance(outcome, Exception):
            raise outcome
        return bool(outcome)

    def after_failed_attempt(self) -> None:
        self.cleanups += 1

    def describe_assignment(self) -> dict[str, dict[int, str]]:
        return {"t": {0: "c-0"}}

    def is_shutting_down(self) -> bool:
        return False


def make(target: FakeTarget, retries: int = 3, backoff_ms: int = 10
         ) -> tuple[Rebalancer, list[dict[str, object]], RebalanceMetrics]:
    bus, metrics = EventBus("c"), RebalanceMetrics()
    events: list[dict[str, object]] = []
    bus.add_listener(events.append)
    r = Rebalancer("c", target, retries, backoff_ms, bus, metrics)
    r.start()
    return r, events, metrics


def test_failed_attempts_are_retried_after_cleanup_and_backoff():
    target = FakeTarget([False, RuntimeError("zk node vanished"), True])
    r, events, metrics = make(target)
    try:
        r.rebalance_now(Trigger.STARTUP, timeout=10)
        assert target.attempts == [0, 1, 2] and target.cleanups == 2
        snap = metrics.snapshot()
        assert (snap["rebalances"], snap["rebalance_attempts"], snap["rebalance_failures"]) == (
            1, 3, 0)
        kinds = [e["type"] for e in events]
        assert kinds.count("attempt_failed") == 2 and kinds[-1] == "rebalance_succeeded"
        assert r.state is RebalancerState.IDLE
    finally:
        r.stop()
    assert r.state is RebalancerState.STOPPED


def test_exhausted_retries_raise_the_originals_exception_and_the_thread_lives_on():
    target = FakeTarget([False, False])
    r, events, metrics = make(target, retries=2)
    try:
        with pytest.raises(ConsumerRebalanceFailedException, match="c can't rebalance after 2 "
                                                                   "retries"):
            r.rebalance_now(Trigger.STARTUP, timeout=10)
        assert events[-1]["type"] == "rebalance_failed"
        r.rebalance_now(Trigger.MEMBERSHIP, timeout=10)  # the next trigger succeeds
        assert metrics.snapshot()["rebalance_failures"] == 1
    finally:
        r.stop()


def test_zero_retries_fail_at_once():
    target = FakeTarget([])
    r, _, _ = make(target, retries=0)
    try:
        with pytest.raises(ConsumerRebalanceFailedException, match="after 0 retries"):
            r.rebalance_now(Trigger.STARTUP, timeout=10)
        assert target.attempts == []
    finally:
        r.stop()


def test_triggers_during_a_rebalance_coalesce_into_one_more():
    target = FakeTarget([])
    target.hold.clear()
    r, _, metrics = make(target)
    try:
        r.trigger(Trigger.MEMBERSHIP)
        assert target.in_attempt.wait(5)
        for reason in (Trigger.MEMBERSHIP, Trigger.TOPIC_DATA, Trigger.MEMBERSHIP):
            r.trigger(reason)
        target.hold.set()
        deadline = time.monotonic() + 5
        while metrics.snapshot()["rebalances"] < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)  # room for a wrong third rebalance to show up
        assert metrics.snapshot()["rebalances"] == 2
        assert target.prepared[1] == {Trigger.MEMBERSHIP, Trigger.TOPIC_DATA}
    finally:
        r.stop()


def test_stop_fails_waiters_and_ends_the_thread():
    target = FakeTarget([])
    target.hold.clear()
    r, _, _ = make(target)
    box: list[BaseException] = []

    def wait() -> None:
        try:
            r.rebalance_now(Trigger.STARTUP, timeout=10)
        except BaseException as exc:
            box.append(exc)

    t = threading.Thread(target=wait)
    t.start()
    assert target.in_attempt.wait(5)
    threading.Timer(0.1, target.hold.set).start()
    assert r.stop(timeout=5)
    t.join(5)
    assert not t.is_alive(), "a caller waiting for a rebalance is released by stop()"
    assert r.state is RebalancerState.STOPPED
