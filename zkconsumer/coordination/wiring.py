"""How the connector picks its parts by ``coordination.mode`` (one place, so its edits stay small).

``legacy`` keeps the original's pieces: a plain session, one fetcher manager for all partitions,
unconditional offset writes and the rebalancer. ``leader`` swaps in a session with multi-ops,
per-partition fetchers, fenced offsets and the coordinator; streams, queues, the generation
holder, auto-commit and shutdown are shared.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from zkconsumer.config import ConsumerConfig
from zkconsumer.coordination.fetchers import PartitionFetchers
from zkconsumer.datapath.fetcher import FetcherManager
from zkconsumer.events import EventBus
from zkconsumer.metrics import RebalanceMetrics, ZkRequestCounter
from zkconsumer.offsets.fenced import FencedOffsetStore
from zkconsumer.offsets.kafka import KafkaOffsetStore
from zkconsumer.offsets.store import OffsetStore
from zkconsumer.offsets.zookeeper import ZookeeperOffsetStore
from zkconsumer.zk.multi import MultiSession
from zkconsumer.zk.security import ZkSecurity
from zkconsumer.zk.session import ZkSession

log = logging.getLogger(__name__)


def leader_mode(config: ConsumerConfig) -> bool:
    return config.coordination_mode == "leader"


def make_session(cfg: ConsumerConfig, counter: ZkRequestCounter, name: str) -> ZkSession:
    cls = MultiSession if leader_mode(cfg) else ZkSession
    return cls(cfg.zookeeper_connect, cfg.zookeeper_session_timeout_ms,
               cfg.zookeeper_connection_timeout_ms, counter, name=name,
               security=ZkSecurity.from_config(cfg))


def make_fetchers(cfg: ConsumerConfig, consumer_id: str, session: ZkSession
                  ) -> FetcherManager | PartitionFetchers:
    if leader_mode(cfg):
        return PartitionFetchers(cfg, consumer_id, session)
    return FetcherManager(cfg, consumer_id, session)


def make_offsets(cfg: ConsumerConfig, session: ZkSession, events: EventBus,
                 metrics: RebalanceMetrics,
                 is_shutting_down: Callable[[], bool] = lambda: False) -> OffsetStore:
    if cfg.offsets_storage == "kafka":  # config.py allows it with the legacy mode only
        return KafkaOffsetStore(session, cfg, events, metrics, is_shutting_down)
    if leader_mode(cfg):
        assert isinstance(session, MultiSession)
        return FencedOffsetStore(session, cfg.group_id, events, metrics)
    return ZookeeperOffsetStore(session, cfg.group_id, events, metrics)


def join_timeout_s(cfg: ConsumerConfig) -> float:
    """How long ``create_message_streams`` waits to be assigned by a leader.

    As long as the legacy first rebalance could take if each of its attempts waited a session
    timeout for a dead owner's znodes and then backed off: a claim may wait that long too.
    """
    return cfg.rebalance_max_retries * (cfg.rebalance_backoff_ms
                                        + cfg.zookeeper_session_timeout_ms) / 1000.0


def describe(coordinator: Any) -> dict[str, Any]:
    return coordinator.describe() if coordinator is not None else {"mode": "legacy"}
