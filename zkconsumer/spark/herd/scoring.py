"""Score a distribution validation plan (``results/scale/validation-plan-3.json``): its cells'
committed real runs against fresh model draws, deterministically.

The plan names run sets (a broker, its protocols, the folder of its real runs and how they were
made); every set is scored over the plan's N x events. How a set's runs were made decides the
model's settings: a Spark herd run (``spark herd --mode real``) is drawn with the lab's herd
settings (:func:`.validate.lab_sim_config`), an ``experiment compare`` run with the compare
scenario's (:func:`compare_sim_config`). Which simulator profile draws a broker's cells is
:func:`model_protocol`: Tansu-timed broker groups on Tansu, Apache Kafka 2.4's coordinator rules
(``kafka-*``) on Kafka 2.4.1, and the KIP-848 model on Kafka 4.0.2.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zkconsumer.lab.drivers.broker import STATS_INTERVAL_MS
from zkconsumer.lab.member_config import lab_heartbeat_interval_ms
from zkconsumer.results.distributions import CellKey, CellScore, pass_line
from zkconsumer.results.judging import DistTolerances, Run
from zkconsumer.results.provenance import recorded_heartbeat_ms, recorded_settle
from zkconsumer.results.real_runs import (
    RunKey,
    cell_formation_reads,
    compare_runs,
    formation_reads,
    producer_events,
    spread_rows,
    straggler_ranks,
    straggler_runs,
    sweep_cell,
)
from zkconsumer.scenarios.timing import Timing
from zkconsumer.sim import Calibration, SimConfig, simulate
from zkconsumer.sim.formation import LAB_LAST_STARTED
from zkconsumer.sim.kafka_check import COUNT_FROM_S, COUNT_UNTIL_S
from zkconsumer.sim.kafka_check import RATE as COMPARE_RATE
from zkconsumer.sim.observation import Observation
from zkconsumer.spark.herd.metrics import SAMPLE_AFTER_S
from zkconsumer.spark.herd.set_speed import SpeedReference, speed_factor
from zkconsumer.spark.herd.validate import lab_sim_config
from zkconsumer.spark.task_control import (
    LOOK_INTERVAL_S,
    SETTLE_REBALANCES_ENDED,
    STATUS_INTERVAL_S,
    waits_for_rebalances,
)

COMPARE_RUNNER = "experiment compare"
# A Spark herd run's observer (zkconsumer.sim.observation): the coordinating task's looks at
# the statuses each task publishes, the lab's settle checks and counts, each broker member's
# count ending at its own last statistics sample (zkconsumer.sim.sampling)
HERD_OBSERVATION = Observation(check_interval_s=LOOK_INTERVAL_S, quiet_s=Timing().quiet_s,
                               count_after_s=SAMPLE_AFTER_S,
                               sample_interval_s=STATS_INTERVAL_MS / 1000.0,
                               status_interval_s=STATUS_INTERVAL_S)


@dataclass(frozen=True)
class RunSet:
    name: str
    broker: str
    folder: str
    protocols: tuple[str, ...]
    runner: str
    consumer_heartbeat_interval_ms: int | None = None
    # protocol -> the simulator profile that draws its cells, where the plan names one
    models: tuple[tuple[str, str], ...] = ()
    # the set's `spark formation-spread` rows (CSVs under the repository), where the plan
    # splits its runs by whether their formation left stragglers or draws them at the set's
    # speed; a plan names one file, or a list of them
    formation_spread: tuple[str, ...] = ()
    # the set's own group sizes where they are not the plan's (a set made at other N)
    members: tuple[int, ...] = ()

    @property
    def by_compare(self) -> bool:
        return self.runner.startswith(COMPARE_RUNNER)


@dataclass(frozen=True)
class DistPlan:
    sets: tuple[RunSet, ...]
    members: tuple[int, ...]
    partitions: int
    events: tuple[str, ...]
    session_timeout_ms: int
    real_seeds: int
    sim_draws: int
    tolerances: DistTolerances
    calibration: str | None
    # `spark formation-spread` rows of earlier runs (a CSV under the repository) whose
    # producer_event rows place each cell's event on the producer's cycle, where the plan
    # measured it (SimConfig.event_after_producer_s)
    event_on_producer: str | None = None
    # where the plan draws a set's cells at the set's own speed (.set_speed)
    set_speed: SpeedReference | None = None
    # `spark formation-spread` rows of earlier runs whose straggler rows weight the model's
    # draw of which members straggle by their creation rank (SimConfig.formation_straggler_ranks)
    straggler_ranks: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, plan: dict[str, Any]) -> DistPlan:
        try:
            sets = tuple(RunSet(s["name"], s["broker"], s["folder"], tuple(s["protocols"]),
                                s["runner"], s.get("consumer_heartbeat_interval_ms"),
                                tuple(sorted(s.get("models", {}).items())),
                                spread_files(s.get("formation_spread")),
                                set_members(s))
                         for s in plan["sets"])
            calibration = plan.get("calibration")
            for amendment in plan.get("amendments", ()):
                calibration = amendment.get("calibration", calibration)
            return cls(sets, tuple(int(n) for n in plan["members"]), int(plan["partitions"]),
                       tuple(plan["events"]), int(plan["session_timeout_ms"]),
                       int(plan["real_seeds"]), int(plan["sim_draws"]),
                       DistTolerances.from_plan(plan), calibration,
                       plan.get("event_on_producer"),
                       SpeedReference.from_json(plan["set_speed"]) if "set_speed" in plan
                       else None,
                       spread_files(plan.get("straggler_ranks"), "straggler_ranks"))
        except KeyError as exc:
            raise ValueError(f"validation plan: missing {exc.args[0]!r} (a distribution plan "
                             "gives sets, members, partitions, events, session_timeout_ms, "
                             "real_seeds, sim_draws and tolerances)") from None

    def cells(self) -> list[tuple[RunSet, CellKey]]:
        return [(s, CellKey(s.name, s.broker, proto, n, self.partitions, event))
                for s in self.sets for proto in s.protocols for n in (s.members or self.members)
                for event in self.events]


def set_members(run_set: dict[str, Any]) -> tuple[int, ...]:
    """A set's own group sizes (its ``members``), where it names them: whole numbers of at
    least 2 (a join or a leave needs a group), else the plan's apply."""
    value = run_set.get("members")
    if value is None:
        return ()
    if (not isinstance(value, list) or not value
            or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 2 for n in value)):
        raise ValueError(f"validation plan: set {run_set.get('name')!r}: members must be a "
                         f"non-empty list of group sizes >= 2, got {value!r}")
    return tuple(value)


