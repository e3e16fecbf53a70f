"""Latency parameters the simulator reads, and their JSON file (``zkconsumer calibrate`` writes it).

Every timing in the simulator comes from one :class:`Calibration`. The defaults reproduce the
figures measured on the reference machine (2 cores, Debian 12, Python 3.11.7, OpenJDK 17):

* the server's read capacity (``zk_read_service_us``): shared by all members, so a herd's reads
  queue there (the built-in value, not measured here: see the field);
* kazoo, one synchronous client: 1.2-3k reads/s and 0.4-1.2k creates/s, i.e. ~0.5 ms per read
  and ~1.3 ms per create end to end, mostly Python on the client side; so each request is split
  into client CPU (shared by every connector of one process when ``SimConfig.client_processes``
  says so: the GIL), a parallel server/network latency, and for writes a short service time in
  the ZooKeeper leader's single, serialised write pipeline;
* client CPU in a crowded process (``client_cpu_scale_by_clients``): the per-request client CPU
  above is a lone client's; with many clients busy in one Python process each request costs
  more CPU (``calibrate`` measures it: :func:`zkconsumer.calibration.measure.measure_crowd`).
  The table is pairs ``(K, factor)``, the CPU per request with ``K`` clients busy relative to
  one, interpolated linearly in log K (:func:`client_cpu_scale`); empty (the default) is factor 1.
  Measured on the reference machine: 0.30 ms of process CPU per read with one busy client,
  1.17 ms with 16 and 1.32 ms with 32 (4.4x), and no extra cost from idle sessions, so the
  factor follows busy clients, and in a legacy rebalance every member of a process is busy;
* session expiry after SIGKILL: the server times the session out from the last packet it heard
  (the ping phase and its tick rounding are modelled in :mod:`zkconsumer.sim.liveness`); what
  is left, closing the session, is ``session_expiry_factor`` (the built-in 1.15 is the
  reference machine's whole-expiry figure, 6.3-7.4 s at a 6 s timeout, kept as a conservative
  default; ``calibrate`` measures the residual);
* Tansu 0.6.0 broker-side groups: a rebalance takes about half the session timeout whatever the
  group size; eager at 10 s sessions is stable again in 6-7 s; cooperative-sticky takes 18-32 s
  with moved partitions unowned for 7-12 s (two rounds, the second ~0.45 session timeouts); a
  joining client needs ~1.2 s (bootstrap, metadata, FindCoordinator) before its JoinGroup. The
  built-in cooperative figures lump Tansu's extra rounds into longer ones; a calibration can
  model them as rounds instead (``coop_revokers_per_round``), or model Tansu's coordinator
  itself, which has no JoinGroup barrier (``coop_coordinator_poll_ms``,
  ``coop_sync_wait_ms``: see :mod:`zkconsumer.sim.tansu`).

The file is JSON with a ``version`` and the field names below; unknown keys are rejected (a
misspelt parameter must not fall back to its default silently).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

FILE_VERSION = 1
# The steps a slower machine stretches in proportion: the client's CPU per request, the
# ZooKeeper server's latency and service (a server on the same host, its work CPU too), the
# plan and a rebalance's CPU beyond its requests. Timers (backoffs, polls, the producer's
# schedule and the fetcher stops placed on it, session timeouts) keep their length.
CPU_BOUND = ("client_read_cpu_ms", "client_write_cpu_ms", "zk_read_latency_ms",
             "zk_read_service_us", "zk_write_latency_ms", "zk_write_service_ms",
             "plan_us_per_member", "rebalance_cpu_ms")


@dataclass(frozen=True)
class Calibration:
    """Latency parameters; milliseconds unless the name says otherwise."""

    # ZooKeeper, as the kazoo client sees it (one synchronous request at a time per thread).
    client_read_cpu_ms: float = 0.25
    client_write_cpu_ms: float = 0.35
    zk_read_latency_ms: float = 0.25
    zk_write_latency_ms: float = 0.7
    zk_write_service_ms: float = 0.25
    # The server's work per read, shared by every client (processor sharing): negligible for a
    # small group, the bottleneck of a herd (10,000 members x 10,000 registrations = 10^8
    # reads is 1,000 s of server time at 10 us). ~50-100k reads/s is ZooKeeper's usual
    # single-server ballpark; not measured by ``calibrate`` (one Python client cannot load
    # the server enough).
    zk_read_service_us: float = 10.0
    watch_delivery_ms: float = 2.0
    zk_connect_ms: float = 30.0  # a joiner's session set-up before it registers
    # Expiry of a killed ZooKeeper session, after its last packet, net of the tick rounding,
    # over the session timeout (see zkconsumer.sim.liveness).
    session_expiry_factor: float = 1.15
    # The server's tickTime: ZooKeeper rounds session deadlines up to it. 500 ms is the
    # embedded server's (zkconsumer.testing.zookeeper); ZooKeeper's own default is 2000.
    zk_tick_ms: float = 500.0
    # Spread of the broker's session check (ZooKeeper's spread is the modelled ping and tick
    # phases).
    session_expiry_jitter: float = 0.06
    # The connector around the requests.
    fetcher_stop_min_ms: float = 5.0
    fetcher_stop_max_ms: float = 110.0
    idle_fetcher_stop_ms: float = 1.0
    plan_us_per_member: float = 15.0
    # Broker-side groups (Tansu 0.6.0 unless re-measured).
    broker_request_ms: float = 2.0
    broker_join_start_ms: float = 1200.0  # a joiner's start-up until its JoinGroup is sent
    broker_join_window_factor: float = 0.5
    coop_round1_extra_factor: float = 0.9
    coop_round2_extra_factor: float = 0.45
    # Owners that act on a cooperative revocation per round (0: all of them, the protocol's
    # two rounds). Tansu 0.6.0 with librdkafka let one owner revoke per round, so a join that
    # takes partitions from k owners ran about k + 1 rounds (see BrokerGroup._assign); a file
    # that sets it should set the coop_round*_extra_factor to 0, which lumped those rounds.
    # A cap in the barrier model; coop_coordinator_poll_ms below models the coordinator, from
    # which the one owner per round follows (and the rounds where two or three revoke).
    coop_revokers_per_round: float = 0.0  # a whole number
    # Above 0, cooperative groups run on the model of Tansu's coordinator (zkconsumer.sim.tansu)
    # instead of the barrier model. That model takes its looks (each second), its JoinGroup
    # hold (half the session timeout) and its SyncGroup wait (0.8 of it) from the source of
    # the build the lab runs; these two fitted values are no longer read by it.
    coop_coordinator_poll_ms: float = 0.0
    coop_sync_wait_ms: float = 5000.0
    # ... and at the group's formation the members' SyncGroups were answered about this much
    # apart per member, at most one look apart: their heartbeat schedules, which librdkafka
    # restarts at each answer, start that spread out (with coop_coordinator_poll_ms only, and
    # only where the event is not tied to the formation: the lab's runs take
    # zkconsumer.sim.formation's phases).
    coop_formation_stagger_ms: float = 21.0
    broker_session_check_factor: float = 1.0
    # Session timeouts between a member's LeaveGroup and the coordinator dropping it (the new
    # round starting). 0 is Apache Kafka's rule (a LeaveGroup starts the rebalance at once);
    # Tansu 0.6.0's is fitted to real leaves (zkconsumer spark fit).
    broker_leave_wait_factor: float = 0.0
    assign_us_per_member: float = 10.0
    revoke_ms: float = 20.0
    # Spread of every sampled duration (coefficient of variation of one request or step);
    # ``calibrate`` measures it (zkconsumer.calibration.leave.jitter_cv).
    jitter_cv: float = 0.25
    # A legacy member's clean leave before its ZooKeeper writes (measured by ``calibrate``:
    # zkconsumer.calibration.leave): its consume loop sees the stop request after a wait whose
    # median is leave_wake_ms (a uniform wait, cut short by a message of its partitions), then
    # its shutdown stops the fetchers in leave_shutdown_ms. Both 0 (the default): the leave
    # waits the fetcher stop only (fetcher_stop_min_ms/max_ms), as before they were measured.
    leave_wake_ms: float = 0.0
    leave_shutdown_ms: float = 0.0
    # A fetcher stop while its partitions carry traffic (measured by ``calibrate``: a clean
    # leave under the lab's per-partition rate: the leaver sees its stop on a message its
    # fetcher thread has just queued, so it waits that thread's whole new poll, ~100 ms). It
    # replaces the leave's shutdown and a rebalance's fetcher stop (fetcher_stop_min_ms/max_ms)
    # of a member whose partitions carry traffic. One fetcher stopped at a random moment waits
    # only the rest of its poll (``calibrate --fetcher-stop-onto``), and six of one process
    # stopped together end only partly in step; but the real group's stops end together
    # (drawn independently, the legacy leaves at N = 12 raced where no real one did:
    # validation plan 13), which the whole poll for every owner reproduces and the cause of
    # which is not known. 0 (the default): fetcher_stop_min_ms/max_ms apply with traffic too.
    fetcher_close_traffic_ms: float = 0.0
    # How long a sent message waits for its fetcher's next fetch round, at most (measured by
    # ``calibrate --delivery-onto``: zkconsumer.calibration.delivery). With it and traffic the
    # legacy model places every fetcher stop on the producer's schedule
    # (zkconsumer.sim.producer_schedule), replacing fetcher_close_traffic_ms, the uniform
    # stop and the leave's measured wake. 0 (the default): the rules above.
    delivery_round_ms: float = 0.0
    # A legacy member's CPU per rebalance beyond its ZooKeeper requests (measured by
    # ``calibrate --rebalance-cpu-onto``: zkconsumer.calibration.rebalance_cpu): its fetchers'
    # clients stopped and started again, its listeners' records, the thread handoffs of a
    # crowded process. Charged once per rebalance on the member's process, before its first
    # attempt. 0 (the default): not charged.
    rebalance_cpu_ms: float = 0.0
    # (K, factor): client CPU per request with K clients busy in one process over a lone
    # client's, measured by ``calibrate``; used when ``SimConfig.client_processes`` puts members
    # in shared processes (see client_cpu_scale). Empty: factor 1 whatever K.
    client_cpu_scale_by_clients: tuple[tuple[float, float], ...] = ()
    # Where the numbers come from ("defaults", or what calibrate measured against).
    source: str = "defaults: environment.md figures, 2026-11-22"
    # Per parameter, where its value came from: "measured by calibrate on <machine, date>",
    # "fitted by <command> from <results folder>" or "constant: <the rule and its source>"
    # (PARAMETER_ORIGINS). A file written by the commands names every parameter; the
    # built-in defaults name none. Pairs (name, text), sorted; a JSON object in the file.
    provenance: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        # A JSON file gives lists: keep tuples, so the calibration stays hashable.
        table = _scale_table(self.client_cpu_scale_by_clients)
        object.__setattr__(self, "client_cpu_scale_by_clients", table)
        object.__setattr__(self, "provenance", _provenance(self.provenance))
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in ("source", "client_cpu_scale_by_clients", "provenance"):
                continue
            if not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"calibration {f.name} must be a number >= 0, got {value!r}")
        if self.fetcher_stop_max_ms < self.fetcher_stop_min_ms:
            raise ValueError(
                f"calibration fetcher_stop_max_ms ({self.fetcher_stop_max_ms}) must be >= "
                f"fetcher_stop_min_ms ({self.fetcher_stop_min_ms})")

    def slowed(self, factor: float) -> Calibration:
        """This calibration on a machine ``factor`` times slower in its CPU-bound steps
        (:data:`CPU_BOUND`): how a run set made on a slower day is drawn. The lab's machine
        runs at a speed of its own each day (docs/validation-plan-24.md, its set-speed table),
        every step of a rebalance stretched in the same proportion."""
        if not (isinstance(factor, (int, float)) and math.isfinite(factor) and factor > 0):
            raise ValueError(f"a speed factor must be a finite number > 0, got {factor!r}")
        if factor == 1:
            return self
        return dataclasses.replace(self, **{n: getattr(self, n) * factor for n in CPU_BOUND})

    def client_cpu_scale(self, clients: int) -> float:
        """The factor on the client CPU per request with ``clients`` members in one process."""
        return client_cpu_scale(self.client_cpu_scale_by_clients, clients)

    @property
    def zk_read_ms(self) -> float:
        """One synchronous read as a lone client sees it."""
        return self.client_read_cpu_ms + self.zk_read_latency_ms

    @property
    def zk_write_ms(self) -> float:
        """One synchronous write as a lone client sees it (empty pipeline)."""
        return self.client_write_cpu_ms + self.zk_write_latency_ms + self.zk_write_service_ms

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["provenance"] = dict(self.provenance)
        return {"version": FILE_VERSION, **data}

    def origin(self, name: str) -> str | None:
        """Where parameter ``name`` came from, if the file says."""
        return dict(self.provenance).get(name)

    def with_origins(self, origins: dict[str, str]) -> Calibration:
        """The same values with ``origins`` recorded (replacing those already there)."""
        merged = {**dict(self.provenance), **origins}
        return dataclasses.replace(self, provenance=tuple(sorted(merged.items())))

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "calibration") -> Calibration:
        data = dict(data)
        version = data.pop("version", FILE_VERSION)
        if version != FILE_VERSION:
            raise ValueError(f"{where}: version {version!r} is not supported "
                             f"(expected {FILE_VERSION})")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"{where}: unknown calibration parameter(s) {unknown}")
        return cls(**data)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n")
        log.info("calibration written to %s (%s)", path, self.source)

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        try:
            data = json.loads(Path(path).read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a JSON object, got {type(data).__name__}")
        return cls.from_dict(data, str(path))


def parameter_names() -> tuple[str, ...]:
    """Every parameter the simulator reads (the fields but ``source`` and ``provenance``)."""
    return tuple(f.name for f in dataclasses.fields(Calibration)
                 if f.name not in ("source", "provenance"))


def _provenance(value: Any) -> tuple[tuple[str, str], ...]:
    """Check and normalise ``provenance``: a mapping (or pairs) of known parameter names."""
    items = value.items() if isinstance(value, dict) else value
    pairs: dict[str, str] = {}
    for item in items:
        if isinstance(item, (str, bytes)) or len(item) != 2:
            raise ValueError(f"calibration provenance must map names to text, got {item!r}")
        name, text = item
        if name not in parameter_names():
            raise ValueError(f"calibration provenance names an unknown parameter {name!r}")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"calibration provenance of {name} must be non-empty text, "
                             f"got {text!r}")
        pairs[name] = text
    return tuple(sorted(pairs.items()))


def _scale_table(pairs: Sequence[Sequence[float]]) -> tuple[tuple[float, float], ...]:
    """Check and normalise ``client_cpu_scale_by_clients``: K >= 1 increasing, factors > 0."""
    table: list[tuple[float, float]] = []
    for pair in pairs:
        if isinstance(pair, (str, bytes)) or len(pair) != 2:
            raise ValueError("calibration client_cpu_scale_by_clients must be pairs [K, "
                             f"factor], got {pair!r}")
        k, factor = pair
        if isinstance(k, bool) or isinstance(factor, bool) or \
                not isinstance(k, (int, float)) or not isinstance(factor, (int, float)):
            raise ValueError(f"calibration client_cpu_scale_by_clients: not numbers: {pair!r}")
        if k < 1 or factor <= 0:
            raise ValueError("calibration client_cpu_scale_by_clients needs K >= 1 and factor "
                             f"> 0, got {pair!r}")
        if table and k <= table[-1][0]:
            raise ValueError("calibration client_cpu_scale_by_clients: K must increase, got "
                             f"{k!r} after {table[-1][0]!r}")
        if k == 1 and factor != 1:
            raise ValueError("calibration client_cpu_scale_by_clients: the factor at K = 1 is "
                             f"1 by definition, got {factor!r}")
        table.append((float(k), float(factor)))
    return tuple(table)


def client_cpu_scale(table: Sequence[tuple[float, float]], clients: float) -> float:
    """Client CPU per request with ``clients`` busy in one process, relative to a lone client.

    Linear in log K between the table's points, with (1, 1) implied; constant beyond the
    last point (no extrapolation past what was measured); 1 without a table or for K <= 1.
    """
    if not table or clients <= 1:
        return 1.0
    points = [(1.0, 1.0), *((k, f) for k, f in table if k > 1)]
    if clients >= points[-1][0]:
        return points[-1][1]
    for (k0, f0), (k1, f1) in zip(points, points[1:], strict=False):
        if clients <= k1:
            w = math.log(clients / k0) / math.log(k1 / k0)
            return f0 + w * (f1 - f0)
    return points[-1][1]  # not reached: clients < the last K
