"""The parameter grid of a sweep: protocols x members x partitions x events x seeds.

Pure: builds the cells, drops the ones an event cannot have (a leave or a crash needs two
members), and orders them most expensive first so that Spark's tasks finish together instead of
one straggler holding the stage (a legacy join costs ~N² requests to simulate, a broker event ~N).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Cell:
    """One row of the sweep table, before it is run."""

    protocol: str
    members: int
    partitions: int
    event: str
    seed: int

    def key(self) -> tuple[str, int, int, str, int]:
        return (self.protocol, self.members, self.partitions, self.event, self.seed)


def cells(protocols: Sequence[str], members: Sequence[int], partitions: Sequence[int],
          events: Sequence[str], seeds: int) -> list[Cell]:
    out = [Cell(p, n, k, e, s) for p, n, k, e, s in
           itertools.product(protocols, members, partitions, events, range(seeds))
           if n >= (1 if e == "join" else 2)]
    return sorted(out, key=lambda c: (-cost_estimate(c), c.key()))


def cost_estimate(cell: Cell) -> float:
    """Relative simulation cost (events); used only to order the work."""
    if cell.protocol.startswith("zk-"):
        return float(cell.members) ** 2 / 50.0 + cell.members + cell.partitions
    return float(cell.members) + cell.partitions

