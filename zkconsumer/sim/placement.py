"""Where the members' client CPU runs: members grouped into processes, processes onto cores.

A member's client work (a request's Python side, the assignor) runs in the process hosting it.
A CPython process executes one thread's bytecode at a time (the GIL), so the members of one
process do their CPU work one at a time: each process is a single server for its members'
jobs, first come first served. The processes share the host's cores: a process with work runs
only while it holds a core, and waiting processes get the next free core in the order they
asked. When the ZooKeeper server runs on the same host (the real runs here start it beside the
members), its read service is one more process on those cores.

Two placements matter, and they are the same model:

* **one host per member** (:data:`PER_MEMBER`, ``Placement()``): every member has a process
  and a core of its own and the servers run elsewhere; what a deployment of thousands of
  consumers looks like, and what the extrapolation to N = 10,000 assumes;
* **this machine's** (:func:`here`): the real sweeps' placement, N members spread over the
  Spark tasks' Python processes (member ``i`` in process ``i % tasks``) on the host's cores,
  ZooKeeper and the broker on the same cores. The real sweeps record theirs
  (:func:`recorded`), so a simulated cell can take the placement of the run it is compared
  with.

:class:`ProcessCpu` and :class:`CorePool` are the discrete version the herd engine's members
run their CPU work on; :func:`cpu_shares` is the same rule in rates, for the compact
split-brain model that computes a request's duration when it starts. Both are deterministic:
no randomness and no wall clock here.
"""

from __future__ import annotations

import logging
import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zkconsumer.sim.engine import Callback, Engine

log = logging.getLogger(__name__)

HERE_CORES = 2            # the reference machine's cores (environment: 2 cores)
HERE_TASKS = 2            # the real sweeps' default --tasks
PLACEMENT_CHOICES = "here | per-member | PROCESSESxCORES (e.g. 2x2)"
_SPEC = re.compile(r"^(\d+)x(\d+)$")


@dataclass(frozen=True)
class Placement:
    """Members per process and the cores the processes share; ``Placement()`` is one host each.

    ``processes``: the members each process hosts (its length is the process count); a member
    beyond their sum (a joiner) goes to process ``index % len(processes)``. ``cores``: the
    cores every process of the placement shares. ``servers_on_cores``: the ZooKeeper server
    (and the broker) run on those cores too. ``name`` is the option it came from.
    """

    processes: tuple[int, ...] = ()
    cores: int = 0
    servers_on_cores: bool = False
    name: str = "per-member"

    def __post_init__(self) -> None:
        object.__setattr__(self, "processes", tuple(int(n) for n in self.processes))
        if not self.processes:
            if self.cores or self.servers_on_cores:
                raise ValueError("a placement of one host per member has no shared cores or "
                                 f"servers on them, got cores={self.cores}, "
                                 f"servers_on_cores={self.servers_on_cores}")
            return
        if any(n < 0 for n in self.processes):
            raise ValueError(f"members per process must be >= 0, got {self.processes}")
        if self.cores < 1:
            raise ValueError(f"a placement with processes needs cores >= 1, got {self.cores}")

    @property
    def per_member(self) -> bool:
        """Every member on a host of its own (no process or core shared)."""
        return not self.processes

    def process_of(self, index: int) -> int:
        """The process hosting the member started ``index``-th (0-based), by the real jobs'
        rule: member ``i`` in task ``i % tasks``; one host per member: its own."""
        if self.per_member:
            return index
        return index % len(self.processes)

    def members_per_process(self) -> int:
        """Members in the fullest process (1 for one host per member)."""
        return max(self.processes, default=1) or 1

    def label(self) -> str:
        """What the placement is, in words (the figures' captions say it)."""
        if self.per_member:
            return "one host per member (a process and a core each; servers elsewhere)"
        sizes = "+".join(str(n) for n in self.processes)
        servers = ", ZooKeeper and the broker on the same cores" if self.servers_on_cores \
            else ", servers elsewhere"
        return (f"{sum(self.processes)} members in {len(self.processes)} processes ({sizes}) "
                f"on {self.cores} cores{servers}")

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "processes": list(self.processes), "cores": self.cores,
                "servers_on_cores": self.servers_on_cores}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Placement:
        return cls(processes=tuple(data.get("processes", ())), cores=int(data.get("cores", 0)),
                   servers_on_cores=bool(data.get("servers_on_cores", False)),
                   name=str(data.get("name", "recorded")))


PER_MEMBER = Placement()


def spread(members: int, processes: int) -> tuple[int, ...]:
    """Members per process when member ``i`` lives in process ``i % processes``."""
    if processes < 1:
        raise ValueError(f"processes must be >= 1, got {processes}")
    processes = min(processes, max(1, members))
    return tuple(len(range(k, members, processes)) for k in range(processes))


def here(members: int, tasks: int = HERE_TASKS, cores: int = HERE_CORES) -> Placement:
    """The real sweeps' placement on this machine: ``members`` over ``tasks`` processes on
    ``cores`` cores, ZooKeeper and the broker on the same cores."""
    return Placement(spread(members, tasks), cores=cores, servers_on_cores=True, name="here")


