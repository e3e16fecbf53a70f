"""Broker-coordinated members: confluent-kafka (librdkafka) consumers in a broker-side group.

JoinGroup/SyncGroup with the eager protocol (``range``, ``roundrobin``), incremental cooperative
rebalancing (``cooperative-sticky``), static membership (``group.instance.id``), and KIP-848's
``consumer`` protocol (``group.protocol=consumer``: the coordinator assigns with the server-side
assignor ``group.remote.assignor`` and the member learns of each change in a heartbeat answer;
session and heartbeat are the broker's settings then, so the member may not send them). The
rebalance callbacks are the timeline: ``on_assign`` is assigned-and-fetching (librdkafka starts
fetching as soon as the assignment is applied), ``on_revoke``/``on_lost`` is the stop. Request
counts come from librdkafka's statistics (``brokers.<b>.req``), summed over every broker handle
including the group coordinator's. Those statistics have no ConsumerGroupHeartbeat entry, so a
KIP-848 member also turns on librdkafka's ``protocol`` debug log and counts the
``Sent ConsumerGroupHeartbeatRequest`` lines (HeartbeatCounter), added to each statistics sample
as ``ConsumerGroupHeartbeat``; it counts its rebalances itself: one ``attempt`` record per
reconciliation (each ends in one ``on_assign``, often with nothing added, after an
``on_revoke`` of what moves).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

from zkconsumer.lab.drivers.base import MemberSpec, parse_seq
from zkconsumer.lab.member_config import lab_heartbeat_interval_ms
from zkconsumer.lab.records import Coord, Lifecycle, RecordWriter, Timeline

log = logging.getLogger(__name__)

GROUP_REQUESTS = ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit",
                  "OffsetFetch", "FindCoordinator")
# KIP-848's one coordination request; librdkafka's statistics do not count it (HeartbeatCounter).
KIP848_HEARTBEAT = "ConsumerGroupHeartbeat"
SENT_HEARTBEAT = "Sent ConsumerGroupHeartbeatRequest"
STATS_INTERVAL_MS = 1000
LEAVE_FLUSH_S = 1.2   # one statistics interval after unsubscribe, so LeaveGroup is counted


def consumer_config(spec: MemberSpec, strategy: str, static: bool,
                    group_protocol: str = "classic") -> dict[str, object]:
    """The member's librdkafka settings. Under KIP-848 (``group_protocol="consumer"``) the
    session timeout and heartbeat interval belong to the coordinator (the lab sets them on the
    broker it starts) and ``strategy`` names the coordinator's assignor."""
    t = spec.timing
    group: dict[str, object]
    if group_protocol == "classic":
        group = {"session.timeout.ms": t.session_timeout_ms,
                 "heartbeat.interval.ms": lab_heartbeat_interval_ms(t.session_timeout_ms),
                 "partition.assignment.strategy": strategy}
    else:
        group = {"group.protocol": group_protocol, "group.remote.assignor": strategy}
    conf: dict[str, object] = {
        "bootstrap.servers": spec.bootstrap,
        "group.id": spec.group,
        "client.id": f"{spec.member}-i{spec.incarnation}",
        **group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": True,
        "auto.commit.interval.ms": t.auto_commit_interval_ms,
        "statistics.interval.ms": STATS_INTERVAL_MS,
        "log_level": 3,
    }
    if static:
        conf["group.instance.id"] = spec.member
    if group_protocol != "classic":
        # The protocol debug log names every request sent: the only client-side count of
        # ConsumerGroupHeartbeat. Debug lines reach only the member's logger, never stderr.
        conf["debug"] = "protocol"
        conf["log_level"] = 7
    return conf


