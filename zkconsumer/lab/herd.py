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

import contextlib
import logging
import os
import tempfile
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from zkconsumer.admin import create_topic
from zkconsumer.lab.drivers import DRIVERS, Driver, get_driver
from zkconsumer.lab.drivers.broker import STATS_INTERVAL_MS
from zkconsumer.lab.fits import loglog_fit
from zkconsumer.lab.group import LabGroup, member_name
from zkconsumer.lab.metrics import ZOOKEEPER_FAMILY, EventWindow, event_metrics, metric_notes
from zkconsumer.lab.mntr import (
    PingRate,
    measure_ping_rate,
    read_mntr,
    relative_difference,
    server_requests,
)
from zkconsumer.lab.progress import Progress
from zkconsumer.lab.records import Coord, Lifecycle
from zkconsumer.lab.spec import RunResult, RunStatus, Timing
from zkconsumer.zk import paths
from zkconsumer.zk.codec import BrokerRegistration, encode_broker

log = logging.getLogger(__name__)

SCENARIO = "herd"
HERD_EVENTS = ("join", "leave")
DEFAULT_SIZES = (4, 8, 16, 32, 64)
# A long ZooKeeper session makes idle clients ping rarely (every timeout/3): the server-side
# count then needs only a tiny correction. Formation and events do not wait on the timeout.
HERD_TIMING = Timing(session_timeout_ms=30000, rebalance_backoff_ms=1000,
                     rebalance_max_retries=10, quiet_s=2.0, formation_deadline_s=180.0,
                     event_deadline_s=120.0, produce_rate=0.0, request_sample_interval_s=0.25)
# Coordination records that show a member took part in a rebalance.
_REBALANCING = {Coord.ATTEMPT.value, Coord.REBALANCE_STARTED.value,
                Coord.REBALANCE_SUCCEEDED.value}


class HerdError(Exception):
    """The growing group could not be formed or measured (the rest of the sweep is skipped)."""


@dataclass(frozen=True)
class HerdSpec:
    """One herd sweep.

    ``members``: the stable group sizes N at which the events are measured. ``zk_connect`` /
    ``bootstrap`` name running servers; ``dedicated_zookeeper`` (default) runs the sweep on a
    ZooKeeper of its own (the broker registered in it), so that no other client's traffic is in
    the server-side counts; without it and without ``zk_connect``, embedded servers are started.
    ``settle_margin_s``: waited after the group settled and before each snapshot, so every
    member has sampled its counters since its last request (None: twice the sampling interval
    plus a little; ZooKeeper members sample every ``timing.request_sample_interval_s``, broker
    members every librdkafka statistics interval).
    ``ping_window_s``: the quiet window the ping rate is measured over, just before each event
    (at least ``settle_margin_s``: it is also the margin before the first snapshot).
    """

    protocols: tuple[str, ...] = ("zk-range",)
    members: tuple[int, ...] = DEFAULT_SIZES
    partitions: int = 8
    events: tuple[str, ...] = HERD_EVENTS
    timing: Timing = field(default_factory=lambda: HERD_TIMING)
    zk_connect: str | None = None
    bootstrap: str | None = None
    dedicated_zookeeper: bool = True
    out_dir: str | None = None
    settle_margin_s: float | None = None
    ping_window_s: float = 2.0
    progress: bool = False
    broker: str | None = None  # the broker started when none is named (tansu, kafka, kafka:DIR)

    def validate(self) -> None:
        unknown = [p for p in self.protocols if p not in DRIVERS]
        if unknown or not self.protocols:
            raise ValueError(f"unknown protocol(s) {unknown}; choose from {sorted(DRIVERS)}")
        bad = [e for e in self.events if e not in HERD_EVENTS]
        if bad or not self.events:
            raise ValueError(f"unknown herd event(s) {bad}; choose from {list(HERD_EVENTS)}")
        if not self.members or min(self.members) < 1:
            raise ValueError(f"--members needs group sizes >= 1, got {list(self.members)}")
        if len(set(self.members)) != len(self.members):
            raise ValueError(f"--members lists a size twice: {list(self.members)}")
        if self.partitions < 1:
            raise ValueError(f"--partitions must be >= 1, got {self.partitions}")
        if self.bootstrap is None and self.zk_connect is not None and not self.dedicated_zookeeper:
            raise ValueError("a ZooKeeper was named without a broker (--bootstrap)")

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(sorted(self.members))

    def margin_s(self, family: str) -> float:
        if self.settle_margin_s is not None:
            return self.settle_margin_s
        interval = (self.timing.request_sample_interval_s if family == ZOOKEEPER_FAMILY
                    else STATS_INTERVAL_MS / 1000.0)
        return 2 * interval + 0.2

    def points(self) -> int:
        return len(self.protocols) * len(self.members) * len(self.events)

    def to_json(self) -> dict[str, Any]:
        return {"protocols": list(self.protocols), "members": list(self.sizes),
                "partitions": self.partitions, "events": list(self.events),
                "timing": vars(self.timing), "dedicated_zookeeper": self.dedicated_zookeeper,
                "settle_margin_s": self.settle_margin_s, "ping_window_s": self.ping_window_s}