def spread_files(value: Any, name: str = "a set's formation_spread") -> tuple[str, ...]:
    """Formation-spread rows as the plan gives them (a path, a list of them, or none)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError(f"validation plan: {name} must be a path or a list of paths, "
                     f"got {value!r}")


def is_distribution_plan(plan: dict[str, Any]) -> bool:
    return isinstance(plan.get("sets"), list)


def model_protocol(run_set: RunSet, protocol: str) -> str:
    """The simulator profile that draws a broker's cells of ``protocol``: the one the plan's
    run set names, else the broker's profile."""
    named = dict(run_set.models).get(protocol)
    if named is not None:
        return named
    if protocol.startswith("zk-"):
        return protocol
    if run_set.broker.startswith("apache-kafka-2."):
        return "kafka-" + protocol
    if protocol == "consumer-range":
        return "kip848-range"
    if protocol.startswith("consumer-"):
        return "kip848"
    if protocol == "static-consumer-uniform":  # static range members: not modelled
        return "kip848-static"
    return protocol


def compare_sim_config(protocol: str, key: CellKey, session_timeout_ms: int, seed: int,
                       cal: Calibration, heartbeat_ms: int | None) -> SimConfig:
    """An ``experiment compare`` run's settings: members as threads of one process, the last
    member leaves, counts over the compare window's margins (as ``sim kafka-check``)."""
    return SimConfig(protocol=protocol, members=key.members, partitions=key.partitions,
                     event=key.event, seed=seed, calibration=cal,
                     session_timeout_ms=session_timeout_ms,
                     heartbeat_interval_ms=(heartbeat_ms
                                            or lab_heartbeat_interval_ms(session_timeout_ms)),
                     messages_per_s=COMPARE_RATE, member_order="start",
                     victim_rank=None if key.event == "join" else key.members - 1,
                     count_from_s=COUNT_FROM_S, count_until_s=COUNT_UNTIL_S,
                     client_processes=1)


def set_observation(repo: Path, run_set: RunSet, key: CellKey) -> Observation | None:
    """How the real runs of a cell were observed, for the model to copy: none for compare runs
    (their own window), else the herd's looks, waiting for every ZooKeeper member's rebalance
    to end where the set's ``meta.json`` records that rule."""
    if run_set.by_compare:
        return None
    folder = repo / run_set.folder / f"{key.protocol}-n{key.members}"
    waits = (recorded_settle(folder) == SETTLE_REBALANCES_ENDED
             and waits_for_rebalances(key.protocol))
    return dataclasses.replace(HERD_OBSERVATION, rebalances_ended=waits)


