"""Members of broker-coordinated groups: a heartbeat schedule and what they fetch.

Broker-side members learn about a rebalance only from a heartbeat response (or their own join),
so each one has a fixed phase: it heartbeats at ``phase + k·interval``. Heartbeats are not
simulated one by one (10,000 members × minutes would be millions of events that change
nothing); :func:`count_heartbeats` adds them up over each member's lifetime at the end of a run,
and :func:`next_beat` finds the one that carries news.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from zkconsumer.sim import costs

log = logging.getLogger(__name__)


@dataclass(eq=False)
class BrokerMember:
    """One member as the coordinator and the ledger see it."""

    mid: str
    phase: float
    since: float = 0.0
    until: float | None = None  # left or died
    owned: set[int] = field(default_factory=set)  # partitions it fetches
    alive: bool = True
    in_group: bool = True
    # eager/cooperative: waiting for a SyncGroup answer; a rebalance learnt meanwhile waits
    awaiting_sync: bool = False
    learned_pending: int = 0  # the round learnt while waiting (0: none)
    # kip848: the coordinator's view and the member's in-flight work
    assigned: set[int] = field(default_factory=set)
    hb_scheduled: bool = False
    inflight: int = 0
    unsettled: bool = False


def next_beat(member: BrokerMember, not_before: float, interval: float) -> float:
    """The first heartbeat of ``member`` at or after ``not_before``."""
    if not_before <= member.phase:
        return member.phase
    k = math.ceil((not_before - member.phase) / interval - 1e-12)
    return member.phase + k * interval


def count_heartbeats(members: Iterable[BrokerMember], interval: float, end: float) -> int:
    """Scheduled heartbeats sent between the event (t = 0) and ``end``."""
    total = 0
    for m in members:
        stop = end if m.until is None else min(end, m.until)
        total += costs.heartbeats(m.phase, interval, max(0.0, m.since), stop)
    return total
