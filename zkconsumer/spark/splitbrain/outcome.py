"""What each run of the split-brain sweep came to, and the job's exit status (pure; no Spark).

A run that reached its event is measured, and ends in one of three ways:

- ``measured``: every acknowledged record was delivered;
- ``ended stuck``: the group was still not stable when the run ended (members gave up under
  the retry budget, and the repair joins too), and records sat undelivered, every one of them
  after its partition's committed offset, waiting for an owner (``lost_for_good`` = 0). What
  a legacy group does under a small budget: a result of the sweep;
- ``lost records``: acknowledged records were never delivered, some below the committed offset
  (the group will never read them), or in a run that settled, or where the committed offsets
  were not read.

A run that did not reach it ends in one of three others:

- ``not applicable``: the scenario has no meaning for the protocol (``applicable = false``);
- ``did not form``: initial members gave up their first rebalance under the retry budget and
  exited (the original's ``ConsumerRebalanceFailedException``; the reason carries
  :data:`~zkconsumer.results.exclusions.NOT_FORMED`), or every member stayed but the group was
  never stable before the formation deadline (:data:`FORMATION_TIMED_OUT`). What the protocol
  did under the run's settings: a result, listed in the summary as a row;
- ``failed``: the harness could not carry the run out (an error, or an interruption). The
  reason starts with :data:`FAILED`.

The job exits non-zero only for lost records and failed runs (:func:`exit_status`): a group
that did not form, or ended stuck, is a finding of the sweep, not a broken job.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zkconsumer.results.exclusions import NOT_FORMED

FAILED = "failed: "
FORMATION_TIMED_OUT = "the group did not form within"
KEYS = ("mode", "scenario", "protocol", "partitions", "members")

_GAVE_UP = re.compile(r"(\d+) of (\d+) initial members exited")


class Outcome(str, enum.Enum):
    """What a run came to (see the module docstring), in the summary's order within a cell."""

    MEASURED = "measured"
    ENDED_STUCK = "ended stuck"
    LOST = "lost records"
    NOT_FORMED = "did not form"
    FAILED = "failed"
    NOT_APPLICABLE = "not applicable"

    @property
    def measured(self) -> bool:
        """The run reached its event: its metrics are aggregated (by Spark)."""
        return self in (Outcome.MEASURED, Outcome.ENDED_STUCK, Outcome.LOST)


ORDER = {o: i for i, o in enumerate(Outcome)}


def _applicable(value: Any) -> bool:
    """``applicable`` as the job holds it (bool) or as ``sweep.csv`` spells it (text)."""
    if isinstance(value, str):
        return value.strip().lower() != "false"
    return value is not False


def _flag(value: Any) -> bool:
    """A boolean column: a bool in the job's rows, ``true``/``false`` in ``sweep.csv``."""
    if isinstance(value, str):
        return value.strip().lower() == "true"
    return bool(value)


def _count(value: Any) -> int:
    """A count column: an int in the job's rows, text (empty when null) in ``sweep.csv``."""
    if value is None or value == "":
        return 0
    return int(float(value))


def is_formation_outcome(message: str) -> bool:
    """Whether a run's error message says the group did not form (an outcome, not a failure)."""
    return NOT_FORMED in message or FORMATION_TIMED_OUT in message


def outcome_of(row: Mapping[str, Any]) -> Outcome:
    """The outcome of one sweep row (a job row or a ``sweep.csv`` row)."""
    reason = row.get("reason") or ""
    if not _applicable(row.get("applicable")):
        return Outcome.NOT_APPLICABLE
    if not reason:
        return records_outcome(row)
    # before the failure prefix: runs written before the outcome had a row of its own carry
    # it as ``failed: RuntimeError('<run>: the group did not form: ...')``
    if is_formation_outcome(reason):
        return Outcome.NOT_FORMED
    return Outcome.FAILED  # an error, an interruption, or any other unmeasured applicable run


def records_outcome(row: Mapping[str, Any]) -> Outcome:
    """A measured run: every record delivered, a group that ended stuck with its undelivered
    records all waiting after the committed offsets, or lost records."""
    if _count(row.get("lost")) == 0:
        return Outcome.MEASURED
    for_good = row.get("lost_for_good")
    if for_good not in (None, "") and _count(for_good) == 0 and not _flag(row.get("settled")):
        return Outcome.ENDED_STUCK
    return Outcome.LOST


