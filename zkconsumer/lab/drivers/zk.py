"""The ZooKeeper-coordinated member: our ``ZookeeperConsumerConnector`` with a legacy assignor.

The connector's structured events are translated into lab records: ``fetchers_started`` is when
a partition is assigned and fetching (its owner znode was claimed just before), and
``fetchers_stopped`` is when it stops, which in the legacy protocol happens to every partition at
the start of every rebalance attempt (the eager release of spec §3.6). Request counts come from
the connector's own per-operation counters.

Two more records serve the herd and split-brain scenarios: every ``watch_fired`` event (a
ZooKeeper watch notification delivered to this member) becomes a ``watch_fired`` coordination
record, and every ``assignment_decided`` event (the legacy assignor run over the view one attempt
read, or a leader's published generation) becomes a ``dc`` decision record
(:class:`~zkconsumer.lab.drivers.decisions.DecisionRecorder`). Everything is recorded from the
connector's events and public metrics, never from its internals.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from zkconsumer import ConsumerConfig, ConsumerTimeoutException, ZookeeperConsumerConnector
from zkconsumer.lab.drivers.base import MemberSpec, parse_seq
from zkconsumer.lab.drivers.decisions import DecisionRecorder
from zkconsumer.lab.member_config import lab_consumer_timeout_ms, member_properties
from zkconsumer.lab.records import (
    Coord,
    Lifecycle,
    RecordWriter,
    Timeline,
)

log = logging.getLogger(__name__)

# Connector event type -> coordination record.
_COORD = {
    "rebalance_started": Coord.REBALANCE_STARTED,
    "attempt_started": Coord.ATTEMPT,
    "owner_conflict": Coord.CONFLICT,
    "rollback": Coord.ROLLBACK,
    "rebalance_failed": Coord.REBALANCE_FAILED,
    "rebalance_succeeded": Coord.REBALANCE_SUCCEEDED,
    "watch_fired": Coord.WATCH_FIRED,
}
_STARTED = {"fetchers_started"}
_STOPPED = {"fetchers_stopped"}


def connector_config(spec: MemberSpec, strategy: str, mode: str = "legacy",
                     offsets: tuple[tuple[str, str], ...] = ()) -> dict[str, object]:
    """``offsets``: extra ``offsets.storage`` / ``dual.commit.enabled`` properties."""
    t = spec.timing
    return member_properties(
        zk_connect=spec.zk_connect, group=spec.group,
        consumer_id=f"{spec.member}-i{spec.incarnation}",
        session_timeout_ms=t.session_timeout_ms, rebalance_backoff_ms=t.rebalance_backoff_ms,
        rebalance_max_retries=t.rebalance_max_retries,
        # the member loop wakes at least this often, so counters are sampled on time
        consumer_timeout_ms=lab_consumer_timeout_ms(t),
        extra=dict(offsets) | {"coordination.mode": mode,
                               "partition.assignment.strategy": strategy,
                               "auto.commit.interval.ms": t.auto_commit_interval_ms})


class EventRecorder:
    """Connector listener: events become records; runs on the emitting thread, so it is quick."""

    def __init__(self, spec: MemberSpec, writer: RecordWriter) -> None:
        self._topic = spec.topic
        self._writer = writer

    def _partitions(self, event: dict[str, Any]) -> list[int]:
        out = []
        for item in event.get("partitions") or ():
            topic, partition = (item if isinstance(item, (list, tuple))
                                else str(item).rsplit("/", 1))
            if topic == self._topic:
                out.append(int(partition))
        return out

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        ts = float(event.get("ts") or time.time())
        if kind in _STARTED:
            parts = self._partitions(event)
            if parts:
                self._writer.write("tl", ts=ts, w=Timeline.ASSIGNED.value, ps=sorted(parts))
                self._writer.write("tl", ts=ts, w=Timeline.FETCHING.value, ps=sorted(parts))
        elif kind in _STOPPED:
            parts = self._partitions(event)
            if parts:
                self._writer.write("tl", ts=ts, w=Timeline.REVOKED.value, ps=sorted(parts))
        elif kind == "watch_fired":
            self._writer.write("co", ts=ts, w=Coord.WATCH_FIRED.value, path=event.get("path"))
        elif kind == "session_state":  # what a member sees of its session (split-brain runs)
            self._writer.write("co", ts=ts, w=f"session_{event.get('state')}",
                               new_session=bool(event.get("new_session")))
        elif kind == "offsets_committed":  # the split-brain zombie's late commits
            self._writer.write("co", ts=ts, w="commit_ok")
        elif kind == "error" and event.get("where") == "auto_commit":
            self._writer.write("co", ts=ts, w="commit_rejected:auto_commit_error")
        elif kind in _COORD:
            self._writer.write("co", ts=ts, w=_COORD[kind].value)


def _requests(conn: ZookeeperConsumerConnector) -> dict[str, int]:
    return dict(conn.metrics()["zookeeper"]["requests"])


def run_zk_member(spec: MemberSpec, writer: RecordWriter, stop: threading.Event,
                  *, strategy: str, mode: str = "legacy",
                  offsets: tuple[tuple[str, str], ...] = ()) -> None:
    """Consume until ``stop``; then shut the connector down cleanly (a leave)."""
    conn = ZookeeperConsumerConnector(ConsumerConfig(connector_config(spec, strategy, mode,
                                                                      offsets)))
    conn.add_event_listener(EventRecorder(spec, writer))
    conn.add_event_listener(DecisionRecorder(writer))
    try:
        streams = conn.create_message_streams({spec.topic: 1})
        it = iter(streams[spec.topic][0])
        next_sample = 0.0
        while not stop.is_set():
            now = time.monotonic()
            if now >= next_sample:
                writer.requests(_requests(conn))
                next_sample = now + spec.timing.request_sample_interval_s
            try:
                m = next(it)
            except ConsumerTimeoutException:
                continue
            except StopIteration:
                log.warning("[%s] stream ended before the member was told to stop", spec.member)
                break
            writer.delivery(m.partition, m.offset, parse_seq(m.message))
        writer.lifecycle(Lifecycle.STOPPING)
    finally:
        conn.shutdown()
        writer.requests(_requests(conn))
