"""What a compare experiment asks for (ExperimentSpec) and one run of it (RunSpec).

Plain dataclasses so the CLI, the Spark jobs and the tests build the same objects; what a run
found is the lab's :class:`~zkconsumer.lab.runs.RunResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from zkconsumer.scenarios.protocols import EVENTS, LAB
from zkconsumer.scenarios.timing import Timing

# The protocols the lab runs, in the protocol table's order (the CLI's choices).
PROTOCOLS = LAB


@dataclass(frozen=True)
class ExperimentSpec:
    """The matrix ``protocols x events x repeats`` on one topic shape.

    ``zk_connect``/``bootstrap`` name servers someone else runs (tests, Spark); when both are
    None the runner starts embedded ones for the duration of the experiment. ``broker`` is then
    the broker it starts (``tansu``, ``kafka``, ``kafka:DIR``; None: ``ZKCONSUMER_BOOTSTRAP``
    decides, Tansu by default).
    """

    protocols: tuple[str, ...] = ("zk-range", "eager-range", "cooperative-sticky")
    events: tuple[str, ...] = ("join", "leave", "crash")
    members: int = 4
    partitions: int = 8
    repeat: int = 1
    processes: bool = False
    out_dir: str | None = None
    zk_connect: str | None = None
    bootstrap: str | None = None
    timing: Timing = field(default_factory=Timing)
    seed: int = 1
    broker: str | None = None
    progress: bool = False
    parallel: int = 1  # cells run at once; > 1 only for a quick look (timings disturb each other)

    def validate(self) -> None:
        hb = self.timing.consumer_heartbeat_interval_ms
        if hb is not None and not 0 < hb < self.timing.session_timeout_ms:
            raise ValueError(f"the consumer heartbeat interval must be between 0 and the session "
                             f"timeout ({self.timing.session_timeout_ms} ms), got {hb}")
        if self.parallel < 1:
            raise ValueError(f"--parallel must be >= 1, got {self.parallel}")
        unknown = [p for p in self.protocols if p not in PROTOCOLS]
        if unknown:
            raise ValueError(f"unknown protocol(s) {unknown}; choose from {list(PROTOCOLS)}")
        bad = [e for e in self.events if e not in EVENTS]
        if bad:
            raise ValueError(f"unknown event(s) {bad}; choose from {list(EVENTS)}")
        if self.members < 1:
            raise ValueError(f"--members must be >= 1, got {self.members}")
        if self.partitions < 1:
            raise ValueError(f"--partitions must be >= 1, got {self.partitions}")
        if self.repeat < 1:
            raise ValueError(f"--repeat must be >= 1, got {self.repeat}")
        if "leave" in self.events or "crash" in self.events:
            if self.members < 2:
                raise ValueError("leave and crash need --members >= 2 (someone must take over)")

    def runs(self) -> list[RunSpec]:
        return [RunSpec(protocol=p, event=e, repeat=r)
                for r in range(self.repeat) for e in self.events for p in self.protocols]


@dataclass(frozen=True)
class RunSpec:
    protocol: str
    event: str
    repeat: int

    @property
    def label(self) -> str:
        return f"{self.protocol}/{self.event}/r{self.repeat}"

    @property
    def slug(self) -> str:
        return f"{self.protocol}-{self.event}-r{self.repeat}"
