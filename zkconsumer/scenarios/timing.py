"""The timeouts of a run, shared by the lab, the Spark jobs and the simulator.

One dataclass for all three so a simulated cell runs on the settings of the real run it is
compared with (``zkconsumer.sim.splitbrain`` reads the same defaults the lab's members use).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    """Timeouts shared by every protocol of an experiment, so the comparison is like for like.

    ``session_timeout_ms`` is both ``zookeeper.session.timeout.ms`` and the broker group's
    ``session.timeout.ms``: on Tansu the broker-side rebalance time scales with it.
    """

    session_timeout_ms: int = 6000
    rebalance_backoff_ms: int = 1000
    rebalance_max_retries: int = 10
    auto_commit_interval_ms: int = 1000
    quiet_s: float = 3.0               # stable this long with no timeline change = settled
    formation_deadline_s: float = 90.0
    event_deadline_s: float = 90.0
    drain_deadline_s: float = 30.0
    produce_rate: float = 40.0          # messages per second, spread over every partition
    # How often a ZooKeeper member writes its request counters (the herd samples faster so its
    # snapshots can follow the settled group sooner; broker members follow librdkafka's 1 s).
    request_sample_interval_s: float = 1.0
    # KIP-848 groups' heartbeat interval, a setting of the (Kafka 4) broker the run starts:
    # group.consumer.heartbeat.interval.ms; None keeps the broker's default (5 s).
    consumer_heartbeat_interval_ms: int | None = None