def draw(run_set: RunSet, key: CellKey, plan: DistPlan, cal: Calibration,
         tasks: int, heartbeat_ms: int | None = None,
         on_producer: tuple[float, ...] = (),
         straggler_share: float | None = None,
         straggler_ranks: tuple[int, ...] = (),
         observation: Observation | None = HERD_OBSERVATION) -> tuple[str, tuple[Run, ...]]:
    """The model's draws of one cell (seeds 0 .. sim_draws - 1); ``heartbeat_ms``: the KIP-848
    heartbeat interval the real runs' broker gave (:func:`set_heartbeat_ms`);
    ``on_producer``: the cell's measured event times on the producer's clock
    (:func:`plan_producer_events`); ``straggler_share``: the set's own share of formations
    with stragglers, where the plan takes it as given (SimConfig.formation_straggler_share);
    ``straggler_ranks``: how often each creation rank straggled in earlier runs, where the plan
    weights the draw of stragglers by it (SimConfig.formation_straggler_ranks);
    ``observation``: the real runs' observer (:func:`set_observation`)."""
    protocol = model_protocol(run_set, key.protocol)
    out = []
    for seed in range(plan.sim_draws):
        if run_set.by_compare:
            cfg = compare_sim_config(protocol, key, plan.session_timeout_ms, seed, cal,
                                     run_set.consumer_heartbeat_interval_ms)
        else:
            cfg = lab_sim_config(protocol, key.members, key.partitions, key.event, seed, cal,
                                 plan.session_timeout_ms, tasks, Timing(), heartbeat_ms,
                                 on_producer)
        if straggler_share is not None:
            cfg = dataclasses.replace(cfg, formation_straggler_share=straggler_share)
        if straggler_ranks:
            cfg = dataclasses.replace(cfg, formation_straggler_ranks=tuple(
                float(k) for k in straggler_ranks))
        r = simulate(cfg, None if run_set.by_compare else observation)
        out.append(Run(float(r.coordination_requests), float(r.rebalance_attempts),
                       float(r.conflicts), r.time_to_stable_s, r.formation_stragglers > 0))
    return protocol, tuple(out)


def set_stragglers(repo: Path, run_set: RunSet) -> set[RunKey]:
    """The runs of a set whose formation left stragglers, from the formation rows it names
    (none where it names none)."""
    return set(SetRows.of(repo, run_set).late)


def real_runs(repo: Path, run_set: RunSet, key: CellKey,
              late: set[RunKey] | frozenset[RunKey]) -> tuple[tuple[Run, ...], int]:
    """(the cell's real runs, each marked when it is in ``late``
    (:func:`set_stragglers`), the Spark tasks that hosted them: 0 for compare runs)."""
    folder = repo / run_set.folder / f"{key.protocol}-n{key.members}"
    if run_set.by_compare:
        runs = [run for raw, run in compare_runs(folder)
                if raw.get("event") == key.event and raw.get("protocol") == key.protocol]
        return tuple(runs), 0
    rows = sweep_cell(folder, key, late)
    tasks = int(rows[0][0].get("tasks") or 2) if rows else 2
    return tuple(run for _, run in rows), tasks


def set_heartbeat_ms(repo: Path, run_set: RunSet, key: CellKey) -> int | None:
    """The KIP-848 groups' heartbeat interval a Spark herd run set's broker gave its members
    (its ``meta.json``, written by ``spark herd --mode real`` on Apache Kafka 4); ``None`` where
    the members set their own (classic groups, ZooKeeper)."""
    if run_set.by_compare:
        return None
    return recorded_heartbeat_ms(repo / run_set.folder / f"{key.protocol}-n{key.members}")


def plan_producer_events(plan: DistPlan, repo: Path
                         ) -> dict[tuple[str, int, str], tuple[float, ...]]:
    """(protocol, members, event) -> the event's measured times on the producer's clock, from
    the rows the plan names (none where it names none)."""
    if not plan.event_on_producer:
        return {}
    return producer_events(spread_rows(repo / plan.event_on_producer))


@dataclass(frozen=True)
class SetRows:
    """What a plan reads off one set's ``spark formation-spread`` rows: the runs whose
    formation left stragglers, and each folder's median formation read."""

    late: frozenset[RunKey]
    reads: dict[tuple[str, int], float]
    cell_reads: dict[tuple[str, int, str], float] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, repo: Path, run_set: RunSet) -> SetRows:
        return cls.from_rows([r for f in run_set.formation_spread
                              for r in spread_rows(repo / f)])

    @classmethod
    def from_rows(cls, rows: list[dict[str, str]]) -> SetRows:
        return cls(frozenset(straggler_runs(rows)), formation_reads(rows),
                   cell_formation_reads(rows))

    def read(self, key: CellKey, per: str) -> float | None:
        """The median formation read a cell is drawn at: its folder's, or its own."""
        if per == "cell":
            return self.cell_reads.get((key.protocol, key.members, key.event))
        return self.reads.get((key.protocol, key.members))


