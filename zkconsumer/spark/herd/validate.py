"""The simulator against real runs: same cells, same settings, the herd metrics side by side.

For every (protocol, N, P, event) a real-mode sweep measured, the simulator runs ``seeds``
seeds with the real run's session timeout, the lab's rebalance backoff, retries, heartbeat
interval and produce rate, the lab's member naming (start order; the first member is the
victim), the real request counts' sampling margins, and the real placement of members
(``tasks`` client processes sharing their CPUs, each request's client CPU scaled by the
calibration's crowded-process factor: ``SimConfig.client_cpu_scale``), and the medians are
compared against the real medians with the tolerances the simulator is held to, fixed in
``results/scale/validation-plan.json`` before the runs were made (:class:`Tolerances`):

- requests per event within 10%;
- rebalance attempts (the most attempts one member made) equal;
- time to stable within 20% (and a majority of the real runs settled).

Cells are keyed by (protocol, N, P, event, session timeout).
"""

from __future__ import annotations

import csv
import logging
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zkconsumer.lab.member_config import lab_consumer_timeout_ms, lab_heartbeat_interval_ms
from zkconsumer.scenarios.timing import Timing
from zkconsumer.sim import PROTOCOLS, Calibration, SimConfig, simulate
from zkconsumer.sim.formation import lab_event_after_change_s
from zkconsumer.spark.herd.metrics import SAMPLE_AFTER_S
from zkconsumer.tables import median, relative_error

log = logging.getLogger(__name__)



@dataclass(frozen=True)
class Tolerances:
    """How far a simulated median may be from the real one (fixed before the runs are seen:
    ``results/scale/validation-plan.json``)."""

    requests: float = 0.10
    attempts: float = 0.0
    time_to_stable: float = 0.20

    @classmethod
    def from_plan(cls, plan: dict[str, Any]) -> Tolerances:
        t = plan.get("tolerances")
        if not isinstance(t, dict) or set(t) != {"requests", "attempts", "time_to_stable"}:
            raise ValueError(f"validation plan: 'tolerances' must give requests, attempts and "
                             f"time_to_stable, got {t!r}")
        return cls(float(t["requests"]), float(t["attempts"]), float(t["time_to_stable"]))

    def describe(self) -> str:
        attempts = "equal" if self.attempts == 0 else f"±{self.attempts:g}"
        return (f"requests ±{self.requests:.0%}, attempts {attempts}, time to stable "
                f"±{self.time_to_stable:.0%}")


PLAN_TOLERANCES = Tolerances()
# The lab names its members m00000, m00001, ... in start order, and the joiner of a join is
# the next one, so ids sort in start order; the victim of a crash or leave is m00000, rank 0
# (``zkconsumer.spark.herd.task.RealCell``).
LAB_MEMBER_ORDER = "start"
LAB_VICTIM_RANK = 0


def lab_first_candidate_rank(tasks: int) -> int:
    """Who stands first in a leader-mode election of the lab's Spark herd: task 0 coordinates
    the run (it hosts the joiner and the victim, m00000) and its members connect some 15-30 ms
    after the other tasks' (the records' ``session_CONNECTED``), so with two tasks or more the
    first member of task 1, m00001 (rank 1), leads; one task: m00000."""
    return 1 if tasks >= 2 else 0