@dataclass
class HerdResult:
    """Every measured point (one RunResult per protocol x N x event) and the fits."""

    spec: HerdSpec
    runs: list[RunResult]
    fits: dict[str, dict[str, Any]]

    def fit(self, protocol: str, event: str) -> dict[str, Any] | None:
        return self.fits.get(f"{protocol}/{event}")


# --- servers ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class HerdServers:
    zk_connect: str
    bootstrap: str
    broker_name: str = ""  # as results name it; "" for a broker named by address


@contextlib.contextmanager
def herd_servers(spec: HerdSpec) -> Iterator[HerdServers]:
    """The ZooKeeper the sweep measures and a broker registered in it.

    Dedicated (the default): a fresh embedded ZooKeeper in which the broker (``bootstrap``, or
    an embedded one started next to a ZooKeeper of its own) is registered with a *persistent*
    znode, so no session but the members' ever talks to it. Otherwise the named (or
    environment's) servers, with every other client's traffic in the counts.
    """
    from zkconsumer.testing.servers import broker_from_env, zookeeper_from_env
    from zkconsumer.testing.zookeeper import EmbeddedZooKeeper

    with contextlib.ExitStack() as stack:
        if not spec.dedicated_zookeeper:
            zk_connect = stack.enter_context(zookeeper_from_env(spec.zk_connect)).connect_string
            broker = stack.enter_context(broker_from_env(zk_connect, spec.bootstrap or spec.broker))
            yield HerdServers(zk_connect, broker.bootstrap, getattr(broker, "name", ""))
            return
        bootstrap, name = spec.bootstrap, ""
        if bootstrap is None:
            home = stack.enter_context(zookeeper_from_env(spec.zk_connect)).connect_string
            broker = stack.enter_context(broker_from_env(home, spec.broker))
            bootstrap, name = broker.bootstrap, getattr(broker, "name", "")
        zk_connect = stack.enter_context(EmbeddedZooKeeper()).connect_string
        register_broker_persistently(zk_connect, bootstrap)
        yield HerdServers(zk_connect, bootstrap, name)


def register_broker_persistently(zk_connect: str, bootstrap: str, broker_id: int = 0) -> None:
    """``/brokers/ids/<id>`` for the first bootstrap server, as a persistent znode: legacy
    consumers find the broker there, and no registration session pings the server."""
    from kazoo.client import KazooClient

    from zkconsumer.testing.broker import COMMON_PATHS

    host, _, port = bootstrap.split(",")[0].rpartition(":")
    reg = BrokerRegistration(broker_id=broker_id, host=host, port=int(port),
                             endpoints=(f"PLAINTEXT://{host}:{port}",))
    client = KazooClient(hosts=zk_connect)
    client.start(timeout=15)
    try:
        for path in COMMON_PATHS:
            client.ensure_path(path)
        client.create(paths.broker(broker_id), encode_broker(reg))
    finally:
        client.stop()
        client.close()


