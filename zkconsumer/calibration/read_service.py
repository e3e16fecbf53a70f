"""The ZooKeeper server's read service time, measured with many clients reading at once.

A legacy rebalance at large N is bound by the server: every member reads all N registrations,
so N² reads queue at the one server the group talks to. What the simulator needs is the
server's work per read (``zk_read_service_us``, processor sharing over every client). It is
measured here from the server's side:

* ``processes`` worker processes (:mod:`zkconsumer.calibration.reader_child`) of ``clients``
  kazoo clients each (separate processes, so the Python clients are not one GIL) issue
  ``getData`` on small znodes, each client keeping
  ``window`` requests outstanding (asynchronous), for ``burst_s`` seconds;
* ``mntr`` before and after gives the reads the server served (``zk_cnt_readlatency``, one per
  read request) and its own read latency (``zk_sum_readlatency``: from the request's arrival to
  its response, queueing included; ms resolution);
* the server process's CPU time (``/proc/<pid>/stat``, every JVM thread) over the burst, when
  the server is a local process (the embedded one): **service time = server CPU / reads
  served**. That is the work one read costs the server; its inverse is what one core of it can
  serve. Without a pid (a remote server) only the served rate is known, which is a lower bound
  of the capacity (the clients may be the bottleneck), and the service time is left unmeasured.

The clients share this machine's cores with the server, so the achieved rate here is not the
server's capacity; the CPU per read is, as long as the server is not starved of CPU (the
result records the achieved rate and the load). The embedded server runs the client-mode JIT
(``-XX:TieredStopAtLevel=1``) and the serial GC, which cost more CPU per read than a tuned
production JVM: the figure is this machine's embedded server, not a production ensemble's.

A 3-server ensemble serves each read at the server the client is connected to (reads are local
in ZooKeeper; only writes go through the leader): with the members spread evenly over three
servers, the group's reads are served by three servers at once, so the per-read service the
group sees is a third of one server's (:func:`zkconsumer.sim.zkmodel.ensemble_read_service_us`).
That is an extrapolation (labelled so wherever it is shown), not a measurement: it assumes the
three servers as fast as this one and no write load.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass

from zkconsumer.lab.mntr import parse_mntr

log = logging.getLogger(__name__)

READ_PROCESSES = 4
READ_CLIENTS = 8
READ_WINDOW = 32
READ_BURST_S = 4.0
READ_ZNODES = 200

@dataclass(frozen=True)
class ReadService:
    """One read burst, as the server saw it."""

    processes: int
    clients: int  # sessions in all
    window: int
    burst_s: float
    reads_served: int  # mntr zk_cnt_readlatency delta
    reads_per_s: float  # served over the burst's wall time
    server_latency_avg_ms: float  # mntr zk_sum_readlatency / zk_cnt_readlatency over the burst
    server_cpu_s: float | None  # server process CPU over the burst (None: not a local process)
    service_us: float | None  # server CPU per read served, microseconds
    loadavg: tuple[float, ...]

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (every thread), from ``/proc``."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime, stime (fields 14, 15)


def service_from(before: dict[str, float], after: dict[str, float], cpu_s: float | None,
                 wall_s: float) -> tuple[int, float, float, float | None]:
    """(reads served, reads/s, mean server read latency ms, CPU us per read) from two mntr."""
    reads = int(after.get("zk_cnt_readlatency", 0) - before.get("zk_cnt_readlatency", 0))
    lat = after.get("zk_sum_readlatency", 0) - before.get("zk_sum_readlatency", 0)
    if reads <= 0:
        raise ValueError(f"the server served no reads during the burst (mntr "
                         f"zk_cnt_readlatency {before.get('zk_cnt_readlatency')} -> "
                         f"{after.get('zk_cnt_readlatency')})")
    service = None if cpu_s is None else cpu_s * 1e6 / reads
    return reads, reads / wall_s, lat / reads, service


def measure_read_service(zk_connect: str, mntr: object, server_pid: int | None,
                         processes: int = READ_PROCESSES, clients: int = READ_CLIENTS,
                         window: int = READ_WINDOW, burst_s: float = READ_BURST_S,
                         znodes: int = READ_ZNODES) -> ReadService:
    """One burst of ``processes`` x ``clients`` pipelined readers; see the module docstring.

    ``mntr`` is a callable returning the server's ``mntr`` text (the embedded server's
    ``four_letter("mntr")``).
    """
    from kazoo.client import KazooClient

    base = f"/zkconsumer-calibrate/{uuid.uuid4().hex[:8]}-reads"
    owner = KazooClient(hosts=zk_connect)
    owner.start(timeout=10)
    procs: list[subprocess.Popen[str]] = []
    try:
        owner.ensure_path(base)
        for p in [owner.create_async(f"{base}/n{i:05d}", b"0123456789abcdef" * 4)
                  for i in range(znodes)]:
            p.get(timeout=30)
        start_at = time.time() + 3.0 + 0.5 * processes
        for _ in range(processes):
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "zkconsumer.calibration.reader_child", zk_connect, base,
                 str(znodes), str(clients), str(window), repr(start_at), repr(burst_s)],
                stdout=subprocess.PIPE, text=True))
        for proc in procs:
            if proc.stdout is None or proc.stdout.readline().strip() != "ready":
                raise RuntimeError("a reader process did not connect")
        while time.time() < start_at:
            time.sleep(0.002)
        before = parse_mntr(mntr())  # type: ignore[operator]
        cpu0 = process_cpu_s(server_pid) if server_pid else None
        wall0 = time.perf_counter()
        completed = 0
        for proc in procs:
            assert proc.stdout is not None
            completed += int(proc.stdout.readline().strip() or 0)
        wall = time.perf_counter() - wall0
        cpu = process_cpu_s(server_pid) - cpu0 if server_pid and cpu0 is not None else None
        after = parse_mntr(mntr())  # type: ignore[operator]
        reads, rate, latency, service = service_from(before, after, cpu, wall)
        log.info("read burst: %d reads served (%d completed by the clients) in %.2f s, "
                 "server CPU %s s", reads, completed, wall, cpu)
        return ReadService(processes=processes, clients=processes * clients, window=window,
                           burst_s=burst_s, reads_served=reads, reads_per_s=round(rate, 1),
                           server_latency_avg_ms=round(latency, 3),
                           server_cpu_s=None if cpu is None else round(cpu, 3),
                           service_us=None if service is None else round(service, 2),
                           loadavg=tuple(round(x, 2) for x in os.getloadavg()))
    finally:
        for proc in procs:
            proc.wait(60)
        try:
            owner.delete(base, recursive=True)
        finally:
            owner.stop()
            owner.close()