@dataclass(frozen=True)
class Check:
    """One cell: real and simulated medians, and whether each is within tolerance."""

    protocol: str
    members: int
    partitions: int
    event: str
    real_runs: int
    real_requests: float
    sim_requests: float
    real_attempts: float
    sim_attempts: float
    real_tts: float | None
    sim_tts: float | None
    tolerances: Tolerances = PLAN_TOLERANCES
    session_timeout_ms: int = 0
    real_settled: int = 0  # real runs that settled (have a time to stable)

    @property
    def requests_error(self) -> float:
        return abs(self.sim_requests - self.real_requests) / max(self.real_requests, 1.0)

    @property
    def requests_ok(self) -> bool:
        return self.requests_error <= self.tolerances.requests + 1e-12

    @property
    def attempts_ok(self) -> bool:
        return abs(self.sim_attempts - self.real_attempts) <= self.tolerances.attempts

    @property
    def tts_error(self) -> float | None:
        if self.real_tts is None or self.sim_tts is None:
            return None
        return abs(self.sim_tts - self.real_tts) / max(self.real_tts, 1e-3)

    @property
    def tts_ok(self) -> bool:
        if 2 * self.real_settled < self.real_runs + 1 and self.real_runs > 1:
            return False  # fewer than a majority of the real runs settled
        if self.real_tts is None or self.sim_tts is None:
            return self.real_tts is None and self.sim_tts is None
        err = self.tts_error
        return err is not None and err <= self.tolerances.time_to_stable + 1e-12

    @property
    def flags(self) -> str:
        """Which checks failed: R(equests), A(ttempts), T(ime to stable)."""
        return "".join(("" if self.requests_ok else "R", "" if self.attempts_ok else "A",
                        "" if self.tts_ok else "T"))

    @property
    def ok(self) -> bool:
        return self.requests_ok and self.attempts_ok and self.tts_ok


def load_real_rows(out_dir: Path) -> list[dict[str, Any]]:
    """The ``mode == real`` rows of a sweep's ``sweep.csv``."""
    path = out_dir / "sweep.csv" if out_dir.is_dir() else out_dir
    with open(path, newline="") as fh:
        return [r for r in csv.DictReader(fh) if r.get("mode") == "real"]


def _num(value: Any) -> float | None:
    return None if value in (None, "") else float(value)


def sampled_count_margins(sample_interval_s: float) -> tuple[float, float]:
    """(before the event, after stable): the mean margins of the real request counts.

    ``real_metrics`` counts from each member's last counter sample before the event to its last
    one before stable + ``SAMPLE_AFTER_S``; with a sample every ``sample_interval_s`` (the ZooKeeper
    members' sampling and librdkafka's ``statistics.interval.ms``, both 1 s in the lab) that is
    on average half an interval before the event and ``SAMPLE_AFTER_S`` minus half an interval
    after stable. The simulator counts a steady group's heartbeats in those margins too.
    """
    half = sample_interval_s / 2
    return half, max(0.0, SAMPLE_AFTER_S - half)


def lab_sim_config(protocol: str, members: int, partitions: int, event: str, seed: int,
                   cal: Calibration, session_timeout_ms: int, tasks: int,
                   timing: Timing, heartbeat_interval_ms: int | None = None,
                   event_after_producer_s: tuple[float, ...] = ()) -> SimConfig:
    """The simulator's settings for one cell of a Spark herd run (``spark herd --mode real``):
    the lab's timeouts, heartbeat, member naming and victim, the real counts' sampling margins
    ``tasks`` client processes, and the event applied once the group was quiet for
    ``timing.quiet_s`` (the coordinating task's rule).

    ``heartbeat_interval_ms`` is the interval the run's broker gave its members where the broker
    owns it (a KIP-848 group: ``group.consumer.heartbeat.interval.ms``, recorded in the run's
    ``meta.json``); otherwise the lab's client setting, a third of the session.
    ``event_after_producer_s``: when the event came after the producer's first record in
    earlier runs of the cell, where a plan measured it (``SimConfig``)."""
    count_from, count_until = sampled_count_margins(timing.request_sample_interval_s)
    return SimConfig(protocol, members, partitions, event, seed=seed, calibration=cal,
                     session_timeout_ms=session_timeout_ms,
                     rebalance_backoff_ms=timing.rebalance_backoff_ms,
                     rebalance_max_retries=timing.rebalance_max_retries,
                     heartbeat_interval_ms=heartbeat_interval_ms
                     or lab_heartbeat_interval_ms(session_timeout_ms),
                     member_order=LAB_MEMBER_ORDER, victim_rank=LAB_VICTIM_RANK,
                     first_candidate_rank=lab_first_candidate_rank(tasks),
                     count_from_s=count_from, count_until_s=count_until,
                     messages_per_s=timing.produce_rate,
                     consumer_timeout_ms=lab_consumer_timeout_ms(timing),
                     client_processes=tasks, auto_commit=False,
                     event_after_change_s=lab_event_after_change_s(timing.quiet_s),
                     event_after_producer_s=event_after_producer_s)


