"""What one Spark task of ``--mode real`` does: host its share of real connectors.

A task starts its members (threads; the crash victim in its own process so that its crash is a
SIGKILL), checks in at the ZooKeeper barrier, and publishes what its members fetch every half
second (:mod:`zkconsumer.spark.task_control`). Task 0 also runs the scenario: once the whole
group is stable it applies the event (it hosts the joiner and the victim), waits until the whole
group is stable again, and after the driver stopped producing, until everything was delivered;
then it tells every task to stop. Each task then returns its members' records as rows: the
executors' files are never read by the driver (on a cluster it could not). The frame around
the scenario (scratch folder, status publisher, barrier, stop order, record lines) is
:mod:`zkconsumer.spark.task_host`'s, the same as the split-brain job's.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zkconsumer.lab.group import LabGroup
from zkconsumer.scenarios.timing import Timing
from zkconsumer.spark.task_control import (
    FORMED,
    STATUS_INTERVAL_S,
    RunDirectory,
    drain_target,
    drained,
    formation_state,
    wait_for,
    waits_for_rebalances,
)
from zkconsumer.spark.task_host import GroupStatusPublisher, await_stop, host_task, join_barrier

log = logging.getLogger(__name__)

# (run_id, task, kind, ts, member, incarnation, what, partition, offset, seq, raw)
RECORD_DDL = ("run_id string, task int, kind string, ts double, member string, "
              "incarnation int, what string, partition int, offset long, seq long, raw string")


@dataclass(frozen=True)
class RealCell:
    """One real run: a group of ``members`` over ``tasks`` Spark tasks, one event."""

    run_id: str
    protocol: str
    members: int
    partitions: int
    event: str
    seed: int
    tasks: int
    topic: str
    group: str
    zk_connect: str
    bootstrap: str
    timing: Timing
    kafka_home: str = ""  # the 0.10.2 build an original protocol's members run from

    def member_names(self, task: int) -> list[str]:
        """Member i lives in task ``i % tasks``; task 0 also hosts the joiner of a join."""
        names = [name(i) for i in range(self.members) if i % self.tasks == task]
        if task == 0 and self.event == "join":
            names.append(name(self.members))
        return names

    @property
    def victim(self) -> str | None:
        """The member that leaves or crashes: m0000, in task 0."""
        return name(0) if self.event in ("leave", "crash") else None

    @property
    def joiner(self) -> str | None:
        return name(self.members) if self.event == "join" else None


def name(i: int) -> str:
    return f"m{i:05d}"


def run_task(task: int, cell: RealCell) -> Iterator[tuple[Any, ...]]:
    """The body of task ``task``: yields record rows (see :data:`RECORD_DDL`)."""
    def members(records_dir: Path) -> LabGroup:
        return LabGroup(protocol=cell.protocol, topic=cell.topic, group=cell.group,
                        partitions=cell.partitions, zk_connect=cell.zk_connect,
                        bootstrap=cell.bootstrap, timing=cell.timing, records_dir=records_dir,
                        processes=False, kafka_home=cell.kafka_home)

    def publisher(group: LabGroup, run: RunDirectory) -> GroupStatusPublisher:
        return GroupStatusPublisher(task, group, run, cell.partitions, name=f"spark-status-t{task}")

    def host(group: LabGroup, run: RunDirectory, status: GroupStatusPublisher) -> None:
        _host(task, cell, group, run, status)

    for line in host_task(task, cell.run_id, cell.zk_connect, f"zkc-spark-{cell.run_id}-t{task}-",
                          members, publisher, host):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        yield _row(task, cell.run_id, rec, line)


def _host(task: int, cell: RealCell, group: LabGroup, run: RunDirectory,
          publisher: GroupStatusPublisher) -> None:
    t = cell.timing
    for member in cell.member_names(task):
        if member != cell.joiner:
            group.spawn(member, own_process=member == cell.victim and cell.event == "crash")
    publisher.start()
    join_barrier(run, task, cell.tasks, t.formation_deadline_s)
    if task == 0:
        _coordinate(cell, group, run, publisher)
    await_stop(run, task, _total_deadline(t))


def _total_deadline(t: Timing) -> float:
    return t.formation_deadline_s + t.event_deadline_s + t.drain_deadline_s + 120.0


def _coordinate(cell: RealCell, group: LabGroup, run: RunDirectory,
                publisher: GroupStatusPublisher) -> None:
    """Task 0: stable group -> event -> stable again -> (driver stops producing) -> drained.

    After the event, a ZooKeeper group is stable again only once no member is inside a
    rebalance (``task_control.SETTLE_REBALANCES_ENDED``); the formation keeps the plain rule,
    so that what a run's formation measures does not move with it."""
    t = cell.timing
    rebalances_ended = waits_for_rebalances(cell.protocol)

    def stable(since: float, after_event: bool = False) -> float | None:
        return run.stable_now(cell.tasks, cell.partitions, t.quiet_s, since,
                              rebalances_ended=after_event and rebalances_ended)

    began = time.time()
    formed_at = 0.0

    def formed() -> str | None:
        nonlocal formed_at
        at = stable(began)
        state = formation_state(run.statuses(), cell.tasks, cell.members, began,
                                at is not None, t.rebalance_max_retries)
        formed_at = at or formed_at
        return state

    state = wait_for(formed, t.formation_deadline_s)
    if state != FORMED:
        run.put("done", {"event_ts": None, "settled_ts": None, "error": state or
                         f"the group did not form within {t.formation_deadline_s:.0f} s"})
        run.put("stop", {"drained": False})
        return
    with publisher.lock:
        event_ts = _apply(cell, group)
    run.put("event", {"ts": event_ts})
    settled = wait_for(lambda: stable(event_ts + STATUS_INTERVAL_S, after_event=True),
                       t.event_deadline_s)
    run.put("done", {"event_ts": event_ts, "settled_ts": settled,
                     "formed_s": round(formed_at - began, 3)})
    last = drain_target(run)
    ok = last is not None and wait_for(lambda: drained(run.statuses(), last), t.drain_deadline_s)
    run.put("stop", {"drained": bool(ok)})


def _apply(cell: RealCell, group: LabGroup) -> float:
    if cell.event == "join":
        started = time.time()
        group.spawn(cell.joiner or "")
        return started
    if cell.event == "leave":
        started = time.time()
        group.stop(cell.victim or "")
        return started
    if cell.event == "crash":
        return group.kill(cell.victim or "")
    raise ValueError(f"real mode runs join, leave and crash, not {cell.event!r}")


def _row(task: int, run_id: str, rec: dict[str, Any], raw: str) -> tuple[Any, ...]:
    kind = str(rec.get("k"))
    if kind == "d":
        v = rec.get("v")
        return (run_id, task, kind, float(rec["ts"]), str(rec["m"]), int(rec.get("i", 0)), None,
                int(rec["p"]), int(rec["o"]), None if v is None else int(v), None)
    what = rec.get("w")
    return (run_id, task, kind, float(rec["ts"]), str(rec["m"]), int(rec.get("i", 0)),
            None if what is None else str(what), None, None, None, raw)
