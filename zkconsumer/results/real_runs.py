"""The real runs a validation plan judges, as :class:`~zkconsumer.results.distributions.Run`:
a Spark herd sweep's rows (``sweep.csv``), an ``experiment compare`` folder's runs, and which
of them followed a formation that left stragglers (``spark formation-spread``'s rows).

A run id names its cell (``<protocol>-n<N>-p<P>-<event>-s<seed>-<suffix>``, as ``spark herd``
writes it); :func:`run_key` reads it, so formation rows meet the sweep rows of the same runs.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import re
import statistics
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from zkconsumer.results.distributions import CellKey
from zkconsumer.results.judging import Run

K = TypeVar("K", bound=Hashable)  # how formation reads are grouped (folder or cell)

RUN_ID = re.compile(r"^(?P<protocol>.+)-n(?P<n>\d+)-p\d+-(?P<event>[a-z]+)-s(?P<seed>\d+)-\w+$")


@dataclass(frozen=True)
class RunKey:
    """What names one run of a sweep: its cell and seed."""

    protocol: str
    members: int
    event: str
    seed: int


def run_key(run_id: str) -> RunKey:
    """The cell and seed a run id names; a clear error for one that names none."""
    m = RUN_ID.match(run_id)
    if m is None:
        raise ValueError(f"run id {run_id!r} does not name its cell "
                         "(<protocol>-n<N>-p<P>-<event>-s<seed>-<suffix>)")
    return RunKey(m["protocol"], int(m["n"]), m["event"], int(m["seed"]))


def sweep_key(row: dict[str, str]) -> RunKey:
    """The same for a sweep row."""
    return RunKey(row["protocol"], int(row["members"]), row["event"], int(row["seed"]))


def spread_rows(path: Path) -> list[dict[str, str]]:
    """A ``spark formation-spread`` output's rows (its CSV, or the folder holding it)."""
    if path.is_dir():
        path = path / "formation-spread.csv"
    if not path.is_file():
        raise FileNotFoundError(f"no formation-spread rows at {path} (spark formation-spread "
                                "writes them from the runs' raw records)")
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def straggler_runs(rows: list[dict[str, str]]) -> set[RunKey]:
    """The runs whose formation left stragglers (a ``straggler`` row)."""
    return {run_key(r["run_id"]) for r in rows if r["kind"] == "straggler"}


def straggler_ranks(rows: list[dict[str, str]], tasks: int, last_started: int
                    ) -> tuple[int, ...]:
    """How many ``straggler`` rows named a member of each creation rank in its task (member i
    in task ``i % tasks``, its rank ``i // tasks``), over the tasks other than
    ``last_started``: the member ids are the lab's (``m00003``)."""
    if tasks < 1:
        raise ValueError(f"tasks must be >= 1, got {tasks}")
    counts: dict[int, int] = {}
    for r in rows:
        if r["kind"] != "straggler":
            continue
        member = r["member"]
        if not (member[:1] == "m" and member[1:].isdigit()):
            raise ValueError(f"straggler row of {r['run_id']}: member {member!r} is not a "
                             "lab member id (m<index>)")
        index = int(member[1:])
        if index % tasks != last_started:
            counts[index // tasks] = counts.get(index // tasks, 0) + 1
    return tuple(counts.get(rank, 0) for rank in range(max(counts, default=-1) + 1))


def formed_runs(rows: list[dict[str, str]]) -> set[RunKey]:
    """The runs that formed before their event (an ``event_lag`` row each)."""
    return {run_key(r["run_id"]) for r in rows if r["kind"] == "event_lag"}


def producer_events(rows: list[dict[str, str]]) -> dict[tuple[str, int, str], tuple[float, ...]]:
    """(protocol, members, event) -> when the event came after the producer's first record in
    each of that cell's runs (the ``producer_event`` rows), in run-id order."""
    out: dict[tuple[str, int, str], list[tuple[str, float]]] = {}
    for r in rows:
        if r["kind"] == "producer_event":
            key = run_key(r["run_id"])
            out.setdefault((key.protocol, key.members, key.event), []).append(
                (r["run_id"], float(r["seconds"])))
    return {cell: tuple(s for _, s in sorted(runs)) for cell, runs in out.items()}


def formation_reads(rows: list[dict[str, str]]) -> dict[tuple[str, int], float]:
    """(protocol, members) -> the median over that folder's runs (join and leave alike) of
    their ``formation_read`` rows: how fast the run set's machine read the group at its
    formation, before any event (:mod:`zkconsumer.spark.herd.formation_spread`)."""
    return _median_reads(rows, lambda k: (k.protocol, k.members))


def cell_formation_reads(rows: list[dict[str, str]]) -> dict[tuple[str, int, str], float]:
    """(protocol, members, event) -> the median of that cell's runs' ``formation_read`` rows:
    :func:`formation_reads` per cell, which follows a machine whose speed changed while the
    set ran."""
    return _median_reads(rows, lambda k: (k.protocol, k.members, k.event))


def _median_reads(rows: list[dict[str, str]], group: Callable[[RunKey], K]) -> dict[K, float]:
    out: dict[K, list[float]] = {}
    for r in rows:
        if r["kind"] == "formation_read":
            out.setdefault(group(run_key(r["run_id"])), []).append(float(r["seconds"]))
    return {cell: statistics.median(values) for cell, values in out.items()}


def _num(value: Any) -> float | None:
    return None if value in (None, "") else float(value)


def sweep_runs(folder: Path) -> list[tuple[dict[str, str], Run]]:
    """The real rows of a ``spark herd --mode real`` folder (``sweep.csv``) as runs."""
    path = folder / "sweep.csv"
    if not path.is_file():
        return []
    with open(path, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r.get("mode") == "real"]
    out = []
    for r in rows:
        tts = _num(r.get("time_to_stable_s"))
        settled = str(r.get("settled", "true")).lower() != "false"
        out.append((r, Run(_num(r["coordination_requests"]) or 0.0,
                           _num(r["rebalance_attempts"]) or 0.0, _num(r["conflicts"]) or 0.0,
                           tts if settled else None)))
    return out


def compare_runs(folder: Path) -> list[tuple[dict[str, Any], Run]]:
    """The runs of an ``experiment compare`` folder (``results.json`` or ``runs.json``)."""
    for name in ("results.json", "runs.json"):
        path = folder / name
        if path.is_file():
            data = json.loads(path.read_text())
            break
    else:
        return []
    runs = data["runs"] if isinstance(data, dict) else data
    out = []
    for run in runs:
        if run.get("status") != "ok":
            continue
        m = run["metrics"]
        settled = (run.get("details") or {}).get("settled", True)
        tts = m.get("time_to_stable_s") if settled else None
        out.append((run, Run(float(m["coordination_requests"]),
                             float(m.get("rebalance_attempts") or 0),
                             float(m.get("conflicts") or 0),
                             None if tts is None else float(tts))))
    return out


def sweep_cell(folder: Path, key: CellKey, late: set[RunKey] | frozenset[RunKey] = frozenset()
               ) -> list[tuple[dict[str, str], Run]]:
    """One cell's rows of a Spark herd sweep folder (``<protocol>-n<N>`` of a run set), each
    run marked when it followed a formation with stragglers (``late``:
    :func:`straggler_runs`)."""
    return [(raw, dataclasses.replace(run, stragglers=sweep_key(raw) in late))
            for raw, run in sweep_runs(folder)
            if raw["event"] == key.event and raw["protocol"] == key.protocol
            and int(raw["members"]) == key.members and int(raw["partitions"]) == key.partitions]
