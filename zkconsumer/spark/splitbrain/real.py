"""``spark split-brain --mode real``, driver side: one Spark stage per run, metrics by Spark.

For each cell (protocol x scenario x N x P x seed), one after another: create the topic and the
run directory, start a steady producer and a committed-offsets watcher here on the driver (what
the broker acknowledged is the reference for ``lost``; the watcher catches a committed offset
going backwards), run one barrier stage of ``tasks`` tasks hosting the members
(:mod:`.task`), write their raw records to ``OUT/records/<run>`` (Parquet), then
compute the run's metrics on the executors (:func:`.metrics.run_metrics` over the
run's records, grouped by run). A cell the scenario has no meaning for is a row with
``applicable = false`` and the reason.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from zkconsumer.lab.drivers import get_driver
from zkconsumer.lab.metrics import Produced
from zkconsumer.lab.producer import SteadyProducer
from zkconsumer.lab.records import Lifecycle, RunRecords
from zkconsumer.lab.splitbrain.commits import CommitWatcher
from zkconsumer.scenarios.protocols import PROTOCOL_TABLE
from zkconsumer.scenarios.splitbrain import (
    Formation,
    Plan,
    ScenarioParams,
    formation_for,
    max_retries_for,
    not_applicable,
    plan,
)
from zkconsumer.scenarios.timing import Timing
from zkconsumer.spark.placement import run_placement
from zkconsumer.spark.splitbrain.metrics import (
    Window,
    not_observed,
    process_start_skew_ms,
    run_metrics,
)
from zkconsumer.spark.splitbrain.outcome import is_formation_outcome
from zkconsumer.spark.splitbrain.task import RECORD_DDL, SplitCell, run_task, scaled
from zkconsumer.spark.task_control import RunDirectory, stop_producing
from zkconsumer.spark.task_host import run_stage

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SplitCellKey:
    protocol: str
    scenario: str
    members: int
    partitions: int
    seed: int


@dataclass(frozen=True)
class RealSettings:
    zk_connect: str
    bootstrap: str
    broker: str
    out_dir: str
    tasks: int
    timing: Timing
    params: ScenarioParams
    idle_s: float
    formation: Formation = Formation.AUTO
    kafka_home: str = ""  # the 0.10.2 build of the original protocols' JVM members
    # The ZooKeeper server and the broker run on this host (embedded), on the tasks' cores.
    servers_on_host: bool = True


class RunFailed(RuntimeError):
    """A run that ended before its event, with what was still measured (``columns``: sweep
    columns, e.g. the processes' start skew of a group that did not form)."""

    def __init__(self, message: str, columns: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.columns = dict(columns or {})


class GroupNotFormed(RunFailed):
    """A run whose group never reached the event: initial members gave up under the retry
    budget, or the group was never stable before the formation deadline. What the protocol did
    under the run's settings: an outcome of the sweep, not a failure of the job."""


def base_row(key: SplitCellKey, mode: str, params: ScenarioParams, timing: Timing,
             retries: int) -> dict[str, Any]:
    return {"mode": mode, "protocol": key.protocol, "scenario": key.scenario,
            "members": key.members, "partitions": key.partitions, "seed": key.seed,
            "session_timeout_ms": timing.session_timeout_ms,
            "rebalance_backoff_ms": timing.rebalance_backoff_ms,
            "rebalance_max_retries": max_retries_for(key.scenario, params, retries),
            "zombie_fraction": params.zombie_fraction if key.scenario == "zombie" else None,
            "cut_s": (params.cut_factor * timing.session_timeout_ms / 1000.0
                      if key.scenario == "zombie" else None),
            "delay_ms_max": params.delay_ms_max if key.scenario == "stale-view" else None,
            "storm_changes": (params.storm_joins + params.storm_leaves
                              if key.scenario == "storm" else None)}


def run_timing(base: Timing, key: SplitCellKey, params: ScenarioParams) -> Timing:
    """The timing every member of a run gets, the original's JVMs included (their
    ``ConsumerConfig``): deadlines scaled to the group, and the storm's retry budget as
    ``rebalance.max.retries``."""
    return replace(scaled(base, key.members),
                   rebalance_max_retries=max_retries_for(key.scenario, params,
                                                         base.rebalance_max_retries))


def run_real_cell(spark: Any, key: SplitCellKey, s: RealSettings) -> dict[str, Any]:
    """One real run, or its not-applicable row."""
    row = base_row(key, "real", s.params, s.timing, s.timing.rebalance_max_retries)
    row.update(broker=s.broker, tasks=min(s.tasks, key.members))
    reason = not_applicable(key.protocol, key.scenario)
    if reason:
        return {**row, "applicable": False, "reason": reason}
    from zkconsumer.admin import create_topic
    from zkconsumer.admin.cluster import zk_session

    driver = get_driver(key.protocol)
    timing = run_timing(s.timing, key, s.params)
    pl = plan(key.scenario, key.protocol, key.members, s.params, key.seed,
              timing.session_timeout_ms)
    run_id = (f"{key.protocol}-{key.scenario}-n{key.members}-p{key.partitions}-s{key.seed}-"
              f"{uuid.uuid4().hex[:6]}")
    tasks = min(s.tasks, key.members)
    cell = SplitCell(run_id=run_id, protocol=key.protocol, family=driver.family,
                     partitions=key.partitions, tasks=tasks, topic=f"sbs-{run_id}",
                     group=f"sbs-{run_id}", zk_connect=s.zk_connect, bootstrap=s.bootstrap,
                     timing=timing, plan=pl, idle_s=s.idle_s,
                     formation=formation_for(s.formation, key.protocol,
                                             timing.rebalance_max_retries),
                     kafka_home=s.kafka_home if PROTOCOL_TABLE[key.protocol].original else "")
    create_topic(s.zk_connect, cell.topic, key.partitions, bootstrap=s.bootstrap)
    producer = SteadyProducer(s.bootstrap, cell.topic, key.partitions, timing.produce_rate)
    watcher = CommitWatcher.for_family(driver.family, zk_connect=s.zk_connect,
                                       bootstrap=s.bootstrap, group=cell.group,
                                       topic=cell.topic, partitions=key.partitions)
    records_path = f"{s.out_dir}/records/{run_id}"
    started = time.time()
    with zk_session(s.zk_connect) as client:
        run = RunDirectory(client, run_id)
        run.create()
        producer.start()
        watcher.start()
        # the producer stops once task 0 reports the observation (and any repair) over
        stage_over = threading.Event()
        stopper = threading.Thread(target=stop_producing, args=(run, producer, stage_over),
                                   name=f"split-producer-{run_id}", daemon=True)
        stopper.start()
        try:
            run_stage(spark, tasks, run_task, cell, RECORD_DDL, records_path)
        finally:
            stage_over.set()
            producer.stop()
            stopper.join(10)
            regressions = watcher.stop()
        done = run.get("done") or {}
        stop = run.get("stop") or {}
        run.delete()
    log.info("%s: stage done in %.1f s (%s)", run_id, time.time() - started, done)
    produced = [(p.partition, p.offset, p.seq) for p in producer.produced]
    if done.get("event_ts") is None:
        records = records_of(spark.read.parquet(records_path).rdd.map(lambda r: r.raw)
                             .collect())
        error = str(done.get("error", "no event was applied"))
        kind = GroupNotFormed if is_formation_outcome(error) else RunFailed
        raise kind(f"{run_id}: {error}",
                   {"tasks": tasks, "process_start_skew_ms":
                    process_start_skew_ms(records, pl.initial, tasks)})
    window = Window(done["event_ts"], done["end_ts"], done.get("repair_ts"),
                    stop.get("drained_ts"))
    ctx = {"plan": pl, "window": window, "partitions": key.partitions, "produced": produced,
           "regressions": len(regressions), "verify_ok": done.get("verify_ok"), "tasks": tasks,
           "committed": watcher.final}
    metrics = (spark.read.parquet(records_path).rdd.map(lambda r: (r.run_id, r.raw))
               .groupByKey().map(lambda kv: metrics_of(kv[1], ctx)).collect())
    try:
        Path(s.out_dir, "windows").mkdir(parents=True, exist_ok=True)
        Path(s.out_dir, "windows", f"{run_id}.json").write_text(json.dumps(
            {"run_id": run_id, "done": done, "stop": stop, "zombies": list(pl.zombies),
             "actions": [[a.at_s, a.member, a.kind.value, a.value] for a in pl.actions],
             "placement": run_placement(key.members + len(pl.joiners), tasks,
                                        s.servers_on_host,
                                        proxies="each member's fault proxy in its process")},
            indent=1))
    except OSError as exc:
        log.warning("%s: window not kept beside the records: %s", run_id, exc)
    measured = not_observed(key.protocol, metrics[0])
    return {**row, "applicable": True, "reason": None, "tasks": tasks, **measured,
            "settled": done.get("settled_ts") is not None,
            "stable_at_end": bool(done.get("stable_at_end")),
            "repaired": done.get("repair_ts") is not None,
            "drained": bool(stop.get("drained"))}


def records_of(raws: Any) -> RunRecords:
    """A run's records, sorted, from its raw record lines."""
    records = RunRecords()
    for raw in raws:
        records.add(json.loads(raw))
    records.sort()
    return records


def metrics_of(raws: Any, ctx: dict[str, Any]) -> dict[str, Any]:
    """One run's metrics from its raw record lines (runs on an executor)."""
    records = records_of(raws)
    pl: Plan = ctx["plan"]
    window: Window = ctx["window"]
    gone = {lc.member for lc in records.lifecycle
            if lc.what in (Lifecycle.STOPPED, Lifecycle.ERROR) and lc.ts <= window.end_ts}
    final = [m for m in pl.final_members() if m not in gone]
    required = tuple(final) if ctx["partitions"] >= len(final) else ()
    produced = [Produced(p, o, q) for p, o, q in ctx["produced"]]
    out = run_metrics(records, pl, window, ctx["partitions"], produced, required,
                      offsets_went_back=ctx["regressions"], verify_ok=ctx["verify_ok"],
                      committed=ctx.get("committed"))
    return {**out, "process_start_skew_ms": process_start_skew_ms(records, pl.initial,
                                                                  ctx["tasks"])}
