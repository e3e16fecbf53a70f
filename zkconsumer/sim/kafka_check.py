"""The Kafka coordinator profile against Kafka 2.4.1 runs it was not fitted to.

The plan (cells, simulator settings, tolerances) is ``results/comparison/kafka-model-plan.md``,
committed before the runs were measured; this module carries it out, pure given the runs::

    zkconsumer sim kafka-check results/comparison [--seen FOLDER ...]

reads ``results/comparison/*apache-kafka-2.4.1*/runs.json`` (compact ``experiment compare``
runs, :mod:`zkconsumer.results.comparison_data`), scores every cell (:func:`check`) and writes
``kafka-model-check/checks.json`` and ``sim-profiles/rows.json`` (the simulator's Tansu-timed
and Kafka-modelled broker groups side by side at larger N, :func:`profile_rows`), each with
its ``meta.json``.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from zkconsumer.sim.config import SimConfig
from zkconsumer.sim.kafka_coordinator import PREFIX
from zkconsumer.sim.simulate import simulate

REQUESTS_TOLERANCE = 0.10
TIME_TOLERANCE = 0.20
SCORED_PROTOCOLS = ("eager-range", "cooperative-sticky", "static-range")
SCORED_EVENTS = ("join", "leave", "crash")
SEEDS = tuple(range(1, 21))
# The lab's settings (zkconsumer.scenarios.timing.Timing, the broker driver), as the plan
# fixes them.
SESSION_MS, HEARTBEAT_MS, RATE = 6000, 2000, 40.0
COUNT_FROM_S, COUNT_UNTIL_S = 0.5, 2.5
KAFKA_RUNS = "apache-kafka-2.4.1"


@dataclass(frozen=True)
class Cell:
    protocol: str
    members: int
    partitions: int
    event: str


@dataclass(frozen=True)
class CellCheck:
    """One cell: real medians (``runs`` measured) and simulated medians, and the verdict.
    ``held_out``: False for cells of runs looked at before the profile's last change (shown,
    not counted)."""

    protocol: str
    members: int
    partitions: int
    event: str
    runs: int
    real_requests: float
    sim_requests: float
    real_tts: float
    sim_tts: float
    real_paused: float
    sim_paused: float
    real_attempts: float
    sim_attempts: float
    held_out: bool = True

    @property
    def requests_error(self) -> float:
        return abs(self.sim_requests - self.real_requests) / max(self.real_requests, 1.0)

    @property
    def tts_error(self) -> float:
        return abs(self.sim_tts - self.real_tts) / max(self.real_tts, 1e-3)

    @property
    def ok(self) -> bool:
        return (self.requests_error <= REQUESTS_TOLERANCE
                and self.tts_error <= TIME_TOLERANCE)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "requests_error": round(self.requests_error, 4),
                "tts_error": round(self.tts_error, 4), "ok": self.ok}


def sim_config(cell: Cell, seed: int, protocol: str | None = None, rate: float = RATE
               ) -> SimConfig:
    """The plan's simulator settings for one real cell (``rate`` 0: an idle topic)."""
    return SimConfig(protocol=protocol or PREFIX + cell.protocol, members=cell.members,
                     partitions=cell.partitions, event=cell.event, seed=seed,
                     session_timeout_ms=SESSION_MS, heartbeat_interval_ms=HEARTBEAT_MS,
                     messages_per_s=rate, member_order="start",
                     victim_rank=None if cell.event == "join" else cell.members - 1,
                     count_from_s=COUNT_FROM_S, count_until_s=COUNT_UNTIL_S)


def simulated(cell: Cell, seeds: Iterable[int] = SEEDS, protocol: str | None = None,
              rate: float = RATE) -> dict[str, float]:
    """Medians over ``seeds`` of the simulated cell."""
    rs = [simulate(sim_config(cell, s, protocol, rate)) for s in seeds]
    tts = [r.time_to_stable_s for r in rs if r.time_to_stable_s is not None]
    return {"requests": statistics.median(r.coordination_requests for r in rs),
            "tts": statistics.median(tts) if tts else float("nan"),
            "paused": statistics.median(r.members_paused for r in rs),
            "attempts": statistics.median(r.rebalance_attempts for r in rs)}


def real_cells(runs: Sequence[dict[str, Any]]) -> dict[Cell, list[dict[str, Any]]]:
    """The scored cells' settled runs (the plan: failed or unsettled runs are not scored)."""
    cells: dict[Cell, list[dict[str, Any]]] = {}
    for run in runs:
        if (run["protocol"] in SCORED_PROTOCOLS and run["event"] in SCORED_EVENTS
                and run["status"] == "ok" and (run.get("details") or {}).get("settled", True)
                and run["metrics"].get("time_to_stable_s") is not None):
            cell = Cell(run["protocol"], run["members"], run["partitions"], run["event"])
            cells.setdefault(cell, []).append(run["metrics"])
    return cells


def check(runs: Sequence[dict[str, Any]], seeds: Iterable[int] = SEEDS,
          seen: Iterable[Cell] = ()) -> list[CellCheck]:
    out = []
    seen = set(seen)
    seeds = tuple(seeds)
    for cell, metrics in sorted(real_cells(runs).items(),
                                key=lambda kv: (kv[0].members, kv[0].event, kv[0].protocol)):
        sim = simulated(cell, seeds)

        def med(key: str, ms: list[dict[str, Any]] = metrics) -> float:
            return float(statistics.median(m[key] for m in ms))

        out.append(CellCheck(cell.protocol, cell.members, cell.partitions, cell.event,
                             len(metrics), med("coordination_requests"), sim["requests"],
                             med("time_to_stable_s"), sim["tts"], med("members_paused"),
                             sim["paused"], med("rebalance_attempts"), sim["attempts"],
                             held_out=cell not in seen))
    return out


PROFILE_SIZES = (4, 64, 1000)
PROFILE_PARTITIONS = 16


def profile_rows(seeds: Iterable[int] = (1, 2, 3, 4, 5)) -> list[dict[str, Any]]:
    """The simulator's two broker profiles on the same cells: Tansu-timed and Kafka-modelled,
    on an idle topic (no auto-commits), so both count the same requests."""
    rows = []
    seeds = tuple(seeds)
    for n in PROFILE_SIZES:
        for event in SCORED_EVENTS:
            for protocol in ("eager-range", "cooperative-sticky"):
                cell = Cell(protocol, n, PROFILE_PARTITIONS, event)
                rows.append({"members": n, "partitions": PROFILE_PARTITIONS, "event": event,
                             "protocol": protocol,
                             "tansu": simulated(cell, seeds, protocol, rate=0.0),
                             "kafka": simulated(cell, seeds, PREFIX + protocol, rate=0.0)})
    return rows