def parse_placement(spec: str, members: int, tasks: int = HERE_TASKS,
                    cores: int = HERE_CORES) -> Placement:
    """``here``, ``per-member`` or ``PROCESSESxCORES`` (members spread over that many
    processes on that many cores of one host, the servers on them too) for ``members``."""
    text = spec.strip().lower()
    if text == "per-member":
        return PER_MEMBER
    if text == "here":
        return here(members, tasks, cores)
    match = _SPEC.match(text)
    if match is None:
        raise ValueError(f"placement must be {PLACEMENT_CHOICES}, got {spec!r}")
    processes, n_cores = int(match.group(1)), int(match.group(2))
    if processes < 1 or n_cores < 1:
        raise ValueError(f"placement {spec!r}: processes and cores must be >= 1")
    return Placement(spread(members, processes), cores=n_cores, servers_on_cores=True,
                     name=text)


def recorded(data: Mapping[str, Any]) -> Placement:
    """The placement a real run recorded (its row's or window's ``placement``)."""
    return Placement.from_json(data)


# --- the discrete model: processes queue for cores -------------------------------------------

class CorePool:
    """``cores`` cores; a process asks for one and gets it now or when one is freed (FIFO)."""

    def __init__(self, engine: Engine, cores: int) -> None:
        if cores < 1:
            raise ValueError(f"cores must be >= 1, got {cores}")
        self._engine = engine
        self._free = cores
        self._waiting: deque[ProcessCpu] = deque()

    def request(self, process: ProcessCpu) -> None:
        if self._free > 0:
            self._free -= 1
            process.granted()
        else:
            self._waiting.append(process)

    def release(self) -> None:
        if self._waiting:
            self._waiting.popleft().granted()
        else:
            self._free += 1


class ProcessCpu:
    """One process: its members' CPU jobs one at a time, in order (the GIL), each on a core.

    A job holds the core for its whole length; between two jobs the process gives the core
    back and queues again behind processes already waiting, so processes take turns job by
    job. Implements :class:`zkconsumer.sim.engine.Cpu`.
    """

    def __init__(self, engine: Engine, pool: CorePool) -> None:
        self._engine = engine
        self._pool = pool
        self._jobs: deque[tuple[float, Callback, tuple[Any, ...]]] = deque()
        self._asked = False

    def run(self, work_s: float, fn: Callback, *args: Any) -> None:
        self._jobs.append((work_s, fn, args))
        if not self._asked:
            self._asked = True
            self._pool.request(self)

    def granted(self) -> None:
        self._engine.after(self._jobs[0][0], self._done)

    def _done(self) -> None:
        _, fn, args = self._jobs.popleft()
        self._pool.release()
        if self._jobs:
            self._pool.request(self)
        else:
            self._asked = False
        fn(*args)


class PlacedCpus:
    """The CPUs of one placement for one simulated group: one :class:`ProcessCpu` per process
    on a shared :class:`CorePool`, the server's process on it too when the placement says so.
    ``None`` from :meth:`member`/:meth:`server` means "not placed": the caller keeps its
    dedicated CPU (one host per member) or its own server model."""

    def __init__(self, engine: Engine, placement: Placement) -> None:
        self.placement = placement
        self._processes: list[ProcessCpu] = []
        self._server: ProcessCpu | None = None
        if not placement.per_member:
            pool = CorePool(engine, placement.cores)
            self._processes = [ProcessCpu(engine, pool) for _ in placement.processes]
            if placement.servers_on_cores:
                self._server = ProcessCpu(engine, pool)

    @property
    def processes(self) -> list[ProcessCpu]:
        """One CPU per process, in process order (empty for one host per member)."""
        return list(self._processes)

    def member(self, index: int) -> ProcessCpu | None:
        if not self._processes:
            return None
        return self._processes[self.placement.process_of(index)]

    def server(self) -> ProcessCpu | None:
        return self._server


# --- the same rule in rates, for models that time a request when it starts --------------------

def cpu_shares(placement: Placement, busy: Mapping[int, int] | Sequence[int],
               server_busy: bool) -> tuple[dict[int, float], float]:
    """(per busy process: the fraction of a core it gets, the server's fraction).

    The busy processes (and the server when it is busy and on the cores) share ``cores``
    cores, none getting more than one (a process runs one thread at a time); a process's
    members split its fraction among those busy (one request at a time), so a busy member's
    CPU work takes ``work * busy members / fraction``. One host per member: every process and
    the server get a whole core. ``busy`` maps a process to its members doing CPU work now.
    """
    items = busy.items() if isinstance(busy, Mapping) else enumerate(busy)
    active = [p for p, n in items if n > 0]
    if placement.per_member:
        return dict.fromkeys(active, 1.0), 1.0
    contenders = len(active) + (1 if server_busy and placement.servers_on_cores else 0)
    share = min(1.0, placement.cores / contenders) if contenders else 1.0
    return dict.fromkeys(active, share), share if placement.servers_on_cores else 1.0