def validate(rows: Sequence[dict[str, Any]], cal: Calibration, seeds: int = 5,
             timing: Timing | None = None, tolerances: Tolerances = PLAN_TOLERANCES
             ) -> list[Check]:
    timing = timing or Timing()
    cells: dict[tuple[str, int, int, str], list[dict[str, Any]]] = {}
    for r in rows:
        if r["protocol"] not in PROTOCOLS:
            continue
        session = int(r.get("session_timeout_ms") or timing.session_timeout_ms)
        key = (r["protocol"], int(r["members"]), int(r["partitions"]), r["event"], session)
        cells.setdefault(key, []).append(r)
    checks = []
    for (protocol, n, p, event, session), real in sorted(cells.items()):
        tasks = int(real[0].get("tasks") or 0)
        sims = [simulate(lab_sim_config(protocol, n, p, event, s, cal, session, tasks, timing))
                for s in range(seeds)]
        checks.append(Check(
            protocol=protocol, members=n, partitions=p, event=event, real_runs=len(real),
            real_requests=median(_num(r["coordination_requests"]) for r in real) or 0.0,
            sim_requests=statistics.median(s.coordination_requests for s in sims),
            real_attempts=median(_num(r["rebalance_attempts"]) for r in real) or 0.0,
            sim_attempts=statistics.median(s.rebalance_attempts for s in sims),
            real_tts=median(_num(r["time_to_stable_s"]) for r in real),
            sim_tts=median(s.time_to_stable_s for s in sims), tolerances=tolerances,
            session_timeout_ms=session,
            real_settled=sum(_num(r["time_to_stable_s"]) is not None for r in real)))
    return checks


def _t(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def validation_markdown(checks: Sequence[Check], cal: Calibration) -> str:
    ok = sum(c.ok for c in checks)
    tol = checks[0].tolerances if checks else PLAN_TOLERANCES
    lines = [
        f"Simulator vs real runs ({ok} of {len(checks)} cells within tolerance: "
        f"{tol.describe()}); calibration: {cal.source}", "",
        *validation_table(checks),
    ]
    return "\n".join(lines) + "\n"


def validation_table(checks: Sequence[Check]) -> list[str]:
    """The markdown table of :func:`validate`'s checks, one row per cell."""
    lines = [
        "| protocol | N | P | event | session | real runs | requests real / sim (err) | "
        "attempts real / sim | time to stable real / sim s (err) | ok |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in checks:
        session = f"{c.session_timeout_ms / 1000:g} s" if c.session_timeout_ms else "—"
        lines.append(
            f"| {c.protocol} | {c.members} | {c.partitions} | {c.event} | {session} | "
            f"{c.real_runs} | "
            f"{c.real_requests:,.0f} / {c.sim_requests:,.0f} "
            f"({relative_error(c.real_requests, c.sim_requests)}) | "
            f"{c.real_attempts:g} / {c.sim_attempts:g} | {_t(c.real_tts)} / {_t(c.sim_tts)} "
            f"({relative_error(c.real_tts, c.sim_tts, '.2f', ' s')}) | "
            f"{'yes' if c.ok else 'no: ' + c.flags} |")
    return lines


def check_to_dict(c: Check) -> dict[str, Any]:
    """One check as JSON (committed beside the runs it scored)."""
    return {"protocol": c.protocol, "members": c.members, "partitions": c.partitions,
            "event": c.event, "session_timeout_ms": c.session_timeout_ms,
            "real_runs": c.real_runs, "real_settled": c.real_settled,
            "real_requests": c.real_requests, "sim_requests": c.sim_requests,
            "real_attempts": c.real_attempts, "sim_attempts": c.sim_attempts,
            "real_tts": c.real_tts, "sim_tts": c.sim_tts,
            "requests_ok": c.requests_ok, "attempts_ok": c.attempts_ok, "tts_ok": c.tts_ok,
            "ok": c.ok}
