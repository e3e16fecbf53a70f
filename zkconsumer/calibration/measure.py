"""Measure the simulator's latency parameters on real servers (``zkconsumer calibrate``).

What is measured, each as a median over many samples:

* ZooKeeper reads and creates from one synchronous kazoo client, split into the client's CPU
  time (``time.process_time`` of this process) and the rest (network and server);
* the leader's write service time: pipelined asynchronous creates, wall time per create;
* watch delivery: one client watches children, another creates one; time until the watch fires;
* session set-up (``KazooClient.start``) and, unless skipped, session expiry after SIGKILL: a
  child process with a short session creates an ephemeral znode and is killed right after
  (so its last packet is the create: no ping phase); expiry factor = (time until the znode is
  gone - half a ``zk_tick_ms``, the mean tick rounding) / the session timeout, the residual
  :mod:`zkconsumer.sim.liveness` adds to the ping phase and the tick rounding it models;
* a broker request round trip (a metadata request), when a bootstrap is given;
* unless skipped, the crowd: ``K`` kazoo clients in this one process, one thread each, issuing
  synchronous reads (``getChildren`` of a parent, then ``getData`` of each of its few hundred
  small children, over and over, as an attempt walks the registrations and owner znodes) and
  then ``setData`` writes, all at once, for ``K`` in :data:`CROWD_CLIENTS`: process CPU per
  request (``time.process_time`` over the burst / requests) and wall time per request per
  thread. The ratio of the CPU per read at ``K`` to that at one client becomes
  ``client_cpu_scale_by_clients`` (:func:`crowd_scale_table`).

* unless skipped, clean leaves of the lab's member and the spread of every repeated duration
  above (``jitter_cv``): :mod:`zkconsumer.calibration.leave`.

Everything else (fetcher stop times, Tansu's group timings) keeps its built-in value; the file
records which are measured in ``source``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from zkconsumer.sim.calibration import Calibration
from zkconsumer.sim.liveness import expiry_residual_factor
from zkconsumer.sim.origins import CONSTANT_VALUES, CONSTANTS, FITTED, MEASURED

log = logging.getLogger(__name__)

CROWD_CLIENTS = (1, 4, 16, 32)
CROWD_ZNODES = 300
CROWD_BURST_S = 1.0


@dataclass(frozen=True)
class CrowdSample:
    """One burst of ``clients`` kazoo clients in this process, ``busy`` of them issuing requests.

    ``cpu_ms`` is this process's CPU time (every thread: the callers and kazoo's connection
    threads) over the burst per request, all threads together; ``wall_ms`` the burst's wall
    time per request of one busy thread (the median thread).
    """

    op: str  # "read" or "write"
    clients: int
    busy: int
    requests: int
    cpu_ms: float
    wall_ms: float

    def to_dict(self) -> dict[str, float | int | str]:
        return dataclasses.asdict(self)


def _crowd_worker(client: object, op: str, paths: Sequence[str], parent: str, start: int,
                  go: threading.Event, stop: threading.Event, counts: list[int], slot: int
                  ) -> None:
    """Requests back to back until ``stop``: reads walk the children from ``start``, as an
    attempt walks the registrations; writes set this thread's own znode."""
    go.wait()
    done = 0
    i = start
    n = len(paths)
    while not stop.is_set():
        if op == "read":
            if i % n == 0:
                client.get_children(parent)  # type: ignore[attr-defined]
            else:
                client.get(paths[i % n])  # type: ignore[attr-defined]
            i += 1
        else:
            client.set(paths[slot % n], b"x")  # type: ignore[attr-defined]
        done += 1
    counts[slot] = done


