"""The ZooKeeper server as the legacy group sees it: registrations, owner znodes, one watch.

Timing of one synchronous request from a member (kazoo blocks the calling thread):

* client CPU (``client_*_cpu_ms``, times ``SimConfig.client_cpu_scale`` when members share
  processes) on the member's :class:`~zkconsumer.sim.engine.Cpu`;
* a read then travels and is served at once (reads run concurrently on the server; a read sees
  the state at the instant it is served, which is how a member reads an owner znode another
  member has not released yet) and travels back: ``zk_read_latency_ms`` in all;
* a write travels to the leader, waits in its single FIFO pipeline (``zk_write_service_ms`` per
  write, serialised across all members), is applied when it leaves the pipeline, and travels
  back: ``zk_write_latency_ms`` in all plus queueing.

Bulk reads (an attempt reads ``N`` registrations one after another) are one simulated step whose
duration is the sum of ``n`` requests, with the jitter of a sum (CV/√n); the state they observe
is taken when the step starts. That is the approximation that makes a 10,000-member herd (10⁸
reads) a few hundred thousand events: nothing in the group changes while a member walks the
registrations, except in the rare case the model then checks (a member vanished: NoNode fails
the attempt, as in ``RebalanceExecutor._read_view``).

The server's read work (``zk_read_service_us`` per read) runs on one processor-sharing
:class:`~zkconsumer.sim.engine.SharedCpu`: when thousands of members walk the registrations at
once, each one's reads take as long as the server needs for everybody's (the herd's cost in
time, not only in requests).

Watches: the membership child watch is one-shot and re-armed by the member (``WatchSet.arm``);
a change notifies every armed watcher after ``watch_delivery_ms`` and disarms it.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zkconsumer.sim.calibration import Calibration
from zkconsumer.sim.config import SimConfig
from zkconsumer.sim.engine import Cpu, DedicatedCpu, Engine, SharedCpu
from zkconsumer.sim.placement import PlacedCpus
from zkconsumer.sim.tally import OwnershipLedger, Tally

log = logging.getLogger(__name__)

CREATED = "created"
NODE_EXISTS = "exists"
ENSEMBLE_SERVERS = 3


def ensemble_read_service_us(single_us: float, servers: int = ENSEMBLE_SERVERS) -> float:
    """The read service a group spread over an ensemble sees: one server's over ``servers``.

    An extrapolation, not a measurement: ZooKeeper serves a read at the server the client is
    connected to, so members spread evenly over ``servers`` servers, each as fast as the one
    measured (``zk_read_service_us``) and with no write load, share the reads among them.
    """
    if servers < 1:
        raise ValueError(f"servers must be >= 1, got {servers}")
    return single_us / servers


def member_cpus(cfg: SimConfig, engine: Engine, server: ZkServer) -> list[Cpu]:
    """The CPUs a ZooKeeper-family group's members run on; member ``i`` uses entry
    ``i % len``.

    With ``cfg.placement``: one :class:`~zkconsumer.sim.placement.ProcessCpu` per process on
    the placement's cores, and the server's reads on them too when it runs on that host; one
    host per member: a dedicated CPU each. Without it, ``cfg.client_processes`` processor-
    sharing CPUs (or dedicated ones for 0), the server elsewhere.
    """
    if cfg.placement is not None:
        placed = PlacedCpus(engine, cfg.placement)
        on_host = placed.server()
        if on_host is not None:
            server.serve_reads_on(on_host)
        return list(placed.processes) or [DedicatedCpu(engine)]
    k = cfg.client_processes
    return [SharedCpu(engine) for _ in range(k)] or [DedicatedCpu(engine)]


@dataclass(frozen=True)
class GroupView:
    """``getChildren(/consumers/<g>/ids)`` at one version: sorted ids and each one's rank."""

    version: int
    members: tuple[str, ...]
    rank: dict[str, int]


