"""``coordination.mode=legacy``: the original's protocol as one :class:`CoordinationMode`.

Every member watches the group and every subscribed topic, and on any change rebalances the
whole group in its own head (``attempt.py``, decisions in ``plan.py``) on the rebalancer thread
(``rebalancer.py``). The session, one fetcher manager for every partition and the configured
offset store (ZooKeeper or Kafka) are the original's.

``zkconsumer.session.lost.policy``: with ``legacy`` a disconnection is ignored as the original
did (fetchers keep delivering: the zombie); with ``stop-fetchers`` a session presumed lost stops
delivery and rebalances, timed from the disconnection as Curator does (kazoo reports LOST only
once it reaches a server again).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from zkconsumer.assignors import get_assignor
from zkconsumer.config import ConsumerConfig
from zkconsumer.datapath.fetcher import FetcherManager
from zkconsumer.membership import wiring
from zkconsumer.membership.mode import Fetchers, MemberParts, ModeSpec
from zkconsumer.membership.triggers import Trigger, WatchSet
from zkconsumer.rebalance.attempt import RebalanceExecutor
from zkconsumer.rebalance.rebalancer import Rebalancer
from zkconsumer.zk.session import SessionEvent, ZkSession

log = logging.getLogger(__name__)


class LegacyMode:
    """The watches, the rebalance executor and the rebalancer thread of one connector."""

    def __init__(self, parts: MemberParts) -> None:
        cfg = parts.config
        self.parts = parts
        self.watches = WatchSet(parts.session, self._on_trigger, parts.events)
        self.executor = RebalanceExecutor(
            consumer_id=parts.consumer_id, config=cfg, session=parts.session,
            subscription=parts.subscription, ownership=parts.ownership, offsets=parts.offsets,
            fetchers=parts.fetchers, watches=self.watches,
            assignor=get_assignor(f"legacy-{cfg.partition_assignment_strategy}"),
            events=parts.events, metrics=parts.metrics, listener=parts.listener,
            is_shutting_down=parts.is_shutting_down)
        self.rebalancer = Rebalancer(parts.consumer_id, self.executor, cfg.rebalance_max_retries,
                                     cfg.rebalance_backoff_ms, parts.events, parts.metrics)
        self._lost_timer: threading.Timer | None = None
        self._timer_lock = threading.Lock()

    def start(self) -> None:
        self.executor.register()
        self.executor.subscribe()
        self.rebalancer.start()

    def first_rebalance(self) -> None:
        self.rebalancer.rebalance_now(Trigger.STARTUP)

    def _on_trigger(self, reason: Trigger, detail: str) -> None:
        if not self.parts.is_shutting_down():
            self.rebalancer.trigger(reason, detail)

    def on_session_event(self, event: SessionEvent) -> None:
        """kazoo's thread: record and hand over; the rebalancer does the ZooKeeper work."""
        if event.new_session:
            self._on_trigger(Trigger.NEW_SESSION, f"0x{event.session_id or 0:x}")
        cfg = self.parts.config
        if cfg.session_lost_policy == "legacy":
            return  # the original ignored disconnection: fetchers keep delivering (zombie)
        with self._timer_lock:  # not the connector's lock: kazoo's thread must never wait
            if self._lost_timer is not None:
                self._lost_timer.cancel()
                self._lost_timer = None
            if event.state in ("LOST", "SUSPENDED") and not self.parts.is_shutting_down():
                # kazoo reports LOST only once it reaches a server again; count the session
                # timeout from the disconnection instead, as Curator does. The work runs on
                # the timer's thread: kazoo's must not block.
                delay = 0.0 if event.state == "LOST" else \
                    cfg.zookeeper_session_timeout_ms / 1000.0
                timer = threading.Timer(delay, self._on_presumed_lost)
                timer.name = f"{self.parts.consumer_id}-session-lost-timer"
                timer.daemon = True
                self._lost_timer = timer
                timer.start()

    def _on_presumed_lost(self) -> None:
        if self.parts.session.connected or self.parts.is_shutting_down():
            return
        self.executor.stop_delivery()
        self._on_trigger(Trigger.SESSION_LOST, "disconnected for a session timeout")

    def stop(self, timeout: float) -> None:
        self.watches.close()
        with self._timer_lock:
            if self._lost_timer is not None:
                self._lost_timer.cancel()
        self.rebalancer.stop(timeout)

    def release_all(self) -> None:
        """Nothing of its own: the connector commits, then deletes the owner znodes."""

    @property
    def state(self) -> str:
        return self.rebalancer.state.value

    def describe(self) -> dict[str, Any]:
        return {"mode": "legacy"}


def make_fetchers(cfg: ConsumerConfig, consumer_id: str, session: ZkSession) -> Fetchers:
    """The original's one fetcher manager for every owned partition."""
    return FetcherManager(cfg, consumer_id, session)


LEGACY = ModeSpec(name="legacy", session_class=ZkSession, make_fetchers=make_fetchers,
                  make_offsets=wiring.make_configured_offsets, create=LegacyMode)