def folder_straggler_shares(real: dict[tuple[str, CellKey], tuple[Run, ...]]
                            ) -> dict[tuple[str, str, int], float]:
    """(set, protocol, N) -> the share of that folder's real runs (join and leave together)
    whose formation left stragglers."""
    pooled: dict[tuple[str, str, int], list[bool]] = {}
    for (name, key), runs in real.items():
        pooled.setdefault((name, key.protocol, key.members), []).extend(
            r.stragglers for r in runs)
    return {k: sum(v) / len(v) for k, v in pooled.items() if v}


def cell_inputs(plan: DistPlan, run_set: RunSet, key: CellKey, rows: SetRows,
                shares: dict[tuple[str, str, int], float]) -> dict[str, float]:
    """The set's own measurements a cell is drawn with, where the plan takes them: its speed
    (``formation_read_s`` and ``speed_factor``) and its share of formations with stragglers
    (``straggler_share``)."""
    out: dict[str, float] = {}
    if plan.set_speed is not None:
        reference = plan.set_speed.reference(key.protocol, key.members)
        read = rows.read(key, plan.set_speed.per)
        if reference is not None:
            if read is None:
                files = ", ".join(run_set.formation_spread) or "no formation-spread file"
                raise ValueError(f"set {run_set.name}: no formation_read rows for "
                                 f"{key.protocol} N = {key.members} in {files} (the plan "
                                 "draws it at its speed)")
            out["formation_read_s"] = read
            out["speed_factor"] = speed_factor(read, reference)
    if plan.tolerances.stragglers_given and run_set.formation_spread:
        share = shares.get((run_set.name, key.protocol, key.members))
        if share is not None:
            out["straggler_share"] = share
    return out


def score_plan(plan: DistPlan, repo: Path, cal: Calibration) -> list[CellScore]:
    rows = {s.name: SetRows.of(repo, s) for s in plan.sets}  # each set's rows read once
    on_producer = plan_producer_events(plan, repo)
    real = {(s.name, key): real_runs(repo, s, key, rows[s.name].late)
            for s, key in plan.cells()}
    shares = folder_straggler_shares({k: runs for k, (runs, _) in real.items()})
    rank_rows = [r for f in plan.straggler_ranks for r in spread_rows(repo / f)]
    ranks = {tasks: straggler_ranks(rank_rows, tasks, LAB_LAST_STARTED)
             for _, tasks in real.values() if rank_rows and tasks}  # per placement, once
    scores = []
    for run_set, key in plan.cells():
        runs, tasks = real[(run_set.name, key)]
        inputs = cell_inputs(plan, run_set, key, rows[run_set.name], shares)
        model, sim = draw(run_set, key, plan, cal.slowed(inputs.get("speed_factor", 1.0)),
                          tasks, set_heartbeat_ms(repo, run_set, key),
                          on_producer.get((key.protocol, key.members, key.event), ()),
                          inputs.get("straggler_share"), ranks.get(tasks, ()),
                          set_observation(repo, run_set, key))
        scores.append(CellScore(key, model, runs, sim, plan.tolerances, plan.real_seeds,
                                tuple(sorted(inputs.items()))))
    return scores


def plan_calibration(plan: DistPlan, repo: Path) -> Calibration:
    return Calibration.load(repo / plan.calibration) if plan.calibration else Calibration()


def tolerance_values(tol: DistTolerances) -> dict[str, Any]:
    """The tolerances as the scoring records them; the optional checks (the requests'
    interquartile range, a split) only where a plan asks for them (the scorings of the plans
    before them stay as they were)."""
    values = dataclasses.asdict(tol)
    for optional in ("requests_iqr", "split_by_movement", "split_by_stragglers",
                     "stragglers_given"):
        if not values[optional]:
            del values[optional]
    return values


def scoring_json(scores: Sequence[CellScore], plan: DistPlan, cal: Calibration,
                 provenance: dict[str, Any]) -> str:
    out = {
        "provenance": provenance, "calibration_source": cal.source,
        "sim_draws": plan.sim_draws, "real_seeds": plan.real_seeds,
        "tolerances": plan.tolerances.describe(),
        "tolerance_values": tolerance_values(plan.tolerances), "summary": pass_line(scores),
        "cells": [s.to_json() for s in scores]}
    if plan.straggler_ranks:  # the rows whose stragglers weighted the draw, by creation rank
        out["straggler_ranks"] = list(plan.straggler_ranks)
    return json.dumps(out, indent=1) + "\n"
