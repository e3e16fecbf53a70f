"""What a chaos soak runs (ChaosSpec) and what it found (ChaosReport), and the final tally.

The tally reads only the members' record files and the producer's acknowledgements, so a
report can be recomputed from a run directory after the fact.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from zkconsumer.lab.chaos.accounting import (
    all_deliveries,
    consumption,
    event_totals,
    read_members,
)
from zkconsumer.lab.chaos.schedule import Action, ScheduleParams, build_schedule

log = logging.getLogger(__name__)


class ChaosError(Exception):
    """The run could not get going (servers, or a group that never formed)."""


@dataclass(frozen=True)
class ChaosSpec:
    """What to run. The schedule is a function of ``seed``, ``duration_s``, ``members`` and the
    session timeout only; the same spec replays the same faults in the same order."""

    duration_s: float = 120.0
    members: int = 6
    partitions: int = 24
    seed: int = 1
    session_timeout_ms: int = 4000
    rate: float = 50.0                  # records per second during the chaos
    keys: int = 0                       # 0: two keys per partition
    mean_gap_s: float = 3.0             # between two actions
    quiet_s: float = 2.0                # settled = the same good picture for this long
    formation_deadline_s: float = 60.0
    settle_deadline_s: float = 90.0
    drain_deadline_s: float = 60.0
    session_lost_policy: str = "legacy"
    out_dir: str | None = None
    original_members: int = 0           # of ``members``, original 0.10.2 members (JVMs)
    kafka_home: str | None = None       # a Kafka directory: its broker instead of Tansu

    def validate(self) -> None:
        if self.duration_s <= 0:
            raise ValueError(f"duration must be > 0 s, got {self.duration_s}")
        if self.members < 1 or self.partitions < 1:
            raise ValueError(f"members and partitions must be >= 1, got {self.members}, "
                             f"{self.partitions}")
        if self.rate <= 0:
            raise ValueError(f"rate must be > 0, got {self.rate}")
        if not 0 <= self.original_members <= self.members:
            raise ValueError(f"original members must be between 0 and the members "
                             f"({self.members}), got {self.original_members}")
        if self.original_members and not self.kafka_home:
            raise ValueError(f"{self.original_members} original members need a Kafka 0.10.2 "
                             "directory with the member driver (a kafka:DIR broker)")

    def kind_of(self, name: str) -> str:
        """``original`` or ``zkconsumer``: see :func:`member_kind`."""
        return member_kind(int(name.lstrip("m")), self.members, self.original_members)

    @property
    def schedule_params(self) -> ScheduleParams:
        return ScheduleParams(session_timeout_s=self.session_timeout_ms / 1000.0,
                              mean_gap_s=self.mean_gap_s)

    def schedule(self) -> list[Action]:
        return build_schedule(self.seed, self.duration_s, self.members, self.schedule_params)


ORIGINAL = "original"
ZKCONSUMER = "zkconsumer"


def member_kind(index: int, members: int, originals: int) -> str:
    """The kind of the member named ``member_name(index)``: ``originals`` of every ``members``
    consecutive names are original, spread evenly (initial members and later joins alike), so
    the group keeps its mix as the schedule replaces members."""
    if originals <= 0:
        return ZKCONSUMER
    i = index % members
    return ORIGINAL if (i + 1) * originals // members > i * originals // members else ZKCONSUMER


@dataclass
class ChaosReport:
    seed: int
    duration_s: float
    members: int
    partitions: int
    session_timeout_ms: int
    produced: int = 0
    consumed_unique: int = 0
    lost: int = 0
    duplicates: int = 0
    unexpected: int = 0
    rebalances: int = 0
    failed_rebalances: int = 0
    failed_attempts: int = 0
    verify_ok: bool = False
    verify_violations: list[dict[str, Any]] = field(default_factory=list)
    stray_znodes: int = -1
    stray_paths: list[str] = field(default_factory=list)
    settled: bool = False
    drained: bool = False
    actions: dict[str, int] = field(default_factory=dict)            # scheduled, by kind
    actions_executed: dict[str, int] = field(default_factory=dict)   # done, by kind
    action_errors: list[str] = field(default_factory=list)
    actions_skipped: list[str] = field(default_factory=list)  # aimed at members already exited
    members_final: list[str] = field(default_factory=list)
    member_incarnations: int = 0
    member_errors: list[str] = field(default_factory=list)
    producer_errors: list[str] = field(default_factory=list)
    lost_sample: list[str] = field(default_factory=list)
    zk_leaders_killed: list[int] = field(default_factory=list)
    zk_servers_serving: int = 0     # after the faults were healed, of 3
    broker_reregistrations: int = 0  # see broker_keeper.py
    phases_s: dict[str, float] = field(default_factory=dict)
    records_dir: str = ""
    original_members: int = 0
    broker: str = ""
    member_kinds: dict[str, str] = field(default_factory=dict)   # every incarnation's kind
    settles: int = 0                # settled pictures seen during the chaos (settle.py)
    settles_one_live_owner: int = 0  # ... with every partition owned by one live member
    early_leaves: list[str] = field(default_factory=list)  # originals gone before their leave

    @property
    def ok(self) -> bool:
        return (self.lost == 0 and self.verify_ok and self.stray_znodes == 0 and self.settled
                and self.drained)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


def tally(report: ChaosReport, produced: list[tuple[str, int]], records: Path) -> None:
    """Fill ``report`` with what the members' files say: lost, duplicated, rebalances, errors."""
    logs = read_members(records)
    result = consumption(produced, all_deliveries(logs))
    report.produced, report.consumed_unique = result.produced, result.consumed_unique
    report.lost, report.duplicates = result.lost, result.duplicates
    report.unexpected = result.unexpected
    report.lost_sample = [f"{k}:{s}" for k, s in result.lost_sample]
    events = event_totals(logs)
    report.rebalances = events["rebalance_succeeded"]
    report.failed_rebalances = events["rebalance_failed"]
    report.failed_attempts = events["attempt_failed"]
    report.member_incarnations = len(logs)
    report.member_errors += [f"{m.name}: {e}" for m in logs for e in m.errors][:20]
