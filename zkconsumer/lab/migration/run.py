"""The migration to broker coordination, run live: a legacy group under steady production is moved
to a broker-side group, by the documented procedure or by the naive switch, and the lab measures
what operators feared.

Plans (each step waits until the group has settled, read from the members' records):

* ``documented``: start the group on ZooKeeper offsets (``zk-range``); roll every member to
  ``offsets.storage=kafka`` with dual commit (``zk-range-kafka-dual``); roll again without dual
  commit (``zk-range-kafka``); stop every ZooKeeper member, then start broker-coordinated members
  (confluent-kafka, ``eager-range``) with the same group id: they find the offsets the legacy
  members committed to the broker.
* ``naive``: start on ZooKeeper offsets, stop every member, start broker-coordinated members
  with ``auto.offset.reset=earliest`` and no offsets in the broker.

Measured per run: messages lost (acknowledged by the broker, never delivered: must be 0),
duplicates per phase and their cause, partition-seconds with no member fetching, the time each
phase took; for the switch, how far behind the old group's consumption the new group started
(``rewind``: the duplicates a start position explains).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from zkconsumer.admin import create_topic
from zkconsumer.lab.group import LabGroup, member_name
from zkconsumer.lab.intervals import build_intervals
from zkconsumer.lab.metrics import EventWindow, lost, partition_seconds_unavailable
from zkconsumer.lab.producer import SteadyProducer
from zkconsumer.lab.records import Delivery, RunRecords, Timeline
from zkconsumer.scenarios.timing import Timing

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Step:
    """One phase: ``start`` the group, ``roll`` it member by member, or ``switch`` it (stop all,
    then start all) to ``protocol``."""

    phase: str
    how: str
    protocol: str


PLANS: dict[str, tuple[Step, ...]] = {
    "documented": (Step("zookeeper", "start", "zk-range"),
                   Step("dual-commit", "roll", "zk-range-kafka-dual"),
                   Step("kafka", "roll", "zk-range-kafka"),
                   Step("broker-group", "switch", "eager-range")),
    "naive": (Step("zookeeper", "start", "zk-range"),
              Step("broker-group", "switch", "eager-range")),
}

#: What explains the redeliveries of a phase.
CAUSES = {
    "start": "none expected (first start)",
    "roll": "consumed after a member's last commit, redelivered to the partition's next owner",
    "switch": "the new group started behind what the old group had consumed (rewind); the "
              "rest are redeliveries between the new group's own first rebalances",
}


@dataclass(frozen=True)
class MigrationSpec:
    plan: str = "documented"
    members: int = 3
    partitions: int = 6
    timing: Timing = field(default_factory=lambda: Timing(
        session_timeout_ms=6000, rebalance_backoff_ms=1000, auto_commit_interval_ms=1000,
        quiet_s=2.0, produce_rate=30.0))
    settle_deadline_s: float = 90.0
    # The group runs this long after each step settled, before the next: a group in production
    # has a history when it is moved (the naive switch re-reads it).
    dwell_s: float = 5.0
    tail_s: float = 4.0  # production after the last phase settled, before draining

    def validate(self) -> None:
        if self.plan not in PLANS:
            raise ValueError(f"unknown plan {self.plan!r}; choose from {sorted(PLANS)}")
        if self.members < 1 or self.partitions < self.members:
            raise ValueError(f"need 1 <= members <= partitions, got members={self.members}, "
                             f"partitions={self.partitions}")


@dataclass(frozen=True)
class PhaseResult:
    """``seconds``: from the step's start until the group settled; duplicates and unfetched
    time cover the whole phase, the dwell after settling included."""

    phase: str
    how: str
    protocol: str
    seconds: float
    duplicates: int
    cause: str
    partition_seconds_unfetched: float


@dataclass(frozen=True)
class MigrationResult:
    plan: str
    members: int
    partitions: int
    produced: int
    delivered_distinct: int
    lost: int
    duplicates: int
    rewind: int
    phases: list[PhaseResult]
    dwell_s: float = 0.0
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class MigrationError(Exception):
    """The group did not settle (or drain) within its deadline; the run is not measured."""


# --- pure measurements ------------------------------------------------------------------------


def duplicates_between(deliveries: Iterable[Delivery], start: float, end: float) -> int:
    """Redeliveries whose second (or later) delivery happened in ``[start, end)``."""
    seen: set[tuple[int, int]] = set()
    dups = 0
    for d in sorted(deliveries, key=lambda d: d.ts):
        key = (d.partition, d.offset)
        if key in seen and start <= d.ts < end:
            dups += 1
        seen.add(key)
    return dups


def rewind(deliveries: Iterable[Delivery], switch_at: float) -> int:
    """Messages the new group re-read because it started behind the old group: per partition,
    the old group's next offset minus the first offset the new group delivered, if positive."""
    before: dict[int, int] = {}
    first_after: dict[int, int] = {}
    for d in deliveries:
        if d.ts < switch_at:
            before[d.partition] = max(before.get(d.partition, -1), d.offset + 1)
        else:
            first_after[d.partition] = min(first_after.get(d.partition, d.offset), d.offset)
    return sum(max(0, before[p] - first_after[p]) for p in first_after if p in before)