class ZkServer:
    """Server state and the request timing of the module docstring."""

    def __init__(self, engine: Engine, cal: Calibration, rng: random.Random, tally: Tally,
                 ledger: OwnershipLedger, client_cpu_scale: float = 1.0) -> None:
        self._engine = engine
        self._cal = cal
        self._cpu_scale = client_cpu_scale  # a crowded process's factor on client CPU
        self._rng = rng
        self._tally = tally
        self.ledger = ledger
        self.registrations: dict[str, None] = {}  # insertion-ordered: deterministic iteration
        self.version = 0
        self._views: dict[int, GroupView] = {}
        self.watchers: dict[str, None] = {}
        self.on_notify: Callable[[str], None] = lambda member: None
        self._leader_free = 0.0
        self._read_server: Cpu = SharedCpu(engine)

    def serve_reads_on(self, cpu: Cpu) -> None:
        """Run the server's read work on ``cpu``: its process on the members' cores, when the
        placement puts the server on the same host (:mod:`zkconsumer.sim.placement`)."""
        self._read_server = cpu

    # --- sampling ----------------------------------------------------------------------------

    def jitter(self, n: int = 1) -> float:
        """A multiplicative factor for the sum of ``n`` iid durations (mean 1)."""
        cv = self._cal.jitter_cv
        if cv <= 0:
            return 1.0
        sd = cv / (n ** 0.5) if n > 1 else cv
        return min(3.0, max(0.2, self._rng.gauss(1.0, sd)))

    # --- requests ----------------------------------------------------------------------------

    def read(self, cpu: Cpu, serve: Callable[[], Any], done: Callable[[Any], None]) -> None:
        """One synchronous read; ``serve`` runs on the server, ``done`` gets its result."""
        self._tally.zk_reads += 1
        cpu.run(self._cal.client_read_cpu_ms / 1000.0 * self._cpu_scale * self.jitter(),
                self._read_sent,
                serve, done)

    def _read_sent(self, serve: Callable[[], Any], done: Callable[[Any], None]) -> None:
        half = self._cal.zk_read_latency_ms / 2000.0
        self._engine.after(half * self.jitter(), self._read_served, serve, done, half)

    def _read_served(self, serve: Callable[[], Any], done: Callable[[Any], None],
                     half: float) -> None:
        self._engine.after(half * self.jitter(), done, serve())

    def bulk_read(self, cpu: Cpu, n: int, done: Callable[[], None]) -> None:
        """``n`` synchronous reads back to back, as one step (see the module docstring)."""
        if n <= 0:
            self._engine.after(0.0, done)
            return
        self._tally.zk_reads += n
        cpu.run(n * self._cal.client_read_cpu_ms / 1000.0 * self._cpu_scale * self.jitter(n),
                self._bulk_sent, n,
                done)

    def _bulk_sent(self, n: int, done: Callable[[], None]) -> None:
        self._engine.after(n * self._cal.zk_read_latency_ms / 1000.0 * self.jitter(n),
                           self._read_server.run, n * self._cal.zk_read_service_us / 1e6, done)

    def write(self, cpu: Cpu, apply: Callable[[], Any], done: Callable[[Any], None]) -> None:
        """One synchronous write through the leader's pipeline; ``apply`` changes the state."""
        self._tally.zk_writes += 1
        cpu.run(self._cal.client_write_cpu_ms / 1000.0 * self._cpu_scale * self.jitter(),
                self._write_sent,
                apply, done)

    def _write_sent(self, apply: Callable[[], Any], done: Callable[[Any], None]) -> None:
        half = self._cal.zk_write_latency_ms / 2000.0
        self._engine.after(half * self.jitter(), self.commit, apply, done, half)

    def commit(self, apply: Callable[[], Any], done: Callable[[Any], None] | None = None,
               half: float = 0.0) -> None:
        """Queue a transaction in the leader's pipeline (also used for session expiry)."""
        start = max(self._engine.now, self._leader_free)
        self._leader_free = start + self._cal.zk_write_service_ms / 1000.0 * self.jitter()
        self._engine.at(self._leader_free, self._applied, apply, done, half)

    def _applied(self, apply: Callable[[], Any], done: Callable[[Any], None] | None,
                 half: float) -> None:
        result = apply()
        if done is not None:
            self._engine.after(half * self.jitter(), done, result)

    # --- state changes (run when a write leaves the pipeline) ---------------------------------

    def view(self) -> GroupView:
        cached = self._views.get(self.version)
        if cached is None:
            members = tuple(sorted(self.registrations))
            cached = GroupView(self.version, members, {m: i for i, m in enumerate(members)})
            self._views = {self.version: cached}
        return cached

    def vanished(self, view: GroupView) -> bool:
        """Did a member of ``view`` disappear since (a getData of it would be NoNode)?"""
        if view.version == self.version:
            return False
        return any(m not in self.registrations for m in view.members)

    def register(self, member: str) -> None:
        self.registrations[member] = None
        self._membership_changed()

    def unregister(self, member: str) -> None:
        self.registrations.pop(member, None)
        self.watchers.pop(member, None)
        self._membership_changed()

    def expire(self, member: str) -> None:
        """``closeSession``: the registration and every owner znode of the session go at once."""
        for p in sorted(self.ledger.owned_by(member)):
            self.ledger.set_owner(p, None)
        self.unregister(member)

    def arm_watch(self, member: str) -> None:
        self.watchers[member] = None

    def create_owner(self, partition: int, member: str) -> str:
        if self.ledger.owner[partition] is not None:
            return NODE_EXISTS
        self.ledger.set_owner(partition, member)
        return CREATED

    def delete_owner(self, partition: int) -> None:
        """Delete by path, whoever holds it (``ZkUtils.deletePath``; NoNode ignored)."""
        self.ledger.set_owner(partition, None)

    def _membership_changed(self) -> None:
        self.version += 1
        watchers, self.watchers = self.watchers, {}
        delay = self._cal.watch_delivery_ms / 1000.0
        for member in watchers:
            self.ledger.begin()
            self._engine.after(delay * self.jitter(), self._deliver, member)

    def _deliver(self, member: str) -> None:
        self._tally.watch_notifications += 1
        self.on_notify(member)
        self.ledger.end()
