"""The outcome of one simulated event, and its row for the grid (Spark) tables.

Column meanings (the same as the real runs' rows, ``mode`` tells them apart):

* ``coordination_requests``: ZooKeeper requests (legacy) or group-coordinator requests (broker
  protocols) from the event until the group is stable (or the run ends);
* ``rebalance_attempts``: legacy: the most attempts any member made (``syncedRebalance`` tries);
  broker: JoinGroup rounds (generations); kip848: group-epoch bumps;
* ``conflicts``: owner-znode ``NodeExists`` not adopted (legacy only; 0 elsewhere by design);
* ``time_to_stable_s``: event (for a crash, the kill) until every partition has exactly one live
  owner and nobody is still rebalancing; ``None`` if that never happens (``lost`` > 0);
* ``members_paused``: members that stopped fetching at least one partition they held;
* ``failed_rebalances``: members whose ``syncedRebalance`` ran out of retries;
* ``lost``: partitions without a live owner when the run ended.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from zkconsumer.sim.config import SimConfig
from zkconsumer.sim.tally import JoinerPhases, MemberPhases

log = logging.getLogger(__name__)

COLUMNS = ("protocol", "members", "partitions", "event", "seed", "coordination_requests",
           "rebalance_attempts", "conflicts", "time_to_stable_s", "members_paused",
           "failed_rebalances", "lost")
EXTRAS = ("mode", "simulated_only", "watch_notifications", "rollbacks", "zk_reads", "zk_writes",
          "members_woken", "attempts_total", "leader_computations", "registration_reads",
          "max_unowned_s", "sim_time_s", "sim_events")


@dataclass(frozen=True)
class SimResult:
    """Everything one run measured; :meth:`row` flattens it."""

    config: SimConfig
    coordination_requests: int
    rebalance_attempts: int
    conflicts: int
    time_to_stable_s: float | None
    members_paused: int
    failed_rebalances: int
    lost: int
    watch_notifications: int
    rollbacks: int
    zk_reads: int
    zk_writes: int
    members_woken: int
    attempts_total: int
    leader_computations: int
    registration_reads: int
    max_unowned_s: float
    sim_time_s: float
    sim_events: int
    # ZooKeeper requests by operation, where the model names them (the leader mode); not a
    # grid column
    zk_operations: dict[str, int] = field(default_factory=dict)
    # the ZooKeeper-family models' members' phases (zkconsumer.sim.tally.Tally.member_phases)
    member_phases: tuple[MemberPhases, ...] = ()
    # the members that planned with nothing to stop (Tally.joiner_phases)
    joiner_phases: tuple[JoinerPhases, ...] = ()
    # how many members the group's formation left as stragglers (broker-side models on the
    # Tansu formation; 0 elsewhere); not a grid column
    formation_stragglers: int = 0

    @property
    def stable(self) -> bool:
        return self.time_to_stable_s is not None

    def row(self) -> dict[str, Any]:
        """The grid columns (in order), then ``mode="sim"`` and the extras."""
        c = self.config
        row: dict[str, Any] = {
            "protocol": c.protocol,
            "members": c.members,
            "partitions": c.partitions,
            "event": c.event,
            "seed": c.seed,
            "coordination_requests": self.coordination_requests,
            "rebalance_attempts": self.rebalance_attempts,
            "conflicts": self.conflicts,
            "time_to_stable_s": self.time_to_stable_s,
            "members_paused": self.members_paused,
            "failed_rebalances": self.failed_rebalances,
            "lost": self.lost,
            "mode": "sim",
            "simulated_only": c.simulated_only,
        }
        for name in EXTRAS[2:]:
            row[name] = getattr(self, name)
        return row
