"""What one Spark task of ``spark split-brain --mode real`` does: host members, apply the plan.

Every task starts its share of the members (threads), each behind its own fault proxy on its
coordination side (ZooKeeper for ``zk-*``, the broker for broker groups; a ZooKeeper member's
fetchers reach the broker directly), checks in at the run directory's barrier and publishes what
its members fetch (:mod:`zkconsumer.spark.task_control`). Task 0 waits for the whole group to be
stable and announces the event instant a second ahead; then every task applies *its own
members'* actions of the scenario plan (:mod:`zkconsumer.scenarios.splitbrain`) at their offsets
from that instant: cut, heal, delay, join, leave. Task 0 ends the observation when the group is
stable again or nothing has changed anywhere for ``idle_s`` (a group that gave up changes
nothing), reads the verify tool's verdict (ZooKeeper groups), and if the group is not stable
applies a *repair* event (one more join, at most three times) so that every record can still be
delivered; then, as in the herd job, the driver stops producing and the tasks drain and stop.
Tasks return their members' raw records. The frame around the scenario (scratch folder, status
publisher, barrier, stop order, record lines) is :mod:`zkconsumer.spark.task_host`'s, the same
as the herd job's.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from zkconsumer.lab.records import Coord, RunRecords
from zkconsumer.lab.splitbrain.proxies import MemberProxies, ProxiedGroup
from zkconsumer.scenarios.splitbrain import (
    Action,
    Formation,
    Kind,
    Plan,
    member_name,
    task_of,
)
from zkconsumer.scenarios.timing import Timing
from zkconsumer.spark.splitbrain.outcome import FORMATION_TIMED_OUT
from zkconsumer.spark.task_control import (
    FORMED,
    STATUS_INTERVAL_S,
    RunDirectory,
    drain_target,
    drained,
    formation_state,
    group_idle,
    group_stable,
    wait_for,
)
from zkconsumer.spark.task_host import GroupStatusPublisher, await_stop, host_task, join_barrier

log = logging.getLogger(__name__)

RECORD_DDL = "run_id string, task int, raw string"
LEAD_S = 1.0                 # the event instant is announced this far ahead
FORMATION_RESTARTS = 4       # restarts of a newcomer that did not form a stable group
REPAIRS = 3
# Requests only a rebalance makes (reads of the group, claims and releases; broker rounds):
# commits (setData, or exists + multi in leader mode) and heartbeats go on in a steady group.
REBALANCE_COUNTERS = frozenset({"getData", "getChildren", "create", "delete", "JoinGroup",
                                "SyncGroup", "LeaveGroup", "OffsetFetch"})


@dataclass(frozen=True)
class SplitCell:
    """One real run: ``plan`` over ``tasks`` Spark tasks."""

    run_id: str
    protocol: str
    family: str
    partitions: int
    tasks: int
    topic: str
    group: str
    zk_connect: str
    bootstrap: str
    timing: Timing
    plan: Plan
    idle_s: float
    formation: Formation = Formation.TOGETHER
    kafka_home: str = ""  # the 0.10.2 build an original protocol's JVM members run from

    def repair_member(self, k: int) -> str:
        return member_name(99_999 - k)


class _Publisher(GroupStatusPublisher):
    """``last_change`` is the last instant any of the task's members recorded a timeline or
    coordination change or a rebalance request (a storm's retries show in the requests)."""

    def __init__(self, task: int, group: ProxiedGroup, run: RunDirectory,
                 partitions: int) -> None:
        super().__init__(task, group, run, partitions, name=f"split-status-t{task}")
        self._totals: dict[tuple[str, int], int] = {}
        self._activity = 0.0

    def last_change(self, records: RunRecords) -> float:
        for s in records.requests[-500:]:
            total = sum(v for k, v in s.counts.items() if k in REBALANCE_COUNTERS)
            key = (s.member, s.incarnation)
            if self._totals.get(key) != total:
                self._totals[key] = total
                self._activity = max(self._activity, s.ts)
        return max([self._activity, *(e.ts for e in records.timeline[-200:]),
                    *(c.ts for c in records.coord[-200:] if c.what != "commit_ok")])


def run_task(task: int, cell: SplitCell) -> Iterator[tuple[Any, ...]]:
    """The body of task ``task``: yields ``(run_id, task, raw record line)``."""
    proxies = MemberProxies(cell.family, cell.zk_connect, cell.bootstrap)

    def members(records_dir: Path) -> ProxiedGroup:
        return ProxiedGroup(proxies, protocol=cell.protocol, topic=cell.topic, group=cell.group,
                            partitions=cell.partitions, zk_connect=cell.zk_connect,
                            bootstrap=cell.bootstrap, timing=cell.timing,
                            records_dir=records_dir, processes=False,
                            kafka_home=cell.kafka_home)

    def publisher(group: ProxiedGroup, run: RunDirectory) -> _Publisher:
        return _Publisher(task, group, run, cell.partitions)

    def host(group: ProxiedGroup, run: RunDirectory, status: _Publisher) -> None:
        _host(task, cell, group, proxies, run, status)

    def stop(group: ProxiedGroup) -> None:
        _heal_all(proxies)
        group.stop_all()
        proxies.stop_all()

    for line in host_task(task, cell.run_id, cell.zk_connect, f"zkc-split-{cell.run_id}-t{task}-",
                          members, publisher, host, stop):
        yield (cell.run_id, task, line)


def _heal_all(proxies: MemberProxies) -> None:
    """The fault is over for everybody: no cut, no added latency."""
    for proxy in proxies.by_member.values():
        proxy.heal()
        proxy.set_latency(0.0, 0.0)


def _host(task: int, cell: SplitCell, group: ProxiedGroup, proxies: MemberProxies,
          run: RunDirectory, publisher: _Publisher) -> None:
    t = cell.timing
    if cell.formation is Formation.ONE_AT_A_TIME:
        publisher.start()
        _form_one_at_a_time(task, cell, group, run, publisher)
    else:
        for m in cell.plan.initial:
            if task_of(m, cell.tasks) == task:
                group.spawn(m)
        publisher.start()
    join_barrier(run, task, cell.tasks, t.formation_deadline_s)
    coordinator = None
    if task == 0:
        coordinator = threading.Thread(target=_coordinate, args=(cell, group, run, publisher),
                                       name="split-coordinator", daemon=True)
        coordinator.start()
    total = t.formation_deadline_s + 2 * t.event_deadline_s + t.drain_deadline_s + 180.0
    event = wait_for(lambda: run.get("event"), t.formation_deadline_s + 30.0)
    if event and event.get("ts") is not None:
        _apply(cell.plan.for_task(task, cell.tasks), float(event["ts"]), group, proxies,
               publisher)
        if wait_for(lambda: run.get("end"), total):
            _heal_all(proxies)
    await_stop(run, task, total)
    if coordinator is not None:
        coordinator.join(10)


def _form_one_at_a_time(task: int, cell: SplitCell, group: ProxiedGroup, run: RunDirectory,
                        publisher: _Publisher) -> None:
    """Form the initial group one member at a time across all tasks, restarting a newcomer
    whose arrival did not end in a stable group.

    With a retry budget this small a rebalance often meets an owner znode its previous owner
    has not released yet and gives up: a newcomer then fails in ``create_message_streams`` and
    an older member owns nothing until the next change. A supervisor would restart the failed
    process; so does this: the newcomer leaves and registers again, every member rebalances
    once more, until the group is stable or ``FORMATION_RESTARTS`` are spent. The budget is
    for the event, not for the formation, so the event starts from a formed group. Broker
    members have no such budget (they rejoin until their session or the rebalance timeout
    ends), so their group forms all at once whatever ``rebalance.max.retries`` says."""
    t = cell.timing
    initial = list(cell.plan.initial)
    wait_s = t.quiet_s + 3 * t.session_timeout_ms / 1000 + 3 * t.rebalance_backoff_ms / 1000
    for m in initial:
        key = f"formed-{m}"
        if task_of(m, cell.tasks) != task:
            if wait_for(lambda key=key: run.get(key), t.formation_deadline_s) is None:
                raise RuntimeError(f"task {task}: {m} was not formed by its task within "
                                   f"{t.formation_deadline_s:.0f} s")
            continue
        formed = False
        for restart in range(FORMATION_RESTARTS + 1):
            since = time.time()
            with publisher.lock:
                if restart:
                    group.stop(m)
                group.spawn(m)
            formed = wait_for(lambda m=m, since=since: _formed(cell, group, run, m, since),
                              wait_s) is not None
            if formed:
                break
            log.info("task %d: %s did not form a stable group within %.0f s; restarting it",
                     task, m, wait_s)
        run.put(key, {"formed": formed})


def _formed(cell: SplitCell, group: ProxiedGroup, run: RunDirectory, member: str,
            since: float) -> bool:
    """The newest incarnation of ``member`` is alive and rebalanced after ``since``, and the
    whole group (every task's report) is stable."""
    handle = group.handles.get(member)
    if handle is None or not handle.alive():
        return False
    group.tail.poll()
    if not any(c.member == member and c.ts >= since and c.what == Coord.REBALANCE_SUCCEEDED.value
               for c in group.records.coord):
        return False
    return run.stable_now(cell.tasks, cell.partitions, cell.timing.quiet_s, since) is not None


def _apply(actions: list[Action], event_ts: float, group: ProxiedGroup,
           proxies: MemberProxies, publisher: _Publisher) -> None:
    for a in sorted(actions, key=lambda a: a.at_s):
        delay = event_ts + a.at_s - time.time()
        if delay > 0:
            time.sleep(delay)
        if a.kind is Kind.CUT:
            proxies.get(a.member).pause()
        elif a.kind is Kind.HEAL:
            proxies.get(a.member).resume()
        elif a.kind is Kind.DELAY:
            proxies.get(a.member).set_latency(downstream_ms=a.value)
        elif a.kind is Kind.JOIN:
            with publisher.lock:
                group.spawn(a.member)
        elif a.kind is Kind.LEAVE:
            with publisher.lock:
                handle = group.handles.pop(a.member)
            threading.Thread(target=handle.stop, name=f"leave-{a.member}", daemon=True).start()
        log.debug("%s %s at +%.3f s", a.kind.value, a.member, time.time() - event_ts)


def _coordinate(cell: SplitCell, group: ProxiedGroup, run: RunDirectory,
                publisher: _Publisher) -> None:
    """Task 0: stable -> event -> stable or idle -> verify -> repair if needed -> drained."""
    t = cell.timing

    def stable(since: float) -> float | None:
        return run.stable_now(cell.tasks, cell.partitions, t.quiet_s, since)

    def stable_or_idle(since: float) -> tuple[float, bool] | None:
        statuses = run.statuses()
        now = time.time()
        if group_stable(statuses, cell.tasks, cell.partitions, now, t.quiet_s, since):
            return now, True
        if group_idle(statuses, cell.tasks, now, cell.idle_s, since):
            return now, False
        return None

    began = time.time()
    formed = wait_for(lambda: formation_state(run.statuses(), cell.tasks,
                                              len(cell.plan.initial), began,
                                              stable(began) is not None,
                                              t.rebalance_max_retries),
                      t.formation_deadline_s)
    if formed is None or formed != FORMED:
        error = formed or f"{FORMATION_TIMED_OUT} {t.formation_deadline_s:.0f} s"
        run.put("event", {"ts": None})
        run.put("done", {"error": error})
        run.put("stop", {"drained": False})
        return
    event_ts = time.time() + LEAD_S
    run.put("event", {"ts": event_ts})
    observe_from = event_ts + cell.plan.last_action_s + STATUS_INTERVAL_S
    time.sleep(max(0.0, observe_from - time.time()))
    ended = wait_for(lambda: stable_or_idle(observe_from), t.event_deadline_s)
    end_ts, was_stable = ended if ended else (time.time(), False)
    run.put("end", {"ts": end_ts})
    verify_ok, violations = _verify(cell)
    repair_ts, settled_ts = None, end_ts if was_stable else None
    for k in range(REPAIRS if not was_stable else 0):
        time.sleep(STATUS_INTERVAL_S * 2)  # the tasks heal their proxies first
        at = time.time()
        repair_ts = repair_ts or at
        with publisher.lock:
            group.spawn(cell.repair_member(k))
        settled_ts = wait_for(lambda at=at: stable(at + STATUS_INTERVAL_S),
                              t.event_deadline_s)
        if settled_ts is not None:
            break
    run.put("done", {"event_ts": event_ts, "end_ts": end_ts, "stable_at_end": was_stable,
                     "repair_ts": repair_ts, "settled_ts": settled_ts, "verify_ok": verify_ok,
                     "violations": violations[:20]})
    last = drain_target(run)
    ok = last is not None and wait_for(lambda: drained(run.statuses(), last), t.drain_deadline_s)
    run.put("stop", {"drained": bool(ok), "drained_ts": time.time()})


def _verify(cell: SplitCell) -> tuple[bool | None, list[dict[str, object]]]:
    """The verify tool's verdict on the ZooKeeper group and its violations (None for broker
    groups)."""
    if cell.family != "zookeeper":
        return None, []
    from zkconsumer.admin.groups import verify_group

    try:
        verdict = verify_group(cell.zk_connect, cell.group)
    except Exception as exc:  # a verdict we could not read is not a pass
        log.warning("%s: verify failed: %s", cell.run_id, exc)
        return False, [{"error": repr(exc)}]
    return verdict.ok, [v.as_dict() for v in verdict.violations]


def scaled(timing: Timing, members: int) -> Timing:
    """Deadlines grow with the group: forming 200 members on two cores takes a while."""
    return replace(timing, formation_deadline_s=timing.formation_deadline_s + members * 2.0,
                   event_deadline_s=timing.event_deadline_s + members * 1.0)
