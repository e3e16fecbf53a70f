"""The herd scenario: what one membership change costs as the group grows.

For each protocol, one group grows through the sizes of the sweep (default 4, 8, 16, 32, 64).
At each size N, once the group is stable:

* **join**: one member starts (N -> N+1); measured from the start until the group settled;
* **leave**: that member shuts down cleanly (N+1 -> N); measured the same way;

then members are added, unmeasured and all at once so their rebalances coalesce, up to the
next size. One growing group instead of a fresh one per size keeps the sweep cheap (forming 64
ZooKeeper-coordinated members is itself a long herd). Nothing is produced: the herd is about
coordination, and with no traffic the members' only ZooKeeper requests are the rebalance's
(offsets are committed only when they change).

An event's window ends when the group has settled: every partition fetched by one member, no
coordination record for ``quiet_s`` and, for ZooKeeper members, no request either and every
watch notification the server sent (its ``mntr`` count) received by a member; then a margin
lets the members' counter samples catch up before the closing snapshot.

Per event: the requests the clients counted (ZooKeeper: every operation of the connector's
counters; broker groups: the group coordination requests of librdkafka's statistics), the
ZooKeeper server's own count from ``mntr`` (pings, connects and closes taken out, see
``lab/mntr.py``) and how far the two disagree, the watch notifications members received (and
the server's count of those it sent), the attempts, the members that ran a rebalance, owner
conflicts, rollbacks, time to stable, failed rebalances, conflicting decisions. Then a
least-squares fit of ``log(requests)`` on ``log(N)`` per protocol and event: the herd effect is
a slope well above 1 (each of N members reads all N registrations on every attempt), a
coordinator's is near 1 or below.

The sweep runs on a ZooKeeper of its own (default) where the broker is registered with a
persistent znode: the members' sessions are then the only ones, so the server's counters hold
nothing but the sweep (plus their rare pings).

``run_herd(HerdSpec(...))`` is the whole scenario: the CLI, the tests and Spark call it alike.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from zkconsumer.admin import create_topic
from zkconsumer.lab.drivers import Driver, get_driver
from zkconsumer.lab.drivers.original import ensure_compiled, unobserved
from zkconsumer.lab.group import LabGroup, member_name
from zkconsumer.lab.herd import settle
from zkconsumer.lab.herd.servers import HerdServers, herd_servers
from zkconsumer.lab.herd.spec import (
    SCENARIO,
    HerdError,
    HerdResult,
    HerdSpec,
    failed_point,
    fit_runs,
)
from zkconsumer.lab.metrics import ZOOKEEPER_FAMILY, EventWindow, event_metrics, metric_notes
from zkconsumer.lab.mntr import (
    PingRate,
    measure_ping_rate,
    read_mntr,
    relative_difference,
    server_requests,
)
from zkconsumer.lab.original_build import original_home
from zkconsumer.lab.progress import Progress
from zkconsumer.lab.runs import RunResult, RunStatus
from zkconsumer.scenarios.protocols import PROTOCOL_TABLE

log = logging.getLogger(__name__)

def run_herd(spec: HerdSpec, on_result: Callable[[HerdResult], None] | None = None,
             progress_stream: TextIO | None = None) -> HerdResult:
    """Every protocol's sweep; a sweep that fails records its remaining points as failed."""
    spec.validate()
    kafka_home = original_home(spec.protocols, spec.broker, spec.bootstrap is not None)
    if kafka_home:
        ensure_compiled(kafka_home)  # once, before any member starts
    out_dir = Path(spec.out_dir) if spec.out_dir else Path(tempfile.mkdtemp(prefix="zkherd-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    progress = Progress(spec.points(), enabled=spec.progress, stream=progress_stream)
    result = HerdResult(spec, [], {})

    broker = ""

    def add(run: RunResult) -> None:
        if broker:
            run.details.setdefault("broker", broker)
        result.runs.append(run)
        result.fits = fit_runs(result.runs)
        progress.advance(f"{run.protocol} {run.event} at N={run.members}: {run.status}")
        if on_result is not None:
            on_result(result)

    progress.update("starting servers")
    with herd_servers(spec) as servers:
        broker = servers.broker_name
        for protocol in spec.protocols:
            sweep = _Sweep(spec, protocol, servers, out_dir, progress, kafka_home)
            try:
                sweep.run(add)
            except Exception as exc:
                log.exception("herd sweep of %s failed", protocol)
                progress.note(f"{protocol}: sweep FAILED: {exc!r}")
                for n, event in sweep.remaining():
                    add(failed_point(spec, protocol, n, event, repr(exc), traceback.format_exc()))
    progress.close()
    return result


class _Sweep:
    """One protocol's growing group and its measurements."""

    def __init__(self, spec: HerdSpec, protocol: str, servers: HerdServers, out_dir: Path,
                 progress: Progress, kafka_home: str = "") -> None:
        self.spec = spec
        self.protocol = protocol
        self.driver: Driver = get_driver(protocol)
        self.servers = servers
        self.progress = progress
        self.zk_family = self.driver.family == ZOOKEEPER_FAMILY
        # The original's JVM members count no requests and log no watch notifications: the
        # server witnesses both alone, and its settling waits on coordination records only.
        self.original = PROTOCOL_TABLE[protocol].original
        self.kafka_home = kafka_home
        uniq = uuid.uuid4().hex[:6]
        self.topic = f"herd-{protocol}-{uniq}"
        self.records_dir = out_dir / "runs" / f"herd-{protocol}-{uniq}"
        self.group: LabGroup | None = None
        self._done: set[tuple[int, str]] = set()
        self.formation_s: dict[int, float] = {}

    def remaining(self) -> list[tuple[int, str]]:
        return [(n, e) for n in self.spec.sizes for e in self.spec.events
                if (n, e) not in self._done]

    def run(self, add: Callable[[RunResult], None]) -> None:
        spec = self.spec
        create_topic(self.servers.zk_connect, self.topic, spec.partitions,
                     bootstrap=self.servers.bootstrap)
        self.group = LabGroup(protocol=self.protocol, topic=self.topic,
                              group=f"{self.topic}-g", partitions=spec.partitions,
                              zk_connect=self.servers.zk_connect,
                              bootstrap=self.servers.bootstrap, timing=spec.timing,
                              records_dir=self.records_dir, processes=False,
                              kafka_home=self.kafka_home)
        try:
            for n in spec.sizes:
                self.progress.update(f"{self.protocol}: forming a group of {n}")
                started = time.monotonic()
                self._grow_to(n)
                self.formation_s[n] = round(time.monotonic() - started, 2)
                extra: str | None = None
                if "join" in spec.events:
                    extra = self._free_name()
                    add(self._measure(n, "join", extra))
                    self._done.add((n, "join"))
                if "leave" in spec.events:
                    if extra is None:   # leave alone: the extra member joins unmeasured
                        extra = self._free_name()
                        self._spawn([extra])
                        self._wait_formed(n + 1)
                    add(self._measure(n, "leave", extra))
                    self._done.add((n, "leave"))
                # (joins only: the joined member stays and counts towards the next size)
        finally:
            self.group.stop_all()

    # --- membership ----------------------------------------------------------------------------

    def _free_name(self) -> str:
        assert self.group is not None
        i = 0
        while member_name(i) in self.group.handles:
            i += 1
        return member_name(i)

    def _spawn(self, names: list[str]) -> None:
        assert self.group is not None
        for name in names:
            self.group.spawn(name)

    def _grow_to(self, n: int) -> None:
        assert self.group is not None
        names: list[str] = []
        i = 0
        while len(self.group.handles) + len(names) < n:
            if member_name(i) not in self.group.handles:
                names.append(member_name(i))
            i += 1
        if names:
            self._spawn(names)
        self._wait_formed(n)

    def _wait_formed(self, n: int) -> None:
        """Until the group of ``n`` is stable, every member has completed a rebalance and
        nothing coordinated for ``quiet_s``; raises HerdError on a dead member or the deadline."""
        assert self.group is not None
        group, timing = self.group, self.spec.timing

        def formed() -> bool:
            self._check_alive()
            return (settle.all_rebalanced(group.records.coord, self._current())
                    and self._coordination_quiet())

        if group.wait_settled(timing.formation_deadline_s, check=formed) is None:
            self._check_alive()
            raise HerdError(f"{self.protocol}: a group of {n} did not settle within "
                            f"{timing.formation_deadline_s:.0f} s")

    def _current(self) -> list[settle.Incarnation]:
        assert self.group is not None
        return [(h.spec.member, h.spec.incarnation) for h in self.group.handles.values()]

    def _check_alive(self) -> None:
        assert self.group is not None
        failure = settle.member_failure(self.group.records.lifecycle)
        if failure is not None:
            raise HerdError(f"{self.protocol}: {failure}")

    def _coordination_quiet(self, since: float | None = None, leaver: str | None = None
                            ) -> bool:
        assert self.group is not None
        return settle.coordination_quiet(self.group.records.coord, time.time(),
                                         self.spec.timing.quiet_s, since, leaver,
                                         self.group.records.decisions)

    def _requests_quiet(self, hold_s: float) -> bool:
        """ZooKeeper members sample their counters every ``request_sample_interval_s``."""
        assert self.group is not None
        fresh_s = 2 * self.spec.timing.request_sample_interval_s + 0.5
        return settle.requests_quiet(self.group.records.requests, self._current(), time.time(),
                                     hold_s, fresh_s)

    def _wait_requests_quiet(self, hold_s: float) -> None:
        assert self.group is not None
        give_up = time.monotonic() + self.spec.timing.event_deadline_s
        while time.monotonic() < give_up:
            self.group.tail.poll()
            if self._requests_quiet(hold_s):
                return
            time.sleep(0.1)
        raise HerdError(f"{self.protocol}: the group's ZooKeeper requests did not stop within "
                        f"{self.spec.timing.event_deadline_s:.0f} s of it settling")

    # --- one event -----------------------------------------------------------------------------

    def _measure(self, n: int, event: str, name: str) -> RunResult:
        assert self.group is not None
        spec, group, zk = self.spec, self.group, self.servers.zk_connect
        self.progress.update(f"{self.protocol}: {event} at N={n}")
        # The group is settled; the ping window doubles as the margin that lets every member
        # sample its counters after its last request.
        margin_s = spec.margin_s(self.driver.family)
        quiet_s = max(spec.ping_window_s, margin_s)
        pings: PingRate | None = None
        if self.zk_family and self.original:
            # No counters to watch: one auto-commit tick passes (its first commit after the
            # rebalance lands in it) before the pings are measured.
            time.sleep(spec.timing.auto_commit_interval_ms / 1000.0 + 0.3)
            pings = measure_ping_rate(zk, quiet_s)
        elif self.zk_family:
            # Settled is not silent yet: the first auto-commit after a rebalance writes the
            # offsets that changed. Wait until no member's counters moved for longer than the
            # auto-commit interval (one tick passed with nothing to write).
            self._wait_requests_quiet(spec.timing.auto_commit_interval_ms / 1000.0 + 0.3)
            pings = measure_ping_rate(zk, quiet_s)
        else:
            time.sleep(quiet_s)
        before = read_mntr(zk)
        # A KIP-848 group has nothing to do when a member holding nothing leaves: no member
        # records a reaction, so none is waited for (the classic and ZooKeeper groups rebalance
        # on any membership change, and a joiner records at least its own joining).
        reaction = not (event == "leave" and self.driver.option("group.protocol") == "consumer"
                        and not group.fetching(name))
        t0 = time.time()
        size_before = len(group.handles)
        if event == "join":
            group.spawn(name)
            opened, closed = 1, 0
        else:
            group.stop(name)
            opened, closed = 0, 1

        mntr_between = 0

        def settled_after_event() -> bool:
            """Coordination quiet since the event; for ZooKeeper members also their requests,
            and every watch notification the server sent has reached a member (a member whose
            notification is still in flight looks idle, not done)."""
            nonlocal mntr_between
            self._check_alive()
            if not self._coordination_quiet(since=t0 if reaction else None,
                                            leaver=name if event == "leave" else None):
                return False
            if not self.zk_family or self.original:
                return True
            if not self._requests_quiet(spec.timing.quiet_s):
                return False
            mntr_between += 1
            sent = read_mntr(zk).watch_notifications - before.watch_notifications
            return settle.notifications_delivered(group.records.coord, t0, sent, closed)

        settled = group.wait_settled(spec.timing.event_deadline_s, check=settled_after_event)
        time.sleep(margin_s)
        after = read_mntr(zk)
        t1 = after.ts
        group.tail.poll()
        window = EventWindow(t0, t1, tuple(group.required()))
        metrics = event_metrics(group.records, [], spec.partitions, window,
                                attempt_counter=self.driver.attempt_counter,
                                family=self.driver.family)
        rebalanced = settle.members_rebalanced(group.records.coord, t0, t1,
                                               leaver=name if event == "leave" else None)
        metrics["members_rebalanced"] = len(rebalanced)
        metrics["coordination_s"] = settle.coordination_end(group.records.coord, t0, t1)
        notes = metric_notes(self.driver.family, metrics)
        if self.original:
            notes.update(unobserved(metrics))
        details: dict[str, Any] = {
            "event_ts": t0, "end_ts": t1, "settled": settled is not None,
            "settled_ts": settled, "family": self.driver.family, "topic": self.topic,
            "session_timeout_ms": spec.timing.session_timeout_ms,
            "members_rebalanced": rebalanced, "threads": threading.active_count(),
            "formation_s": self.formation_s.get(n), "measured_s": round(time.time() - t0, 2),
            "open_fds": _open_fds(),
            "zk_mntr_delta": {k: int(after.get(k) - before.get(k))
                              for k in ("zk_packets_received", "zk_packets_sent")},
        }
        if self.zk_family and pings is not None:
            server = server_requests(before, after, pings, opened, closed, mntr_between)
            client = metrics.get("coordination_requests")
            metrics["zk_requests_client"] = client
            metrics["zk_requests_server"] = server.requests
            metrics["watch_notifications_server"] = server.watch_notifications
            diff = relative_difference(client, server.requests)
            metrics["requests_disagreement"] = None if diff is None else round(diff, 4)
            details["zk_server"] = server.to_json()
            details["ping_rate"] = {"per_s": round(pings.per_s, 3),
                                    "window_s": round(pings.window_s, 3),
                                    "packets": pings.packets}
        else:
            metrics["zk_requests_client"] = None
            metrics["zk_requests_server"] = None
            metrics["requests_disagreement"] = None
            metrics["watch_notifications_server"] = None
            notes["zk_requests_server"] = ("broker-coordinated group: its members send "
                                           "ZooKeeper nothing; coordination_requests are the "
                                           "broker group requests librdkafka counted")
        details["metric_notes"] = notes
        return RunResult(
            protocol=self.protocol, members=n, partitions=spec.partitions, event=event,
            repeat=0, status=RunStatus.OK.value,
            reason=None if settled is not None else
            f"not settled {spec.timing.event_deadline_s:.0f} s after the {event}",
            metrics=metrics, details=details, records_dir=str(self.records_dir),
            scenario=SCENARIO,
            params={"n": n, "size_before": size_before, "size_after": len(group.handles),
                    "member": name})


def _open_fds() -> int | None:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return None
