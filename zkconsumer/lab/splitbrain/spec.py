"""What a split-brain experiment asks for: one scenario, several protocols, one group shape.

Kept apart from the compare experiment's :class:`~zkconsumer.lab.compare.spec.ExperimentSpec`
because the knobs are the fault's (how late, how long, how many members lag), not a membership
event's; the results are the lab's ordinary :class:`~zkconsumer.lab.runs.RunResult` rows with
``scenario`` and ``params`` filled in, so they share ``results.json`` and the report code.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from zkconsumer.lab.compare.spec import PROTOCOLS
from zkconsumer.scenarios.timing import Timing

SCENARIOS = ("stale-view", "zombie", "failover")
SCENARIO = "split-brain"

# A split-brain run must outlast a session timeout and a few rebalances, not more.
DEFAULT_TIMING = Timing(session_timeout_ms=4000, rebalance_backoff_ms=1000,
                        rebalance_max_retries=10, auto_commit_interval_ms=500, quiet_s=2.5,
                        formation_deadline_s=60.0, event_deadline_s=60.0,
                        drain_deadline_s=30.0, produce_rate=40.0)


@dataclass(frozen=True)
class SplitBrainSpec:
    """One scenario against ``protocols``, ``repeat`` times each.

    - ``delay_ms`` (stale view): server→client delay of the lagging members' connection to
      their coordination server; None = 60 % of ``rebalance.backoff.ms``.
    - ``lagging`` (stale view): how many of the ``members`` lag (the last ones: in a range
      assignment a newcomer takes its partitions from the end); None = half, at least one.
    - ``joins`` (stale view): newcomers that join one after another, ``join_gap_s`` apart, while
      the lagging members still read an old view (None gap = the delay).
    - ``overlap_s`` (zombie): how long the paused member stays paused once another member has
      taken over its partitions, so both fetch for a while.
    """

    scenario: str
    protocols: tuple[str, ...] = ("zk-range", "eager-range", "cooperative-sticky")
    members: int = 4
    partitions: int = 8
    repeat: int = 1
    out_dir: str | None = None
    zk_connect: str | None = None
    bootstrap: str | None = None
    timing: Timing = field(default_factory=lambda: DEFAULT_TIMING)
    delay_ms: float | None = None
    lagging: int | None = None
    joins: int = 2
    join_gap_s: float | None = None
    overlap_s: float = 2.0
    progress: bool = False
    broker: str | None = None  # the broker started for the runs (tansu, kafka, kafka:DIR)

    def validate(self) -> None:
        hb = self.timing.consumer_heartbeat_interval_ms
        if hb is not None and not 0 < hb < self.timing.session_timeout_ms:
            raise ValueError(f"--consumer-heartbeat-ms must be between 0 and the session "
                             f"timeout ({self.timing.session_timeout_ms} ms), got {hb}")
        if self.scenario not in SCENARIOS:
            raise ValueError(f"unknown scenario {self.scenario!r}; choose from {list(SCENARIOS)}")
        unknown = [p for p in self.protocols if p not in PROTOCOLS]
        if unknown or not self.protocols:
            raise ValueError(f"unknown protocol(s) {unknown}; choose from {list(PROTOCOLS)}")
        if self.members < 2:
            raise ValueError(f"--members must be >= 2 (a split needs two sides), got "
                             f"{self.members}")
        if self.partitions < self.members:
            raise ValueError(f"--partitions ({self.partitions}) must be >= --members "
                             f"({self.members}) so every member owns something to fight over")
        if self.repeat < 1:
            raise ValueError(f"--repeat must be >= 1, got {self.repeat}")
        if self.delay_ms is not None and self.delay_ms < 0:
            raise ValueError(f"--delay-ms must be >= 0, got {self.delay_ms}")
        if self.lagging is not None and not 1 <= self.lagging <= self.members:
            raise ValueError(f"--lagging must be in 1..{self.members}, got {self.lagging}")
        if self.joins < 1:
            raise ValueError(f"--joins must be >= 1, got {self.joins}")

    @property
    def effective_delay_ms(self) -> float:
        if self.delay_ms is not None:
            return self.delay_ms
        return 0.6 * self.timing.rebalance_backoff_ms

    @property
    def effective_lagging(self) -> int:
        return self.lagging if self.lagging is not None else max(1, self.members // 2)

    @property
    def effective_join_gap_s(self) -> float:
        if self.join_gap_s is not None:
            return self.join_gap_s
        return self.effective_delay_ms / 1000.0

    def params(self) -> dict[str, Any]:
        """The scenario's own knobs, stored with every run (``RunResult.params``)."""
        base: dict[str, Any] = {"members": self.members, "partitions": self.partitions,
                                "session_timeout_ms": self.timing.session_timeout_ms,
                                "rebalance_backoff_ms": self.timing.rebalance_backoff_ms,
                                "rebalance_max_retries": self.timing.rebalance_max_retries}
        if self.scenario == "stale-view":
            base.update(delay_ms=self.effective_delay_ms, lagging=self.effective_lagging,
                        joins=self.joins, join_gap_s=self.effective_join_gap_s)
        elif self.scenario == "zombie":
            base.update(overlap_s=self.overlap_s)
        elif self.scenario == "failover":
            base.update(ensemble_size=3)
        return base

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["protocols"] = list(self.protocols)
        return doc
