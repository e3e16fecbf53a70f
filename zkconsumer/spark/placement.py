"""Where a real run's members ran, as the simulator's placement model reads it.

Both real jobs host member ``i`` in Spark task ``i % tasks`` (joiners too), each task one
Python process (PySpark runs every task of a barrier stage in a worker process of its own), all
on this host's cores when the executors are local; the embedded ZooKeeper server and broker
run on the same cores unless ``--zk``/``--bootstrap`` name servers elsewhere. The jobs write
this beside every run (its window file) and in ``meta.json``, so a simulated cell can take the
placement of the run it is compared with (:func:`zkconsumer.sim.placement.recorded`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

from zkconsumer.sim.placement import Placement, parse_placement, spread

log = logging.getLogger(__name__)


def run_placement(members: int, tasks: int, servers_on_host: bool,
                  **notes: str) -> dict[str, Any]:
    """One run's placement as JSON: ``members`` over ``min(tasks, members)`` processes on this
    host's cores; ``notes`` add what the placement's numbers do not say (where a joiner or a
    crash's victim ran)."""
    placed = Placement(spread(members, max(1, min(tasks, members))), cores=os.cpu_count() or 1,
                       servers_on_cores=servers_on_host, name="recorded")
    return {**placed.to_json(), **notes}


def sweep_placement(mode: str, option: str | None, members: Sequence[int], tasks: int,
                    servers_on_host: bool) -> dict[str, Any]:
    """What a sweep's ``meta.json`` records of its placement, per group size N (the members
    before the event; the simulator puts a joiner in process ``N % processes``, the real herd
    job in task 0): real, what the runs did (:func:`run_placement`); sim, the
    ``--placement`` option resolved (``per-member`` when none is given)."""
    if mode == "real":
        return {"option": "recorded",
                "by_members": {str(n): run_placement(n, tasks, servers_on_host)
                               for n in members}}
    spec = option or "per-member"
    return {"option": spec,
            "by_members": {str(n): parse_placement(spec, n, tasks=max(1, tasks)).to_json()
                           for n in members}}


def placement_label(option: str | None, tasks: int, members: int = 100) -> str:
    """The simulated placement in words, for a summary's notes."""
    spec = option or "per-member"
    example = parse_placement(spec, members, tasks=max(1, tasks))
    if example.per_member:
        return f"{spec}: {example.label()}"
    return f"{spec} (at N = {members}: {example.label()})"
