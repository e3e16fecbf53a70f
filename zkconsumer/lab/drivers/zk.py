"""The ZooKeeper-coordinated member: our ``ZookeeperConsumerConnector`` with a legacy assignor.

The connector's structured events are translated into lab records: ``fetchers_started`` is when
a partition is assigned and fetching (its owner znode was claimed just before), and
``fetchers_stopped`` is when it stops, which in the legacy protocol happens to every partition at
the start of every rebalance attempt (the eager release of spec §3.6). Request counts come from
the connector's own per-operation counters.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from zkconsumer import ConsumerConfig, ConsumerTimeoutException, ZookeeperConsumerConnector
from zkconsumer.lab.drivers.base import REQUEST_SAMPLE_INTERVAL_S, MemberSpec, parse_seq
from zkconsumer.lab.records import Coord, Lifecycle, RecordWriter, Timeline

log = logging.getLogger(__name__)

# Connector event type -> coordination record.
_COORD = {
    "rebalance_started": Coord.REBALANCE_STARTED,
    "attempt_started": Coord.ATTEMPT,
    "owner_conflict": Coord.CONFLICT,
    "rollback": Coord.ROLLBACK,
    "rebalance_failed": Coord.REBALANCE_FAILED,
    "rebalance_succeeded": Coord.REBALANCE_SUCCEEDED,
}
_STARTED = {"fetchers_started"}
_STOPPED = {"fetchers_stopped"}


def connector_config(spec: MemberSpec, strategy: str) -> dict[str, object]:
    t = spec.timing
    return {
        "zookeeper.connect": spec.zk_connect,
        "group.id": spec.group,
        "consumer.id": f"{spec.member}-i{spec.incarnation}",
        "auto.offset.reset": "smallest",
        "consumer.timeout.ms": 500,
        "partition.assignment.strategy": strategy,
        "zookeeper.session.timeout.ms": t.session_timeout_ms,
        "rebalance.backoff.ms": t.rebalance_backoff_ms,
        "rebalance.max.retries": t.rebalance_max_retries,
        "auto.commit.interval.ms": t.auto_commit_interval_ms,
    }


class _EventRecorder:
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
        elif kind in _COORD:
            self._writer.write("co", ts=ts, w=_COORD[kind].value)


def _requests(conn: ZookeeperConsumerConnector) -> dict[str, int]:
    return dict(conn.metrics()["zookeeper"]["requests"])


def run_zk_member(spec: MemberSpec, writer: RecordWriter, stop: threading.Event,
                  *, strategy: str) -> None:
    """Consume until ``stop``; then shut the connector down cleanly (a leave)."""
    conn = ZookeeperConsumerConnector(ConsumerConfig(connector_config(spec, strategy)))
    conn.add_event_listener(_EventRecorder(spec, writer))
    try:
        streams = conn.create_message_streams({spec.topic: 1})
        it = iter(streams[spec.topic][0])
        next_sample = 0.0
        while not stop.is_set():
            now = time.monotonic()
            if now >= next_sample:
                writer.requests(_requests(conn))
                next_sample = now + REQUEST_SAMPLE_INTERVAL_S
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
