"""The connector properties of a lab member: what every experiment's ZooKeeper member shares
(and the broker-side member's heartbeat interval, :func:`lab_heartbeat_interval_ms`).

Every member the lab starts (a compare, herd, split-brain or migration member, or a chaos
member) is a ``ZookeeperConsumerConnector`` in the same group shape: it starts at the earliest
offset, wakes from its stream at least every ``consumer.timeout.ms`` (so it can be told to stop
and sample its counters), and runs with the experiment's session timeout and rebalance retry
budget. The experiment adds only what is its own (the assignor and coordination mode, or the
chaos member's manual commits).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zkconsumer.scenarios.timing import Timing

LONGEST_CONSUMER_TIMEOUT_MS = 500


def lab_consumer_timeout_ms(timing: Timing) -> int:
    """A lab member's ``consumer.timeout.ms``: its counters' sampling interval, at most
    :data:`LONGEST_CONSUMER_TIMEOUT_MS` (so a stop request is seen within half a second). The
    simulator's legacy leaves wake on the same grid."""
    return int(min(LONGEST_CONSUMER_TIMEOUT_MS, timing.request_sample_interval_s * 1000))


def lab_heartbeat_interval_ms(session_timeout_ms: int) -> int:
    """``heartbeat.interval.ms`` of a lab member in a broker-coordinated group: a third of the
    session (the usual Kafka ratio), not librdkafka's 3000 ms default. The heartbeats a group
    sends while it waits for a session to expire are most of its requests in a crash, so the
    simulator and the readers of the runs' records take the same value."""
    return max(100, session_timeout_ms // 3)


def member_properties(*, zk_connect: str, group: str, consumer_id: str,
                      session_timeout_ms: int, rebalance_backoff_ms: int,
                      rebalance_max_retries: int, consumer_timeout_ms: int,
                      extra: Mapping[str, object] | None = None) -> dict[str, object]:
    """The member's connector properties; ``extra`` adds (or overrides) the experiment's own."""
    return {
        "zookeeper.connect": zk_connect,
        "group.id": group,
        "consumer.id": consumer_id,
        "auto.offset.reset": "smallest",
        "consumer.timeout.ms": consumer_timeout_ms,
        "zookeeper.session.timeout.ms": session_timeout_ms,
        "rebalance.backoff.ms": rebalance_backoff_ms,
        "rebalance.max.retries": rebalance_max_retries,
    } | dict(extra or {})
