"""``--mode sim``: the simulator over a parameter grid, distributed by Spark.

Every cell is one :func:`zkconsumer.sim.simulate` call, a pure function of its configuration:
the grid is parallelised one cell per Spark partition (most expensive first, see
:mod:`.grid`), each executor simulates its cells and returns table rows, and the driver writes
the table, the summary and the plots from Spark aggregates. The same seed gives the same rows
on any number of executors.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from zkconsumer.scenarios.protocols import PROTOCOL_TABLE
from zkconsumer.sim import Calibration, SimConfig, simulate
from zkconsumer.sim.placement import Placement, parse_placement
from zkconsumer.spark.herd.grid import Cell
from zkconsumer.spark.herd.tables import schema_ddl, to_record

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SimSettings:
    """What every simulated cell shares (the real runs' client and group settings)."""

    calibration: Calibration = field(default_factory=Calibration)
    session_timeout_ms: int = 6000
    rebalance_backoff_ms: int = 2000
    rebalance_max_retries: int = 4
    client_processes: int = 0
    # A placement option (zkconsumer.sim.placement: here, per-member, PROCESSESxCORES),
    # resolved per cell for the members it ends with; "" keeps client_processes.
    placement: str = ""
    tasks: int = 2  # the real runs' Spark tasks, which "here" spreads the members over
    offsets_changed: float = 0.0
    # Offset commits are not counted as coordination requests (the real rows leave them out).
    auto_commit: bool = False
    # The KIP-848 groups' heartbeat interval, a broker setting (None: Apache Kafka 4's default,
    # kip848_heartbeat_ms); the classic groups keep the simulator's client interval.
    consumer_heartbeat_interval_ms: int | None = None

    @property
    def kip848_heartbeat_ms(self) -> int:
        from zkconsumer.testing.kraft import DEFAULT_CONSUMER_HEARTBEAT_MS

        return self.consumer_heartbeat_interval_ms or DEFAULT_CONSUMER_HEARTBEAT_MS

    def placement_for(self, cell: Cell) -> Placement | None:
        """The cell's placement: its members after the event (a joiner is placed too)."""
        if not self.placement:
            return None
        members = cell.members + (1 if cell.event == "join" else 0)
        return parse_placement(self.placement, members, tasks=self.tasks)

    def config(self, cell: Cell) -> SimConfig:
        return SimConfig(cell.protocol, cell.members, cell.partitions, cell.event,
                         seed=cell.seed, calibration=self.calibration,
                         session_timeout_ms=self.session_timeout_ms,
                         rebalance_backoff_ms=self.rebalance_backoff_ms,
                         rebalance_max_retries=self.rebalance_max_retries,
                         client_processes=self.client_processes,
                         placement=self.placement_for(cell),
                         offsets_changed=self.offsets_changed, auto_commit=self.auto_commit,
                         **({"heartbeat_interval_ms": self.kip848_heartbeat_ms}
                            if PROTOCOL_TABLE[cell.protocol].kip848 else {}))


def simulate_cell(cell: Cell, settings: SimSettings) -> dict[str, Any]:
    """One table row (a dict) for one cell."""
    row = simulate(settings.config(cell)).row()
    row["session_timeout_ms"] = settings.session_timeout_ms
    row["settled"] = row["time_to_stable_s"] is not None
    row["drained"] = None  # a simulated run moves no records
    return row


def sweep_dataframe(spark: Any, grid: Sequence[Cell], settings: SimSettings,
                    done: Any = None) -> Any:
    """The table of the whole grid as a DataFrame (computed on the executors).

    ``done``: a Spark accumulator each finished cell adds 1 to (the driver's progress bar).
    """
    if not grid:
        raise ValueError("the grid is empty")
    sc = spark.sparkContext
    # Several Spark partitions per core, so the most expensive cells (first in the grid) do
    # not all land in one task; not one per cell, which costs a task launch each.
    slices = min(len(grid), max(1, sc.defaultParallelism) * 8)
    rdd = sc.parallelize(list(grid), slices)
    def one(cell: Cell) -> Any:
        record = to_record(simulate_cell(cell, settings))
        if done is not None:
            done.add(1)
        return record

    records = rdd.map(one)
    return spark.createDataFrame(records, schema_ddl())
