"""The run directory in ZooKeeper through which the driver and the tasks of a real run agree.

::

    <root>/ready/t<k>     a task has started its connectors (the barrier: all tasks present)
    <root>/status/t<k>    JSON, rewritten every STATUS_INTERVAL_S: what the task's members fetch
    <root>/event          JSON {"ts"}: task 0 applied the membership event at ts
    <root>/done           JSON {"event_ts", "settled_ts"}: task 0 saw the group settle (or gave up)
    <root>/produced       JSON {"last": {partition: offset}}: the driver stopped producing
    <root>/stop           JSON {"drained"}: every acknowledged record was delivered (or timeout)

Pure helpers decide from the published statuses whether the whole group, spread over every
task, is stable; nothing here needs Spark.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from zkconsumer.results.exclusions import NOT_FORMED
from zkconsumer.scenarios.protocols import PROTOCOL_TABLE, ZOOKEEPER
from zkconsumer.zk import paths

if TYPE_CHECKING:
    from zkconsumer.lab.producer import SteadyProducer

log = logging.getLogger(__name__)

STATUS_INTERVAL_S = 0.5
LOOK_INTERVAL_S = 0.25  # how often a coordinating task looks at the statuses (wait_for)
# How long the coordinating task waits for the driver's ``produced``: stopping the producer
# flushes for up to 30 s and joins its thread for up to 40 s, more on a loaded machine.
PRODUCED_WAIT_S = 120.0


def run_root(run_id: str) -> str:
    return paths.spark_run(run_id)


@dataclass(frozen=True)
class TaskStatus:
    """One task's view of its own members, published to ``<root>/status/t<k>``."""

    task: int
    at: float                      # when it was computed
    fetchers: list[int]            # per partition: how many of its members fetch it
    live: int                      # its members not stopped or killed
    idle: int                      # of those, how many fetch nothing
    last_change: float             # latest timeline record of its members
    delivered_max: dict[str, int] = field(default_factory=dict)  # partition -> highest offset
    rebalancing: int = 0           # live members inside a rebalance (started, not yet ended)

    def to_bytes(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":")).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> TaskStatus:
        return cls(**json.loads(data.decode()))


# The rule a herd run's event window ends by, as its sweep's ``meta.json`` records it (``settle``):
# group_stable with rebalances_ended. Sweeps made before the rule existed record none: their
# windows could close while ZooKeeper members were still inside a rebalance.
SETTLE_REBALANCES_ENDED = "zookeeper-rebalances-ended"


def waits_for_rebalances(protocol: str) -> bool:
    """Whether a herd run's event window of ``protocol`` ends by :data:`SETTLE_REBALANCES_ENDED`
    (a ZooKeeper group's: :func:`group_stable` says why the others do not)."""
    return PROTOCOL_TABLE[protocol].family == ZOOKEEPER


def group_stable(statuses: Sequence[TaskStatus], tasks: int, partitions: int, now: float,
                 quiet_s: float, fresh_after: float, rebalances_ended: bool = False) -> bool:
    """Every task reported after ``fresh_after``; every partition fetched by exactly one member
    of the whole group; every live member fetching (unless there are fewer partitions than
    members); no timeline change anywhere for ``quiet_s``; and, with ``rebalances_ended``, no
    live member inside a rebalance.

    Ownership alone cannot tell a settled ZooKeeper group from one whose rebalance has begun
    and not yet stopped a fetcher: at 96 members the members read the registry for over a
    second before the first stop, and the group looked settled meanwhile. A ZooKeeper member's
    rebalance opens and closes with its own records (started; succeeded or failed), so the
    herd's event window waits for them. A broker-side member's revoke and assign callbacks
    are no such pair (a cooperative member need not be called again after its revoke), and a
    split-brain run's zombie may stay inside a rebalance for good: they keep the plain rule."""
    if len(statuses) < tasks or any(s.at < fresh_after for s in statuses):
        return False
    if rebalances_ended and any(s.rebalancing for s in statuses):
        return False
    for p in range(partitions):
        if sum(s.fetchers[p] for s in statuses) != 1:
            return False
    live = sum(s.live for s in statuses)
    if partitions >= live and sum(s.idle for s in statuses) > 0:
        return False
    last = max(s.last_change for s in statuses)
    return now - last >= quiet_s


FORMED = "formed"


def formation_state(statuses: Sequence[TaskStatus], tasks: int, expected: int, since: float,
                    stable: bool, max_retries: int) -> str | None:
    """``FORMED`` when the group is stable with all ``expected`` initial members alive; the
    reason when some of them are gone (a member whose first rebalance gave up exits, and a run
    with fewer members than its N would be mislabelled); None while forming. Statuses must be
    fresh (after ``since``): each counts its task's members alive when it was computed."""
    if len(statuses) >= tasks and all(s.at >= since for s in statuses):
        alive = sum(s.live for s in statuses)
        if alive < expected:
            return (f"{NOT_FORMED} {expected - alive} of {expected} initial members "
                    f"exited before it was stable (rebalance.max.retries = {max_retries})")
    return FORMED if stable else None