class HeartbeatCounter(logging.Handler):
    """The logger a KIP-848 member gives librdkafka: counts the ConsumerGroupHeartbeat requests
    the protocol debug log says were sent, and passes errors on to this module's log, as the
    other members' ``log_level`` 3 does (librdkafka's own filter is off for these members)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.sent = 0

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if SENT_HEARTBEAT in message:
            self.sent += 1
        elif record.levelno >= logging.ERROR:
            log.log(record.levelno, "librdkafka: %s", message)

    def logger(self, name: str) -> logging.Logger:
        """A logger of its own per member (librdkafka calls it from the member's poll)."""
        out = logging.getLogger(f"{__name__}.rdkafka.{name}")
        out.propagate = False
        out.setLevel(logging.DEBUG)
        out.handlers = [self]
        return out


def request_counts(stats_json: str, heartbeats: int | None = None) -> dict[str, int]:
    """Group-coordination request counts from one librdkafka statistics document; a KIP-848
    member adds the ConsumerGroupHeartbeat requests it counted itself (``heartbeats``)."""
    stats = json.loads(stats_json)
    out = dict.fromkeys(GROUP_REQUESTS, 0)
    if heartbeats is not None:
        out[KIP848_HEARTBEAT] = heartbeats
    for broker in (stats.get("brokers") or {}).values():
        for name, count in (broker.get("req") or {}).items():
            if name in out:
                out[name] += int(count)
    return out


class BrokerCallbacks:
    """Rebalance and statistics callbacks; all run inside ``poll`` on the member's thread."""

    def __init__(self, spec: MemberSpec, writer: RecordWriter, count_attempts: bool = False,
                 heartbeats: HeartbeatCounter | None = None) -> None:
        self._topic = spec.topic
        self._writer = writer
        self._count_attempts = count_attempts
        self._heartbeats = heartbeats
        self._placed = False  # a rebalance callback came, or the member was seen joined

    def _mine(self, partitions: list[Any]) -> list[int]:
        return sorted(tp.partition for tp in partitions if tp.topic == self._topic)

    def on_assign(self, _consumer: Any, partitions: list[Any]) -> None:
        self._placed = True
        parts = self._mine(partitions)
        if self._count_attempts:
            self._writer.coord(Coord.ATTEMPT)
        self._writer.coord(Coord.REBALANCE_SUCCEEDED)
        self._writer.timeline(Timeline.ASSIGNED, parts)
        self._writer.timeline(Timeline.FETCHING, parts)

    def on_revoke(self, _consumer: Any, partitions: list[Any]) -> None:
        self._writer.coord(Coord.REBALANCE_STARTED)
        self._writer.timeline(Timeline.REVOKED, self._mine(partitions))

    def on_lost(self, _consumer: Any, partitions: list[Any]) -> None:
        self._writer.coord(Coord.LOST)
        self._writer.timeline(Timeline.REVOKED, self._mine(partitions))

    def on_commit(self, err: Any, partitions: list[Any]) -> None:
        """Whether the broker took an offset commit: ``commit_ok`` or ``commit_rejected:<error>``
        (a member the group evicted learns here whether its late commits were fenced)."""
        errors = sorted({str(tp.error.name()) for tp in partitions or ()
                         if getattr(tp, "error", None) is not None})
        if err is not None:
            errors = sorted({*errors, str(err.name())})
        if errors == ["_NO_OFFSET"]:
            return  # nothing new to commit: no request was sent
        self._writer.coord("commit_ok" if not errors else f"commit_rejected:{','.join(errors)}")

    def on_stats(self, stats_json: str) -> None:
        try:
            sent = None if self._heartbeats is None else self._heartbeats.sent
            self._writer.requests(request_counts(stats_json, sent))
            if self._heartbeats is not None and not self._placed and self._heartbeats.sent >= 2:
                # librdkafka keeps one heartbeat in flight: a second one went out only after the
                # first was answered, which put the member in the group, and no rebalance
                # callback came, so it was given nothing (its statistics' join state stays
                # "init" then, never "steady")
                self._placed = True
                self._writer.coord(Coord.JOINED)
        except (ValueError, KeyError) as exc:
            log.warning("unreadable librdkafka statistics: %s", exc)


def run_broker_member(spec: MemberSpec, writer: RecordWriter, stop: threading.Event,
                      *, strategy: str, static: bool = False,
                      group_protocol: str = "classic") -> None:
    """Consume until ``stop``; then leave cleanly (static members just close, as they must)."""
    from confluent_kafka import Consumer

    kip848 = group_protocol != "classic"
    heartbeats = HeartbeatCounter() if kip848 else None
    cb = BrokerCallbacks(spec, writer, count_attempts=kip848, heartbeats=heartbeats)
    conf = {**consumer_config(spec, strategy, static, group_protocol),
            "stats_cb": cb.on_stats, "on_commit": cb.on_commit}
    if heartbeats is not None:
        conf["logger"] = heartbeats.logger(f"{spec.member}-i{spec.incarnation}")
    consumer = Consumer(conf)
    try:
        consumer.subscribe([spec.topic], on_assign=cb.on_assign, on_revoke=cb.on_revoke,
                           on_lost=cb.on_lost)
        while not stop.is_set():
            msg = consumer.poll(0.2)
            if msg is None or msg.error():
                continue
            writer.delivery(msg.partition(), msg.offset(), parse_seq(msg.value()))
        writer.lifecycle(Lifecycle.STOPPING)
        if not static:
            # unsubscribe sends LeaveGroup and revokes; one more statistics tick records it.
            consumer.unsubscribe()
            deadline = time.monotonic() + LEAVE_FLUSH_S
            while time.monotonic() < deadline:
                msg = consumer.poll(0.1)
                if msg is not None and not msg.error():
                    writer.delivery(msg.partition(), msg.offset(), parse_seq(msg.value()))
    finally:
        consumer.close()
