"""The frame of a real run's Spark tasks, the same for every job: what is around the scenario.

The driver runs one stage of ``tasks`` tasks in barrier mode (:func:`run_stage`: all tasks are
scheduled together or none, since they wait for each other on the ZooKeeper barrier and a task
left waiting for a free slot would deadlock the run). Each task (:func:`host_task`) gets a
scratch folder for its members' record files, starts its members through the job's callbacks,
publishes what they fetch to the run directory (:class:`GroupStatusPublisher`), checks in at
the barrier (:func:`join_barrier`) and, once the job's part is over, waits for the stop order
(:func:`await_stop`); its members are stopped whatever happened, and the task returns their
complete record lines: the executors' files are never read by the driver (on a cluster it
could not). What happens between the barrier and the stop order is the job's: one event and
its settling (``spark herd``), a fault plan and its repair (``spark split-brain``).
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from zkconsumer.lab.group import LabGroup
from zkconsumer.lab.intervals import build_intervals, fetchers_at
from zkconsumer.lab.records import Coord, RunRecords, Timeline
from zkconsumer.spark.task_control import RunDirectory, StatusPublisher, TaskStatus, wait_for

log = logging.getLogger(__name__)

G = TypeVar("G", bound=LabGroup)
C = TypeVar("C")
Publisher = TypeVar("Publisher", bound="GroupStatusPublisher")


_REBALANCE_BOUNDS = {Coord.REBALANCE_STARTED.value: True, Coord.REBALANCE_SUCCEEDED.value: False,
                     Coord.REBALANCE_FAILED.value: False}


def rebalancing_members(records: RunRecords) -> set[str]:
    """Members whose latest incarnation started a rebalance it has not yet ended (succeeded,
    or given up after its retries)."""
    latest: dict[str, tuple[int, bool]] = {}
    for c in records.coord:
        inside = _REBALANCE_BOUNDS.get(c.what)
        if inside is None:
            continue
        seen = latest.get(c.member)
        if seen is None or c.incarnation >= seen[0]:
            latest[c.member] = (c.incarnation, inside)
    return {m for m, (_, inside) in latest.items() if inside}


class GroupStatusPublisher(StatusPublisher):
    """Publishes what the task's members fetch, read from their record files.

    ``last_change`` is the latest timeline record of the task's members (:meth:`last_change`);
    a job that counts more as a change (a rebalance request, a coordination record) says so
    in a subclass.
    """

    def __init__(self, task: int, group: LabGroup, run: RunDirectory, partitions: int,
                 name: str) -> None:
        super().__init__(task, run, name=name)
        self.group = group
        self.partitions = partitions

    def last_change(self, records: RunRecords) -> float:
        """When the task's members last changed anything (0 before their first record)."""
        return max((e.ts for e in records.timeline), default=0.0)

    def status(self) -> TaskStatus:
        with self.lock:
            self.group.tail.poll()
            now = time.time()
            records = self.group.records
            # Open intervals are closed an hour ahead, so that they cover now.
            who = fetchers_at(build_intervals(records, now + 3600.0, Timeline.FETCHING),
                              self.partitions, now)
            live = [m for m in self.group.members if self.group.handles[m].alive()]
            fetching = set().union(*who) if who else set()
            top = records.highest_delivered()
            last = self.last_change(records)
        return TaskStatus(task=self.task, at=now, fetchers=[len(s) for s in who], live=len(live),
                          idle=sum(1 for m in live if m not in fetching), last_change=last,
                          delivered_max=top,
                          rebalancing=len(rebalancing_members(records) & set(live)))


def host_task(task: int, run_id: str, zk_connect: str, prefix: str,
              members: Callable[[Path], G],
              publisher: Callable[[G, RunDirectory], Publisher],
              host: Callable[[G, RunDirectory, Publisher], None],
              stop: Callable[[G], None] = LabGroup.stop_all) -> Iterator[str]:
    """The body of task ``task`` of run ``run_id``: yields its members' complete record lines.

    ``members`` builds the task's group over a fresh scratch folder (named from ``prefix``),
    ``publisher`` its status publisher on the run directory, ``host`` does the job's part
    (starts the members, joins the barrier, ..., waits for the stop order); then the publisher
    halts and ``stop`` stops the members, whether ``host`` returned or raised. A line cut short
    by a SIGKILL (no newline) is left out.
    """
    from zkconsumer.admin.cluster import zk_session

    records_dir = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        group = members(records_dir)
        with zk_session(zk_connect) as client:
            run = RunDirectory(client, run_id)
            status = publisher(group, run)
            try:
                host(group, run, status)
            finally:
                status.halt.set()
                status.join(10)
                stop(group)
        yield from record_lines(records_dir)
    finally:
        shutil.rmtree(records_dir, ignore_errors=True)


def record_lines(records_dir: Path) -> Iterator[str]:
    """The complete, non-blank lines of every record file in ``records_dir``, stripped."""
    for path in sorted(records_dir.glob("*.jsonl")):
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.endswith("\n") and line.strip():
                    yield line.strip()


def join_barrier(run: RunDirectory, task: int, tasks: int, deadline_s: float) -> None:
    """Check in, then wait for all ``tasks`` tasks; a task still missing after ``deadline_s``
    means the cluster had too few executor slots for the stage."""
    run.ready(task)
    if not wait_for(lambda: run.ready_count() >= tasks, deadline_s):
        raise RuntimeError(f"task {task}: only {run.ready_count()} of {tasks} tasks reached "
                           f"the barrier within {deadline_s:.0f} s (too few "
                           "executor slots for --tasks?)")


def await_stop(run: RunDirectory, task: int, deadline_s: float) -> None:
    """Wait for the coordinating task's stop order; without one by ``deadline_s`` the task
    stops anyway (its members' records are still returned)."""
    if wait_for(lambda: run.get("stop"), deadline_s) is None:
        log.error("task %d: no stop order within the run's deadline; stopping", task)


def run_stage(spark: Any, tasks: int, body: Callable[[int, C], Iterator[tuple[Any, ...]]],
              cell: C, ddl: str, path: str) -> None:
    """One Spark stage of ``tasks`` tasks in barrier mode, task ``k`` running ``body(k, cell)``;
    the rows they return (schema ``ddl``) go straight to ``path`` as Parquet."""
    def partition(it: Any) -> Iterator[tuple[Any, ...]]:
        for task in it:
            yield from body(task, cell)

    rdd = spark.sparkContext.parallelize(range(tasks), tasks).barrier().mapPartitions(partition)
    spark.createDataFrame(rdd, ddl).write.mode("overwrite").parquet(path)