# --- the sweep --------------------------------------------------------------------------------


def run_herd(spec: HerdSpec, on_result: Callable[[HerdResult], None] | None = None,
             progress_stream: TextIO | None = None) -> HerdResult:
    """Every protocol's sweep; a sweep that fails records its remaining points as failed."""
    spec.validate()
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
            sweep = _Sweep(spec, protocol, servers, out_dir, progress)
            try:
                sweep.run(add)
            except Exception as exc:
                log.exception("herd sweep of %s failed", protocol)
                progress.note(f"{protocol}: sweep FAILED: {exc!r}")
                for n, event in sweep.remaining():
                    add(_failed(spec, protocol, n, event, repr(exc), traceback.format_exc()))
    progress.close()
    return result


def fit_runs(runs: list[RunResult]) -> dict[str, dict[str, Any]]:
    """``"<protocol>/<event>" -> {"slope", "intercept", "r2", "points": [[N, requests], ...]}``
    from the measured runs (requests = the clients' count); the ZooKeeper server's count gets
    its own ``server_slope`` where it was measured."""
    out: dict[str, dict[str, Any]] = {}
    keys = dict.fromkeys((r.protocol, r.event) for r in runs if r.scenario == SCENARIO)
    for protocol, event in keys:
        ok = [r for r in runs if r.protocol == protocol and r.event == event
              and r.scenario == SCENARIO and r.status == RunStatus.OK.value]
        fit = loglog_fit([(r.members, r.metrics.get("coordination_requests")) for r in ok])
        if fit is None:
            continue
        doc = fit.to_json()
        server = loglog_fit([(r.members, r.metrics.get("zk_requests_server")) for r in ok])
        doc["server_slope"] = None if server is None else round(server.slope, 4)
        out[f"{protocol}/{event}"] = doc
    return out


def _failed(spec: HerdSpec, protocol: str, n: int, event: str, reason: str,
            tb: str | None = None) -> RunResult:
    return RunResult(protocol=protocol, members=n, partitions=spec.partitions, event=event,
                     repeat=0, status=RunStatus.FAILED.value, reason=reason,
                     details={"traceback": tb} if tb else {}, scenario=SCENARIO,
                     params={"n": n})


