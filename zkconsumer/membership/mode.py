"""The one interface the connector drives a coordination mode through.

``coordination.mode`` picks a :class:`ModeSpec` (``zkconsumer/modes.py``): which session, fetchers
and offset store the connector builds for the mode, and how the mode itself is created once
streams exist. The connector then talks to :class:`CoordinationMode` only, so it holds one mode
object and never asks which one it is. The legacy mode (``rebalance/mode.py``) and the leader
mode (``coordination/mode.py``) implement it; the connector keeps what both share (streams and
queues, the generation holder, auto-commit, the shutdown order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from zkconsumer.config import ConsumerConfig
from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.events import EventBus, EventListener
from zkconsumer.membership.ownership import Ownership
from zkconsumer.membership.rebalance_listener import ConsumerRebalanceListener
from zkconsumer.metrics import RebalanceMetrics
from zkconsumer.offsets.store import OffsetStore
from zkconsumer.subscription import Subscription
from zkconsumer.zk.session import SessionEvent, ZkSession

#: ``metrics()["rebalancer_state"]`` before any stream exists (no mode is running yet).
NOT_JOINED_STATE = "idle"


class Fetchers(Protocol):
    """What the connector does with a mode's fetchers (one manager, or one per partition)."""

    def add_event_listener(self, fn: EventListener) -> None: ...
    def start_connections(self, infos: Iterable[PartitionTopicInfo]) -> None: ...
    def stop_connections(self) -> None: ...
    def shutdown(self) -> None: ...


@dataclass(frozen=True)
class MemberParts:
    """What the connector built and shares with the mode it creates."""

    consumer_id: str
    config: ConsumerConfig
    session: ZkSession
    subscription: Subscription
    ownership: Ownership
    offsets: OffsetStore
    fetchers: Fetchers
    events: EventBus
    metrics: RebalanceMetrics
    listener: ConsumerRebalanceListener | None
    is_shutting_down: Callable[[], bool]


class CoordinationMode(Protocol):
    """One connector's coordination once it has streams: a thread and the watches feeding it."""

    def start(self) -> None:
        """Register this member, set its watches and start the thread (caller's thread)."""
        ...

    def first_rebalance(self) -> None:
        """Wait until this member owns its first assignment; raise
        ``ConsumerRebalanceFailedException`` if it cannot."""
        ...

    def on_session_event(self, event: SessionEvent) -> None:
        """kazoo's thread: hand the session's change over; never block, never call ZooKeeper."""
        ...

    def stop(self, timeout: float) -> None:
        """Stop the watches and the thread, waiting up to ``timeout`` for a running pass."""
        ...

    def release_all(self) -> None:
        """Shutdown, after :meth:`stop`: the mode's own last commits and releases, before the
        connector deletes the remaining owner znodes and the registration."""
        ...

    @property
    def state(self) -> str:
        """The thread's state, for ``metrics()["rebalancer_state"]``."""
        ...

    def describe(self) -> dict[str, Any]:
        """``metrics()["coordination"]``."""
        ...


MakeFetchers = Callable[[ConsumerConfig, str, ZkSession], Fetchers]
MakeOffsets = Callable[[ConsumerConfig, ZkSession, EventBus, RebalanceMetrics,
                        Callable[[], bool]], OffsetStore]


@dataclass(frozen=True)
class ModeSpec:
    """One value of ``coordination.mode``: the parts the connector builds for it, and the mode."""

    name: str
    session_class: type[ZkSession]
    make_fetchers: MakeFetchers
    make_offsets: MakeOffsets
    create: Callable[[MemberParts], CoordinationMode]
