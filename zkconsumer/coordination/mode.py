"""``coordination.mode=leader`` as one :class:`CoordinationMode`: the coordinator and its parts.

The connector builds a session with multi-operations, one fetcher per partition and fenced
ZooKeeper offsets for this mode (the parts below), then drives the coordinator
(``coordinator.py``) through the shared interface.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zkconsumer.config import ConsumerConfig
from zkconsumer.coordination.coordinator import Coordinator
from zkconsumer.coordination.fetchers import PartitionFetchers
from zkconsumer.events import EventBus
from zkconsumer.membership.mode import Fetchers, MemberParts, ModeSpec
from zkconsumer.metrics import RebalanceMetrics
from zkconsumer.offsets.fenced import FencedOffsetStore
from zkconsumer.offsets.store import OffsetStore
from zkconsumer.zk.multi import MultiSession
from zkconsumer.zk.session import SessionEvent, ZkSession


def join_timeout_s(cfg: ConsumerConfig) -> float:
    """How long ``create_message_streams`` waits to be assigned by a leader.

    As long as the legacy first rebalance could take if each of its attempts waited a session
    timeout for a dead owner's znodes and then backed off: a claim may wait that long too.
    """
    return cfg.rebalance_max_retries * (cfg.rebalance_backoff_ms
                                        + cfg.zookeeper_session_timeout_ms) / 1000.0


class LeaderMode:
    """One connector's coordinator, created once streams exist."""

    def __init__(self, parts: MemberParts) -> None:
        session, offsets, fetchers = parts.session, parts.offsets, parts.fetchers
        if not (isinstance(session, MultiSession) and isinstance(offsets, FencedOffsetStore)
                and isinstance(fetchers, PartitionFetchers)):
            raise TypeError("the leader mode runs on the parts of its ModeSpec (LEADER): got "
                            f"{type(session).__name__}, {type(offsets).__name__}, "
                            f"{type(fetchers).__name__}")
        self.config = parts.config
        self.coordinator = Coordinator(
            consumer_id=parts.consumer_id, config=parts.config, session=session,
            subscription=parts.subscription, ownership=parts.ownership, offsets=offsets,
            fetchers=fetchers, events=parts.events, metrics=parts.metrics,
            listener=parts.listener, is_shutting_down=parts.is_shutting_down)

    def start(self) -> None:
        self.coordinator.register()
        self.coordinator.start()

    def first_rebalance(self) -> None:
        self.coordinator.join_now(join_timeout_s(self.config))

    def on_session_event(self, event: SessionEvent) -> None:
        self.coordinator.on_session_event(event)

    def stop(self, timeout: float) -> None:
        self.coordinator.stop(timeout)

    def release_all(self) -> None:
        """Final commits and owner deletions in one multi (``Coordinator.release_all``)."""
        self.coordinator.release_all()

    @property
    def state(self) -> str:
        return self.coordinator.state.value

    def describe(self) -> dict[str, Any]:
        return self.coordinator.describe()


def make_fetchers(cfg: ConsumerConfig, consumer_id: str, session: ZkSession) -> Fetchers:
    """One fetcher per partition: a handover stops and starts only the partitions that move."""
    return PartitionFetchers(cfg, consumer_id, session)


def make_offsets(cfg: ConsumerConfig, session: ZkSession, events: EventBus,
                 metrics: RebalanceMetrics, is_shutting_down: Callable[[], bool]
                 ) -> OffsetStore:
    """Fenced ZooKeeper offsets (``offsets.storage=kafka`` is refused with this mode)."""
    if not isinstance(session, MultiSession):
        raise TypeError(f"fenced offsets need a MultiSession, got {type(session).__name__}")
    return FencedOffsetStore(session, cfg.group_id, events, metrics)


LEADER = ModeSpec(name="leader", session_class=MultiSession, make_fetchers=make_fetchers,
                  make_offsets=make_offsets, create=LeaderMode)
