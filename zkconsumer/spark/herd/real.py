"""``--mode real``, driver side: real connectors hosted by Spark tasks, measured with Spark.

For each cell of the grid (protocol x N x P x event x seed), one after another:

1. create the topic and the run directory in ZooKeeper (:mod:`zkconsumer.spark.task_control`),
   start a steady producer here on the driver (what the broker acknowledged is the reference
   for ``lost``);
2. run one Spark stage of ``tasks`` tasks in barrier mode (all tasks are scheduled together or
   none: they wait for each other on the ZooKeeper barrier, so a task left waiting for a free
   slot would deadlock the run); each hosts its share of the members (:mod:`.task`);
3. when task 0 reports the group settled after the event, stop producing and publish the last
   acknowledged offsets, so the tasks can drain; the tasks return their records as rows, which
   go straight to ``OUT/records/<run>`` (Parquet) together with ``OUT/produced/<run>`` and
   the event window ``OUT/windows/<run>.json``: the
   stage runs exactly once (a cached DataFrame could be evicted and recomputed, which would
   rerun the consumers), and the raw observations stay beside the table for auditing;
4. at the end, :func:`.metrics.metrics_table` computes every run's metrics with Spark.

ZooKeeper and the broker must be reachable from the executors: on a cluster pass ``--zk`` and
``--bootstrap`` (or set ``ZKCONSUMER_ZK``/``ZKCONSUMER_BOOTSTRAP``); without them the driver
starts embedded servers on this machine, which only local executors can reach.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from zkconsumer.lab.drivers import get_driver
from zkconsumer.lab.producer import SteadyProducer
from zkconsumer.scenarios.timing import Timing
from zkconsumer.spark.herd.grid import Cell
from zkconsumer.spark.herd.metrics import PRODUCED_DDL, WINDOW_DDL, metrics_table
from zkconsumer.spark.herd.task import RECORD_DDL, RealCell, run_task
from zkconsumer.spark.placement import run_placement
from zkconsumer.spark.task_control import RunDirectory, stop_producing
from zkconsumer.spark.task_host import run_stage

log = logging.getLogger(__name__)

REAL_EVENTS = ("join", "leave", "crash")


@dataclass(frozen=True)
class RealSettings:
    zk_connect: str
    bootstrap: str
    out_dir: str = "."
    tasks: int = 2
    timing: Timing = Timing()
    kafka_home: str = ""  # the 0.10.2 build of the original protocols' members
    # The ZooKeeper server and the broker run on this host (embedded), on the tasks' cores.
    servers_on_host: bool = True

    def scaled_timing(self, members: int) -> Timing:
        """Deadlines grow with the group: forming 200 members on two cores takes a while."""
        t = self.timing
        return replace(t, formation_deadline_s=t.formation_deadline_s + members * 2.0,
                       event_deadline_s=t.event_deadline_s + members * 1.0)


def run_cell(spark: Any, cell: Cell, settings: RealSettings) -> tuple[Any, Any, dict[str, Any]]:
    """One real run: (records DataFrame, produced DataFrame, window row)."""
    from zkconsumer.admin import create_topic
    from zkconsumer.admin.cluster import zk_session

    if cell.event not in REAL_EVENTS:
        raise ValueError(f"real mode runs {', '.join(REAL_EVENTS)}, not {cell.event!r}")
    driver = get_driver(cell.protocol)  # refuses protocols no broker here implements
    run_id = f"{cell.protocol}-n{cell.members}-p{cell.partitions}-{cell.event}-s{cell.seed}-" \
             f"{uuid.uuid4().hex[:6]}"
    tasks = min(settings.tasks, cell.members)
    timing = settings.scaled_timing(cell.members)
    rc = RealCell(run_id=run_id, protocol=cell.protocol, members=cell.members,
                  partitions=cell.partitions, event=cell.event, seed=cell.seed, tasks=tasks,
                  topic=f"spark-{run_id}", group=f"spark-{run_id}",
                  zk_connect=settings.zk_connect, bootstrap=settings.bootstrap, timing=timing,
                  kafka_home=settings.kafka_home)
    create_topic(settings.zk_connect, rc.topic, cell.partitions, bootstrap=settings.bootstrap)
    producer = SteadyProducer(settings.bootstrap, rc.topic, cell.partitions, timing.produce_rate)
    with zk_session(settings.zk_connect) as client:
        run = RunDirectory(client, run_id)
        run.create()
        producer.start()
        # the producer stops once task 0 reports the event settled
        stage_over = threading.Event()
        stopper = threading.Thread(target=stop_producing, args=(run, producer, stage_over),
                                   name=f"spark-producer-{run_id}", daemon=True)
        stopper.start()
        started = time.time()
        records_path = f"{settings.out_dir}/records/{run_id}"
        try:
            run_stage(spark, tasks, run_task, rc, RECORD_DDL, records_path)
        finally:
            stage_over.set()
            producer.stop()
            stopper.join(10)
        done = run.get("done") or {}
        stop = run.get("stop") or {}
        run.delete()
    records = spark.read.parquet(records_path)
    count = records.count()
    acked = [(run_id, p.partition, p.offset, p.seq) for p in producer.produced]
    produced_path = f"{settings.out_dir}/produced/{run_id}"
    (spark.createDataFrame(spark.sparkContext.parallelize(acked, max(1, tasks)), PRODUCED_DDL)
     .write.mode("overwrite").parquet(produced_path))
    produced = spark.read.parquet(produced_path)
    event_ts, settled_ts = done.get("event_ts"), done.get("settled_ts")
    window = {"run_id": run_id, "protocol": cell.protocol, "members": cell.members,
              "partitions": cell.partitions, "event": cell.event, "seed": cell.seed,
              "family": driver.family, "event_ts": event_ts,
              "end_ts": settled_ts if settled_ts is not None else
              (event_ts + timing.event_deadline_s if event_ts is not None else None),
              "settled": settled_ts is not None, "tasks": tasks,
              "session_timeout_ms": timing.session_timeout_ms,
              "victim": rc.victim, "drained": stop.get("drained")}
    try:  # for auditing; an output on HDFS/S3 has no local path (the table has the figures)
        Path(settings.out_dir, "windows").mkdir(parents=True, exist_ok=True)
        Path(settings.out_dir, "windows", f"{run_id}.json").write_text(
            json.dumps({**window, "done": done, "stop": stop,
                        "placement": run_placement(
                            cell.members, tasks, settings.servers_on_host, joiner="task 0",
                            crash_victim="a process of its own")}, indent=1))
    except OSError as exc:
        log.warning("%s: event window not kept beside the records: %s", run_id, exc)
    log.info("%s: %d record rows from %d tasks in %.1f s (settled: %s, drained: %s%s)", run_id,
             count, tasks, time.time() - started, settled_ts is not None, stop.get("drained"),
             f", {done['error']}" if done.get("error") else "")
    return records, produced, window


def real_dataframe(spark: Any, grid: Sequence[Cell], settings: RealSettings,
                   on_cell: Callable[[Cell], None] | None = None) -> Any:
    """Run every cell, then the metrics of all of them as one table DataFrame.

    ``on_cell`` is called after each cell has run (the driver's progress bar).
    """
    records, produced, windows = [], [], []
    for cell in grid:
        r, p, w = run_cell(spark, cell, settings)
        records.append(r)
        produced.append(p)
        windows.append(w)
        if on_cell is not None:
            on_cell(cell)
    all_records = records[0]
    for r in records[1:]:
        all_records = all_records.unionByName(r)
    all_produced = produced[0]
    for p in produced[1:]:
        all_produced = all_produced.unionByName(p)
    window_df = spark.createDataFrame([tuple(w[k] for k in _WINDOW_COLS) for w in windows],
                                      WINDOW_DDL)
    return metrics_table(spark, all_records, all_produced, window_df)


_WINDOW_COLS = tuple(part.split()[0] for part in WINDOW_DDL.split(", "))