class _Sweep:
    """One protocol's growing group and its measurements."""

    def __init__(self, spec: HerdSpec, protocol: str, servers: HerdServers, out_dir: Path,
                 progress: Progress) -> None:
        self.spec = spec
        self.protocol = protocol
        self.driver: Driver = get_driver(protocol)
        self.servers = servers
        self.progress = progress
        self.zk_family = self.driver.family == ZOOKEEPER_FAMILY
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
                              records_dir=self.records_dir, processes=False)
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
            done = {(c.member, c.incarnation) for c in group.records.coord
                    if c.what == Coord.REBALANCE_SUCCEEDED.value}
            current = {(h.spec.member, h.spec.incarnation) for h in group.handles.values()}
            return current <= done and self._coordination_quiet()

        if group.wait_settled(timing.formation_deadline_s, check=formed) is None:
            self._check_alive()
            raise HerdError(f"{self.protocol}: a group of {n} did not settle within "
                            f"{timing.formation_deadline_s:.0f} s")

    def _check_alive(self) -> None:
        assert self.group is not None
        for lc in self.group.records.lifecycle:
            if lc.what is Lifecycle.ERROR:
                raise HerdError(f"{self.protocol}: member {lc.member}.{lc.incarnation} failed: "
                                f"{lc.detail.splitlines()[0] if lc.detail else '?'}")

    def _coordination_quiet(self, since: float | None = None, leaver: str | None = None
                            ) -> bool:
        """No coordination record for ``quiet_s`` and, with ``since``, one after it by a member
        other than ``leaver``: a leaver's own revocation is not the group noticing (a broker
        may start the rebalance seconds after the LeaveGroup, the group looking stable)."""
        assert self.group is not None
        coord = [c for c in self.group.records.coord if c.what != Coord.WATCH_FIRED.value]
        last = max((c.ts for c in coord), default=0.0)
        if since is not None and not any(c.ts >= since and c.member != leaver for c in coord):
            return False
        return time.time() - last >= self.spec.timing.quiet_s

    def _requests_quiet(self, hold_s: float) -> bool:
        """Whether every member's request counters stayed the same for ``hold_s`` (ZooKeeper
        members sample them every ``request_sample_interval_s``)."""
        assert self.group is not None
        group = self.group
        fresh_s = 2 * self.spec.timing.request_sample_interval_s + 0.5
        now = time.time()
        samples: dict[tuple[str, int], list[tuple[float, int]]] = {}
        for s in group.records.requests:
            samples.setdefault((s.member, s.incarnation), []).append(
                (s.ts, sum(s.counts.values())))
        current = [(h.spec.member, h.spec.incarnation) for h in group.handles.values()]
        return all(_unchanged_since(samples.get(k, []), now - hold_s, now - fresh_s)
                   for k in current)

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
        if self.zk_family:
            # Settled is not silent yet: the first auto-commit after a rebalance writes the
            # offsets that changed. Wait until no member's counters moved for longer than the
            # auto-commit interval (one tick passed with nothing to write).
            self._wait_requests_quiet(spec.timing.auto_commit_interval_ms / 1000.0 + 0.3)
            pings = measure_ping_rate(zk, quiet_s)
        else:
            time.sleep(quiet_s)
        before = read_mntr(zk)
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
            if not self._coordination_quiet(since=t0,
                                            leaver=name if event == "leave" else None):
                return False
            if not self.zk_family:
                return True
            if not self._requests_quiet(spec.timing.quiet_s):
                return False
            mntr_between += 1
            sent = read_mntr(zk).watch_notifications - before.watch_notifications
            received = sum(1 for c in group.records.coord
                           if c.what == Coord.WATCH_FIRED.value and c.ts >= t0)
            # A leaver's session can be notified of its own registration's deletion while it
            # closes; that notification reaches nobody's records.
            return received >= sent - closed

        settled = group.wait_settled(spec.timing.event_deadline_s, check=settled_after_event)
        time.sleep(margin_s)
        after = read_mntr(zk)
        t1 = after.ts
        group.tail.poll()
        window = EventWindow(t0, t1, tuple(group.required()))
        metrics = event_metrics(group.records, [], spec.partitions, window,
                                attempt_counter=self.driver.attempt_counter,
                                family=self.driver.family)
        # The leaver's own revocation is its leaving, not a rebalance it took part in.
        rebalanced = sorted({c.member for c in group.records.coord
                             if c.what in _REBALANCING and t0 <= c.ts <= t1
                             and not (event == "leave" and c.member == name)})
        metrics["members_rebalanced"] = len(rebalanced)
        # When the group finished coordinating; differs from time to stable when partitions
        # never stopped (a cooperative join that moves nothing is stable throughout).
        last_coord = max((c.ts for c in group.records.coord
                          if t0 <= c.ts <= t1 and c.what != Coord.WATCH_FIRED.value),
                         default=None)
        metrics["coordination_s"] = None if last_coord is None else round(last_coord - t0, 3)
        notes = metric_notes(self.driver.family, metrics)
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


def _unchanged_since(samples: list[tuple[float, int]], since: float, fresh_after: float
                     ) -> bool:
    """A sample older than ``since`` and every later one equal to it, the last being fresh."""
    older = [total for ts, total in samples if ts <= since]
    later = [(ts, total) for ts, total in samples if ts > since]
    if not older or not later or later[-1][0] < fresh_after:
        return False
    return all(total == older[-1] for _, total in later)


def _open_fds() -> int | None:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return None