def phase_results(records: RunRecords, partitions: int, steps: Sequence[Step],
                  bounds: Sequence[tuple[float, float, float]], until: float
                  ) -> list[PhaseResult]:
    """``bounds``: per step (start, settled, end of the phase)."""
    intervals = build_intervals(records, until, Timeline.FETCHING)
    out = []
    for step, (start, settled, end) in zip(steps, bounds, strict=True):
        out.append(PhaseResult(
            phase=step.phase, how=step.how, protocol=step.protocol,
            seconds=round(settled - start, 3),
            duplicates=duplicates_between(records.deliveries, start, end),
            cause=CAUSES[step.how],
            partition_seconds_unfetched=partition_seconds_unavailable(
                intervals, partitions, EventWindow(start, end, ()))))
    return out


# --- the run ----------------------------------------------------------------------------------


def _settle(group: LabGroup, spec: MigrationSpec, what: str) -> float:
    settled = group.wait_settled(spec.settle_deadline_s)
    if settled is None:
        raise MigrationError(f"{what}: the group did not settle within "
                             f"{spec.settle_deadline_s:.0f} s")
    return settled


def _apply(group: LabGroup, step: Step, spec: MigrationSpec) -> None:
    names = [member_name(i) for i in range(spec.members)]
    if step.how == "switch":
        group.stop_all()
    group.protocol = step.protocol
    if step.how in ("start", "switch"):
        for name in names:
            group.spawn(name)
        _settle(group, spec, f"{step.phase}: {step.how}")
        return
    for name in names:  # roll: one member at a time, the group settling in between
        group.stop(name)
        group.spawn(name)
        _settle(group, spec, f"{step.phase}: restarting {name}")


def run_migration(spec: MigrationSpec, zk_connect: str, bootstrap: str, work_dir: Path
                  ) -> MigrationResult:
    """One run of ``spec.plan`` on a fresh topic and group; records go under ``work_dir``."""
    spec.validate()
    steps = PLANS[spec.plan]
    tag = uuid.uuid4().hex[:8]
    topic, group_id = f"migrate-{tag}", f"migrate-{spec.plan}-{tag}"
    create_topic(zk_connect, topic, spec.partitions, bootstrap=bootstrap)
    group = LabGroup(protocol=steps[0].protocol, topic=topic, group=group_id,
                     partitions=spec.partitions, zk_connect=zk_connect, bootstrap=bootstrap,
                     timing=spec.timing, records_dir=work_dir / tag, processes=False)
    producer = SteadyProducer(bootstrap, topic, spec.partitions, spec.timing.produce_rate)
    producer.start()
    bounds: list[tuple[float, float, float]] = []
    try:
        for step in steps:
            start = time.time()
            _apply(group, step, spec)
            settled = time.time()
            log.info("%s: phase %s settled in %.1f s", group_id, step.phase, settled - start)
            time.sleep(spec.dwell_s)
            bounds.append((start, settled, time.time()))
        time.sleep(spec.tail_s)
        producer.stop()
        produced = producer.produced
        wanted = {(p.partition, p.offset) for p in produced}
        deadline = time.monotonic() + spec.timing.drain_deadline_s
        while not wanted <= group.delivered() and time.monotonic() < deadline:
            time.sleep(0.25)
        drained = time.time()
    finally:
        producer.stop()
        group.stop_all()
    records = group.records
    missing = lost(records, produced)
    switch_at = next((b[0] for st, b in zip(steps, bounds, strict=True)
                      if st.how == "switch"), drained)
    phases = phase_results(records, spec.partitions, steps, bounds, drained)
    return MigrationResult(
        plan=spec.plan, members=spec.members, partitions=spec.partitions,
        produced=len(produced),
        delivered_distinct=len({(d.partition, d.offset) for d in records.deliveries}),
        lost=len(missing), duplicates=duplicates_between(records.deliveries, 0.0, drained + 1),
        rewind=rewind(records.deliveries, switch_at), phases=phases, dwell_s=spec.dwell_s)
