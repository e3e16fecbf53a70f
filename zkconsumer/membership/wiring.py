"""Building the session and the offset store a coordination mode asks for.

The mode chooses the session class (the leader mode's needs multi-operations) and whether its
commits are fenced; the storage (``offsets.storage``) is the user's choice in the legacy mode.
"""

from __future__ import annotations

from collections.abc import Callable

from zkconsumer.config import ConsumerConfig
from zkconsumer.events import EventBus
from zkconsumer.metrics import RebalanceMetrics, ZkRequestCounter
from zkconsumer.offsets.kafka import KafkaOffsetStore
from zkconsumer.offsets.store import OffsetStore
from zkconsumer.offsets.zookeeper import ZookeeperOffsetStore
from zkconsumer.zk.security import ZkSecurity
from zkconsumer.zk.session import ZkSession


def make_session(cfg: ConsumerConfig, counter: ZkRequestCounter, name: str,
                 session_class: type[ZkSession] = ZkSession) -> ZkSession:
    """The connector's ZooKeeper session (not started), of the class its mode needs."""
    return session_class(cfg.zookeeper_connect, cfg.zookeeper_session_timeout_ms,
                         cfg.zookeeper_connection_timeout_ms, counter, name=name,
                         security=ZkSecurity.from_config(cfg))


def make_configured_offsets(cfg: ConsumerConfig, session: ZkSession, events: EventBus,
                            metrics: RebalanceMetrics,
                            is_shutting_down: Callable[[], bool] = lambda: False
                            ) -> OffsetStore:
    """``offsets.storage``: Kafka (with or without dual commit) or ZooKeeper."""
    if cfg.offsets_storage == "kafka":
        return KafkaOffsetStore(session, cfg, events, metrics, is_shutting_down)
    return ZookeeperOffsetStore(session, cfg.group_id, events, metrics)
