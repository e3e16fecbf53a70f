"""The sweep table both modes write: its schema and row order (the files:
:func:`zkconsumer.spark.summary.write_tables`).

One row per (protocol, members, partitions, event, seed). The first columns are the herd
metrics (:data:`zkconsumer.sim.result.COLUMNS`), then ``mode`` (``real`` or ``sim``) and
``simulated_only`` (a model with no real run under its name: a simulator-only row), then extras
that one mode or the other fills (None where it has no such figure).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from zkconsumer.sim.result import COLUMNS

log = logging.getLogger(__name__)

# (name, Spark SQL type) in table order.
SCHEMA_FIELDS: tuple[tuple[str, str], ...] = (
    ("protocol", "string"), ("members", "int"), ("partitions", "int"), ("event", "string"),
    ("seed", "int"), ("coordination_requests", "long"), ("rebalance_attempts", "int"),
    ("conflicts", "int"), ("time_to_stable_s", "double"), ("members_paused", "int"),
    ("failed_rebalances", "int"), ("lost", "long"),
    ("mode", "string"), ("simulated_only", "boolean"),
    ("watch_notifications", "long"), ("attempts_total", "long"), ("members_woken", "int"),
    ("rollbacks", "int"), ("zk_reads", "long"), ("zk_writes", "long"),
    ("leader_computations", "int"), ("max_unowned_s", "double"), ("sim_events", "long"),
    ("tasks", "int"), ("produced", "long"), ("delivered", "long"), ("duplicates", "long"),
    ("session_timeout_ms", "int"), ("settled", "boolean"),
    # real runs: whether every member caught up with the producer before the drain deadline
    # (a run that did not drain reports records still in flight as ``lost``); None: simulated
    ("drained", "boolean"),
)
TABLE_COLUMNS = tuple(name for name, _ in SCHEMA_FIELDS)
assert TABLE_COLUMNS[:len(COLUMNS)] == COLUMNS
# the order of the rows in sweep.parquet and sweep.csv
TABLE_ORDER = ("protocol", "event", "partitions", "members", "seed")

_CASTS = {"string": str, "int": int, "long": int, "double": float, "boolean": bool}


def schema_ddl() -> str:
    """The schema as a DDL string (``createDataFrame(rows, schema_ddl())``)."""
    return ", ".join(f"{name} {kind}" for name, kind in SCHEMA_FIELDS)


def to_record(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """A dict with (some of) the table's columns -> a tuple in schema order, typed."""
    out = []
    for name, kind in SCHEMA_FIELDS:
        value = row.get(name)
        out.append(None if value is None else _CASTS[kind](value))
    return tuple(out)