def stuck_text(undelivered: Any) -> str:
    """The summary's outcome cell of a cell's runs that ended stuck."""
    return (f"ended stuck: {_count(undelivered):,} records undelivered, all after the "
            "committed offsets (none skipped)")


def gave_up(reason: str) -> tuple[int, int] | None:
    """``(k, N)`` of a not-formed reason: k of the N initial members gave up and exited."""
    m = _GAVE_UP.search(reason)
    return (int(m.group(1)), int(m.group(2))) if m else None


def not_formed_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """The summary's outcome cell of a cell's runs that did not form (one or more seeds).

    ``did not form (budget 1): 4 of 10 members gave up``; several seeds list each seed's count
    (``1, 4 of 10``); a group that never became stable with every member alive says so."""
    budget = rows[0].get("rebalance_max_retries")
    head = f"did not form (budget {_count(budget)})" if budget not in (None, "") \
        else "did not form"
    counts = [gave_up(r.get("reason") or "") for r in rows]
    parts = []
    quitters = [c for c in counts if c is not None]
    if quitters:
        parts.append(f"{', '.join(str(k) for k, _ in quitters)} of {quitters[0][1]} members "
                     "gave up")
    stuck = len(counts) - len(quitters)
    if stuck:
        parts.append("every member alive but never stable before the formation deadline"
                     + (f" ({stuck} runs)" if quitters else ""))
    return f"{head}: {'; '.join(parts)}"


@dataclass(frozen=True)
class OutcomeRow:
    """One line of the summary for a cell's runs that were not measured, by outcome."""

    mode: str
    scenario: str
    protocol: str
    partitions: int
    members: int
    runs: int
    outcome: Outcome
    text: str            # the table's outcome cell
    reasons: tuple[str, ...]

    def key(self) -> tuple[str, str, str, int, int]:
        return self.mode, self.scenario, self.protocol, self.partitions, self.members


def outcome_rows(rows: Iterable[Mapping[str, Any]]) -> list[OutcomeRow]:
    """The runs that did not reach their event, one :class:`OutcomeRow` per cell and outcome,
    in the table's order (the measured runs are aggregated by Spark)."""
    groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for r in rows:
        outcome = outcome_of(r)
        if outcome.measured:
            continue
        key = (str(r["mode"]), str(r["scenario"]), str(r["protocol"]), _count(r["partitions"]),
               _count(r["members"]), outcome)
        groups.setdefault(key, []).append(r)
    out = []
    for (mode, scenario, protocol, parts, members, outcome), runs in sorted(
            groups.items(), key=lambda kv: (kv[0][:5], ORDER[kv[0][5]])):
        runs = sorted(runs, key=lambda r: _count(r.get("seed")))
        if outcome is Outcome.NOT_FORMED:
            text = not_formed_text(runs)
        elif outcome is Outcome.FAILED:
            text = "failed (harness error, below)"
        else:
            text = "not applicable (below)"
        out.append(OutcomeRow(mode, scenario, protocol, parts, members, len(runs), outcome,
                              text, tuple(r.get("reason") or "" for r in runs)))
    return out


@dataclass(frozen=True)
class Tally:
    """How many runs came to each outcome, and how many measured runs lost records."""

    runs: int
    measured: int        # every record delivered
    ended_stuck: int
    lost: int
    not_formed: int
    failed: int
    not_applicable: int

    def problems(self) -> list[str]:
        """What makes the job exit non-zero, one line each (empty: exit 0)."""
        lines = []
        if self.lost:
            lines.append(f"{self.lost} run(s) lost acknowledged records (listed in "
                         "summary.md)")
        if self.failed:
            lines.append(f"{self.failed} run(s) failed (harness errors, listed in summary.md)")
        return lines


def tally(rows: Iterable[Mapping[str, Any]]) -> Tally:
    counts = {o: 0 for o in Outcome}
    for r in rows:
        counts[outcome_of(r)] += 1
    return Tally(sum(counts.values()), counts[Outcome.MEASURED], counts[Outcome.ENDED_STUCK],
                 counts[Outcome.LOST], counts[Outcome.NOT_FORMED], counts[Outcome.FAILED],
                 counts[Outcome.NOT_APPLICABLE])


def exit_status(rows: Iterable[Mapping[str, Any]]) -> int:
    """1 if a run lost acknowledged records or failed (a harness error), else 0. A group that
    did not form or ended stuck, and a cell the scenario does not apply to, are outcomes: they
    exit 0."""
    return 1 if tally(rows).problems() else 0
