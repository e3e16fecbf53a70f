"""How long a broker-side joiner takes from its start to its first JoinGroup.

The simulator's ``broker_join_start_ms`` was fitted to whole rebalances while its members
heartbeated at random phases, and the fit paid for those phases with a slow start (0.9-1.6 s).
Measured, the start is a few milliseconds: librdkafka sends its Metadata, FindCoordinator and
JoinGroup requests right after the consumer is created and subscribed. This measures it the
way the lab starts a joiner: a group of :data:`MEMBERS` consumers (the lab's broker-member
settings) is formed on its own topic, then a new consumer is created with librdkafka's
protocol debug log, and the time from its creation to the log's "Sent JoinGroupRequest" is one
sample (the joiner polls every 5 ms meanwhile, so a sample is late by at most that).
"""

from __future__ import annotations

import logging
import statistics
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MEMBERS = 4
PARTITIONS = 24
SENT_JOIN = "Sent JoinGroupRequest"
FORM_S = 9.0          # a group of 4 on Tansu forms within a few seconds
GIVE_UP_S = 10.0


@dataclass(frozen=True)
class JoinStart:
    """One joiner: ms from its consumer's creation to its first JoinGroup sent (None: not
    within :data:`GIVE_UP_S`)."""

    join_sent_ms: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"join_sent_ms": self.join_sent_ms}


class _FirstJoin(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.at: float | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.at is None and SENT_JOIN in record.getMessage():
            self.at = time.perf_counter()


def _config(bootstrap: str, group: str, client: str) -> dict[str, Any]:
    return {"bootstrap.servers": bootstrap, "group.id": group, "client.id": client,
            "session.timeout.ms": 6000, "heartbeat.interval.ms": 2000,
            "partition.assignment.strategy": "range", "auto.offset.reset": "earliest",
            "enable.auto.commit": True, "auto.commit.interval.ms": 1000, "log_level": 3}


def _member(bootstrap: str, group: str, topic: str, client: str, stop: threading.Event) -> None:
    from confluent_kafka import Consumer

    consumer = Consumer(_config(bootstrap, group, client))
    try:
        consumer.subscribe([topic])
        while not stop.is_set():
            consumer.poll(0.1)
    finally:
        consumer.close()


def one_join(bootstrap: str, create_topic: Callable[[str, int], None]) -> JoinStart:
    """Form a group of :data:`MEMBERS` on a new topic, start a joiner, time its JoinGroup."""
    from confluent_kafka import Consumer

    topic = group = f"join-start-{uuid.uuid4().hex[:8]}"
    create_topic(topic, PARTITIONS)
    stop = threading.Event()
    threads = [threading.Thread(target=_member, args=(bootstrap, group, topic, f"m{i}", stop),
                                name=f"join-start-m{i}", daemon=True) for i in range(MEMBERS)]
    for t in threads:
        t.start()
    try:
        time.sleep(FORM_S)
        seen = _FirstJoin()
        logger = logging.getLogger(f"{__name__}.joiner.{group}")
        logger.propagate, logger.handlers = False, [seen]
        logger.setLevel(logging.DEBUG)
        started = time.perf_counter()
        joiner = Consumer({**_config(bootstrap, group, "joiner"), "debug": "protocol",
                           "log_level": 7, "logger": logger})
        try:
            joiner.subscribe([topic])
            while seen.at is None and time.perf_counter() - started < GIVE_UP_S:
                joiner.poll(0.005)
        finally:
            joiner.close()
        sent = None if seen.at is None else round((seen.at - started) * 1000.0, 2)
        return JoinStart(sent)
    finally:
        stop.set()
        for t in threads:
            t.join(15)


def measure_join_start(bootstrap: str, create_topic: Callable[[str, int], None],
                       trials: int = 8) -> tuple[float, list[JoinStart]]:
    """The median ms from a joiner's creation to its JoinGroup over ``trials`` joins, and each."""
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    samples = [one_join(bootstrap, create_topic) for _ in range(trials)]
    sent = [s.join_sent_ms for s in samples if s.join_sent_ms is not None]
    if not sent:
        raise RuntimeError(f"no joiner sent a JoinGroup within {GIVE_UP_S:.0f} s in {trials} "
                           f"trials against {bootstrap}")
    return statistics.median(sent), samples