def group_idle(statuses: Sequence[TaskStatus], tasks: int, now: float, idle_s: float,
               fresh_after: float) -> bool:
    """Every task reported after ``fresh_after``, no live member is inside a rebalance, and
    nothing changed anywhere for ``idle_s``, counted from ``fresh_after`` at the earliest.

    Silence before the observation began (a joiner still connecting through its delay has
    recorded nothing yet) is not idleness the observation has seen. A member inside a
    rebalance is still trying, however long it has been silent (a rebalance whose session
    reconnects through a slow proxy records nothing for seconds): an idle group is one that
    has stopped trying, and a group still rebalancing is ended by the event's deadline."""
    if len(statuses) < tasks or any(s.at < fresh_after for s in statuses):
        return False
    if any(s.rebalancing for s in statuses):
        return False
    return now - max(fresh_after, *(s.last_change for s in statuses)) >= idle_s


def drained(statuses: Sequence[TaskStatus], last_produced: Mapping[str, int]) -> bool:
    """Each partition's last acknowledged offset was delivered to some member of some task."""
    for p, last in last_produced.items():
        if max((s.delivered_max.get(p, -1) for s in statuses), default=-1) < last:
            return False
    return True


class RunDirectory:
    """The run directory through one kazoo client (driver or task)."""

    def __init__(self, client: Any, run_id: str) -> None:
        self.client = client
        self.root = run_root(run_id)

    def _node(self, *names: str) -> str:
        path = self.root
        for name in names:
            path = paths.child(path, name)
        return path

    def create(self) -> None:
        for sub in ("ready", "status"):
            self.client.ensure_path(paths.child(self.root, sub))

    def put(self, name: str, value: Mapping[str, Any]) -> None:
        path = paths.child(self.root, name)
        data = json.dumps(value).encode()
        if self.client.exists(path):
            self.client.set(path, data)
        else:
            self.client.create(path, data, makepath=True)

    def get(self, name: str) -> dict[str, Any] | None:
        path = paths.child(self.root, name)
        if not self.client.exists(path):
            return None
        data, _ = self.client.get(path)
        return json.loads(data.decode()) if data else {}

    def ready(self, task: int) -> None:
        self.client.create(self._node("ready", f"t{task}"), b"", makepath=True)

    def ready_count(self) -> int:
        return len(self.client.get_children(paths.child(self.root, "ready")))

    def publish(self, status: TaskStatus) -> None:
        path = self._node("status", f"t{status.task}")
        if self.client.exists(path):
            self.client.set(path, status.to_bytes())
        else:
            self.client.create(path, status.to_bytes(), makepath=True)

    def statuses(self) -> list[TaskStatus]:
        base = self._node("status")
        out = []
        for child in sorted(self.client.get_children(base)):
            data, _ = self.client.get(paths.child(base, child))
            out.append(TaskStatus.from_bytes(data))
        return out

    def stable_now(self, tasks: int, partitions: int, quiet_s: float,
                   since: float, rebalances_ended: bool = False) -> float | None:
        """The current instant if the whole group is stable (:func:`group_stable`, every task
        having reported after ``since``), else None: a :func:`wait_for` check."""
        now = time.time()
        return now if group_stable(self.statuses(), tasks, partitions, now, quiet_s,
                                   since, rebalances_ended) else None

    def delete(self) -> None:
        self.client.delete(self.root, recursive=True)


class StatusPublisher(threading.Thread):
    """Publishes its task's :class:`TaskStatus` every ``STATUS_INTERVAL_S`` until ``halt``.

    Subclasses say what a status is (:meth:`status`); ``lock`` is held while they read the
    members' records, and by whoever changes the members meanwhile.
    """

    def __init__(self, task: int, run: RunDirectory, name: str) -> None:
        super().__init__(name=name, daemon=True)
        self.task = task
        self.run_dir = run
        self.halt = threading.Event()
        self.lock = threading.Lock()

    def status(self) -> TaskStatus:
        raise NotImplementedError

    def run(self) -> None:
        while not self.halt.wait(STATUS_INTERVAL_S):
            try:
                self.run_dir.publish(self.status())
            except Exception as exc:  # keep publishing; the coordinating task has deadlines
                log.warning("task %d: status not published: %s", self.task, exc)


def stop_producing(run: RunDirectory, producer: SteadyProducer,
                   stage_over: threading.Event) -> None:
    """The driver's part, on a thread beside the stage: when the coordinating task reports
    ``done``, stop producing and publish the last acknowledged offsets (``produced``) for the
    tasks to drain to. It waits as long as the stage runs, on no clock of its own: on a
    cluster, or a loaded machine, the tasks start long after the driver, and a driver that
    gave up first would leave them draining to nothing while the producer goes on."""
    while not stage_over.is_set():
        if run.get("done"):
            producer.stop()
            run.put("produced", {"last": producer.last_offsets()})
            return
        stage_over.wait(0.5)


def drain_target(run: RunDirectory, wait_s: float = PRODUCED_WAIT_S) -> dict[str, int] | None:
    """The coordinating task's part: the driver's last acknowledged offsets, waited for up to
    ``wait_s``; None if they never came (then nothing says the run drained)."""
    produced = wait_for(lambda: run.get("produced"), wait_s)
    return None if produced is None else dict(produced.get("last", {}))


def wait_for(check: Callable[[], Any], deadline_s: float,
             poll_s: float = LOOK_INTERVAL_S) -> Any:
    """Poll ``check`` until it returns something truthy (returned) or the deadline (None)."""
    give_up = time.monotonic() + deadline_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= give_up:
            return None
        time.sleep(poll_s)