def crowd_burst(clients: Sequence[object], busy: int, op: str, paths: Sequence[str],
                parent: str, burst_s: float = CROWD_BURST_S) -> CrowdSample:
    """The first ``busy`` of the started ``clients`` issue ``op`` requests for ``burst_s``."""
    go, stop = threading.Event(), threading.Event()
    counts = [0] * busy
    threads = [threading.Thread(target=_crowd_worker, daemon=True,
                                args=(clients[k], op, paths, parent,
                                      k * len(paths) // busy, go, stop, counts, k))
               for k in range(busy)]
    for t in threads:
        t.start()
    time.sleep(0.05)  # every thread parked at ``go``
    cpu0, wall0 = time.process_time(), time.perf_counter()
    go.set()
    time.sleep(burst_s)
    stop.set()
    for t in threads:
        t.join(30)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    total = max(1, sum(counts))
    per_thread = statistics.median(wall * 1000 / max(1, c) for c in counts)
    return CrowdSample(op, len(clients), busy, sum(counts), cpu * 1000 / total, per_thread)


def measure_crowd(zk_connect: str, counts: Sequence[int] = CROWD_CLIENTS,
                  znodes: int = CROWD_ZNODES, burst_s: float = CROWD_BURST_S,
                  repeats: int = 2, writes: bool = True, idle: bool = False
                  ) -> list[CrowdSample]:
    """Bursts of ``K`` busy clients for each ``K`` in ``counts``: reads, then writes.

    The reads run ``repeats`` passes over ``counts`` (interleaved, so a passing load spike
    hits every K alike; :func:`crowd_scale_table` pools them); the writes one pass. ``idle``
    adds, per pass, a burst where only one of the largest-K connected clients is busy:
    whether idle sessions in the process cost anything.
    """
    from kazoo.client import KazooClient

    base = f"/zkconsumer-calibrate/{uuid.uuid4().hex[:8]}-crowd"
    biggest = max(counts)
    clients = [KazooClient(hosts=zk_connect) for _ in range(biggest)]
    samples: list[CrowdSample] = []
    try:
        for c in clients:
            c.start(timeout=10)
        owner = clients[0]
        owner.ensure_path(base)
        paths = [f"{base}/n{i:05d}" for i in range(znodes)]
        for p in [owner.create_async(path, b"0123456789abcdef") for path in paths]:
            p.get(timeout=30)
        passes = [("read", r) for r in range(max(1, repeats))]
        if writes:
            passes.append(("write", 0))
        for op, _ in passes:
            for k in sorted(counts):
                samples.append(crowd_burst(clients[:k], k, op, paths, base, burst_s))
            if idle and biggest > 1:
                samples.append(crowd_burst(clients, 1, op, paths, base, burst_s))
        return samples
    finally:
        with contextlib.suppress(Exception):
            clients[0].delete(base, recursive=True)
        for c in clients:
            with contextlib.suppress(Exception):
                c.stop()
                c.close()


def crowd_cpu_ms(samples: Sequence[CrowdSample], op: str = "read") -> dict[int, float]:
    """K -> CPU ms per request over every burst where all K clients were busy (pooled)."""
    cpu: dict[int, float] = {}
    requests: dict[int, int] = {}
    for s in samples:
        if s.op == op and s.busy == s.clients and s.requests > 0:
            cpu[s.clients] = cpu.get(s.clients, 0.0) + s.cpu_ms * s.requests
            requests[s.clients] = requests.get(s.clients, 0) + s.requests
    return {k: cpu[k] / requests[k] for k in sorted(cpu)}


def crowd_scale_table(samples: Sequence[CrowdSample], op: str = "read"
                      ) -> tuple[tuple[float, float], ...]:
    """``(K, CPU per request at K / at one client)``, pooled over the bursts of each K.

    Empty without a one-client burst to divide by. Factors are rounded to 3 decimals.
    """
    pooled = crowd_cpu_ms(samples, op)
    one = pooled.get(1)
    if not one:
        return ()
    return tuple((float(k), round(v / one, 3)) for k, v in pooled.items() if k > 1)


def _timed(fn: Callable[[], object], samples: int,
           walls: list[float] | None = None) -> tuple[float, float]:
    """(median wall ms, mean CPU ms) per call; each call's wall ms appended to ``walls``."""
    walls = [] if walls is None else walls
    cpu0 = time.process_time()
    for _ in range(samples):
        t = time.perf_counter()
        fn()
        walls.append((time.perf_counter() - t) * 1000)
    cpu = (time.process_time() - cpu0) * 1000 / samples
    return statistics.median(walls), cpu


def measure_zookeeper(zk_connect: str, samples: int = 300, expiry: bool = True,
                      session_timeout_s: float = 4.0,
                      series: dict[str, list[float]] | None = None
                      ) -> dict[str, float | None]:
    """The medians; ``series`` (if given) gets every repeated duration measured, in ms
    (``read``, ``create``, ``watch_delivery``, ``connect``), for ``jitter_cv``."""
    from kazoo.client import KazooClient

    series = {} if series is None else series
    for name in ("read", "create", "watch_delivery", "connect"):
        series[name] = []

    base = f"/zkconsumer-calibrate/{uuid.uuid4().hex[:8]}"
    connects = series["connect"]
    for _ in range(5):
        t = time.perf_counter()
        c = KazooClient(hosts=zk_connect)
        c.start(timeout=10)
        connects.append((time.perf_counter() - t) * 1000)
        c.stop()
        c.close()
    client = KazooClient(hosts=zk_connect)
    other = KazooClient(hosts=zk_connect)
    client.start(timeout=10)
    other.start(timeout=10)
    try:
        client.ensure_path(base)
        read_ms, read_cpu = _timed(lambda: client.get(base), samples, series["read"])
        counter = iter(range(10**9))
        write_ms, write_cpu = _timed(lambda: client.create(f"{base}/w{next(counter)}"), samples,
                                     series["create"])
        t = time.perf_counter()
        pending = [client.create_async(f"{base}/a{i}") for i in range(samples * 3)]
        for p in pending:
            p.get(timeout=30)
        service = (time.perf_counter() - t) * 1000 / len(pending)
        watch = _watch_delivery(client, other, f"{base}/watched", 30, series["watch_delivery"])
        result: dict[str, float | None] = {
            "read_ms": read_ms, "read_cpu_ms": read_cpu, "write_ms": write_ms,
            "write_cpu_ms": write_cpu, "write_service_ms": service, "watch_delivery_ms": watch,
            "connect_ms": statistics.median(connects), "expiry_factor": None}
        if expiry:
            result["expiry_factor"] = _expiry_factor(client, zk_connect, f"{base}/eph",
                                                     session_timeout_s)
        return result
    finally:
        client.delete(base, recursive=True)
        for c in (client, other):
            c.stop()
            c.close()


def _watch_delivery(watcher: object, writer: object, path: str, samples: int,
                    delays: list[float] | None = None) -> float:
    watcher.ensure_path(path)  # type: ignore[attr-defined]
    delays = [] if delays is None else delays
    for i in range(samples):
        fired = threading.Event()
        stamp: list[float] = []

        def on_change(_event: object, stamp: list[float] = stamp,
                      fired: threading.Event = fired) -> None:
            stamp.append(time.perf_counter())
            fired.set()
        watcher.get_children(path, watch=on_change)  # type: ignore[attr-defined]
        sent = time.perf_counter()
        writer.create(f"{path}/c{i}")  # type: ignore[attr-defined]
        created = time.perf_counter()
        if fired.wait(5):
            # The notification leaves the server when the write is applied, about half the
            # create's round trip after it was sent.
            delays.append(max(0.0, (stamp[0] - sent - (created - sent) / 2) * 1000))
    return statistics.median(delays) if delays else Calibration().watch_delivery_ms


def _expiry_factor(client: object, zk_connect: str, path: str, timeout_s: float) -> float:
    """Two SIGKILLed sessions: when their ephemeral znodes vanish, net of the tick rounding.

    The child (:mod:`zkconsumer.calibration.expiry_child`) is killed right after its create, so
    the server last heard from it at the kill:
    the measurement has no ping phase, and the model adds it (:mod:`zkconsumer.sim.liveness`).
    """
    factors = []
    for i in range(2):
        node = f"{path}{i}"
        proc = subprocess.Popen([sys.executable, "-m", "zkconsumer.calibration.expiry_child",
                                 zk_connect, node, str(timeout_s)], stdout=subprocess.PIPE,
                                text=True)
        try:
            if proc.stdout is None or proc.stdout.readline().strip() != "ready":
                continue
            killed = time.perf_counter()
            os.kill(proc.pid, signal.SIGKILL)
            while client.exists(node):  # type: ignore[attr-defined]
                if time.perf_counter() - killed > 10 * timeout_s:
                    break
                time.sleep(0.02)
            factors.append(expiry_residual_factor(time.perf_counter() - killed, timeout_s,
                                                  Calibration().zk_tick_ms / 1000.0))
        finally:
            proc.kill()
            proc.wait(10)
    return statistics.median(factors) if factors else Calibration().session_expiry_factor


def measure_broker(bootstrap: str, samples: int = 30, walls: list[float] | None = None) -> float:
    """The median metadata round trip in ms; each one appended to ``walls``."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.list_topics(timeout=10)  # connect first
    median, _ = _timed(lambda: admin.list_topics(timeout=10), samples, walls)
    return median


def calibration_from(m: dict[str, float | None], broker_ms: float | None, where: str,
                     crowd: Sequence[CrowdSample] = (), read_service_us: float | None = None,
                     tick_ms: float | None = None, fetcher_poll_ms: float | None = None,
                     leave: dict[str, float] | None = None, jitter: float | None = None,
                     thread_cpu: dict[str, float] | None = None) -> Calibration:
    """Turn measured medians into parameters (latency = wall - client CPU - service).

    ``crowd`` (:func:`measure_crowd`'s bursts) gives ``client_cpu_scale_by_clients`` from the
    reads (a rebalance's requests are mostly reads; the table applies to writes too).
    ``thread_cpu`` (:func:`zkconsumer.calibration.client_cpu.thread_cpu_parameters`): the
    client CPU per request by the member's own threads' CPU clocks, in place of this process's
    CPU, and ``plan_us_per_member``.
    ``read_service_us`` is the server's CPU per read under many readers
    (:mod:`zkconsumer.calibration.read_service`), ``tick_ms`` its ``tickTime`` as ``conf`` reports
    it, ``fetcher_poll_ms`` the fetcher thread's consume poll (the fetcher stop's bound),
    ``leave`` the measured leave (``leave_wake_ms``, ``leave_shutdown_ms``:
    :func:`zkconsumer.calibration.leave.leave_parameters`) and ``jitter`` the spread of the
    measured durations (:func:`zkconsumer.calibration.leave.jitter_cv`).
    Every parameter gets its origin (:mod:`zkconsumer.sim.origins`).
    """
    base = Calibration()
    threads = thread_cpu or {}
    read_cpu = float(threads.get("client_read_cpu_ms", m["read_cpu_ms"] or 0.0))
    write_cpu = float(threads.get("client_write_cpu_ms", m["write_cpu_ms"] or 0.0))
    service = float(m["write_service_ms"] or 0.0)
    read_cpu = min(read_cpu, float(m["read_ms"] or 0.0))
    write_cpu = min(write_cpu, float(m["write_ms"] or 0.0))
    service = min(service, max(0.0, float(m["write_ms"] or 0.0) - write_cpu))
    values = {
        "client_read_cpu_ms": read_cpu,
        "zk_read_latency_ms": max(0.0, float(m["read_ms"] or 0.0) - read_cpu),
        "client_write_cpu_ms": write_cpu,
        "zk_write_service_ms": service,
        "zk_write_latency_ms": max(0.0, float(m["write_ms"] or 0.0) - write_cpu - service),
        "watch_delivery_ms": float(base.watch_delivery_ms if m["watch_delivery_ms"] is None
                                   else m["watch_delivery_ms"]),
        "zk_connect_ms": float(m["connect_ms"] or base.zk_connect_ms),
    }
    if "plan_us_per_member" in threads:
        values["plan_us_per_member"] = threads["plan_us_per_member"]
    measured = sorted(values)
    if m.get("expiry_factor") is not None:
        values["session_expiry_factor"] = float(m["expiry_factor"] or 0.0)
        measured.append("session_expiry_factor")
    if broker_ms is not None:
        values["broker_request_ms"] = broker_ms
        measured.append("broker_request_ms")
    rounded: dict[str, Any] = {k: round(v, 4) for k, v in values.items()}
    table = crowd_scale_table(crowd)
    if table:
        rounded["client_cpu_scale_by_clients"] = table
        measured.append("client_cpu_scale_by_clients")
    if read_service_us is not None:
        rounded["zk_read_service_us"] = round(read_service_us, 2)
        measured.append("zk_read_service_us")
    if tick_ms is not None:
        rounded["zk_tick_ms"] = float(tick_ms)
        measured.append("zk_tick_ms")
    for name, value in sorted((leave or {}).items()):
        rounded[name] = float(value)
        measured.append(name)
    if jitter is not None:
        rounded["jitter_cv"] = float(jitter)
        measured.append("jitter_cv")
    rounded.update(CONSTANT_VALUES)
    if fetcher_poll_ms is not None:
        rounded["fetcher_stop_max_ms"] = base.fetcher_stop_min_ms + fetcher_poll_ms
    when = time.strftime('%Y-%m-%d %H:%M', time.gmtime())
    machine = f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"
    source = (f"calibrate {when} UTC against {where} ({machine}); measured: "
              f"{', '.join(measured)}")
    origins = {name: f"measured by calibrate {when} UTC against {where} ({machine})"
               for name in measured}
    origins.update({name: f"not measured (skipped in this calibrate run): built-in default "
                          f"{getattr(base, name)!r}"
                    for name in MEASURED if name not in origins})
    origins.update({name: f"not fitted yet: built-in default {getattr(base, name)!r} "
                          "(zkconsumer spark fit replaces it)"
                    for name in FITTED if name not in origins})
    origins.update({name: text for name, text in CONSTANTS.items() if name not in origins})
    return dataclasses.replace(base, **rounded, source=source).with_origins(origins)
