"""``spark rebalance-phases``: how long each ZooKeeper-family member's rebalance took, phase by
phase (legacy and leader mode).

    zkconsumer spark rebalance-phases --raw DIR [--raw DIR ...] --out FILE.csv

Whether a legacy claim races a release depends on two phases of the members' first attempt
after the lab's event: the **stop** (from the attempt's start to its fetchers stopped: the
member's ``attempt`` record to its ``revoked``) and the **claim** (from there to its partitions
fetched again: ``revoked`` to ``assigned``, the release, the group's reads, the plan, the
offsets and the claims), whose first part, up to the member's plan (its ``dc`` decision
record), is its **read**. A member that claims before its neighbour's release conflicts. This
job reads a real-mode sweep's raw output (``DIR/records/<run>`` and ``DIR/windows/<run>.json``,
written by ``spark herd --mode real`` for a ZooKeeper protocol) and writes one row per member
that stopped after the event: its Spark task, when its attempt started after the event, the
phases (a phase the member did not reach within :data:`HORIZON_S` is left empty), when its
plan was decided after the event (``plan_ms``), whether it met an owner conflict, and how long
before its stop ended it had last delivered a message (``since_delivery_ms``) with that gap's
remainder modulo the fetcher's consume poll (``poll_phase_ms``). A member that planned with
nothing to stop (the joiner) has a row too, with only its attempt, its plan and its conflict:
a legacy join races when the joiner's plan comes before the old owner's fetchers stopped. A
fetcher thread notices its stop only when ``consume(1, POLL_S)`` returns, on a message or at
the end of a poll, and its polls restart at each message: a stop
that ended at a poll boundary shows a small remainder. With ``--calibration`` it adds the
simulator's members for the same cells (``source`` = model: ``--draws`` seeded draws a cell,
with the lab's settings as ``spark validate`` draws them; the conflict and delivery columns
are then empty). :func:`phase_rows` and :func:`model_rows` are pure.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from zkconsumer.datapath.fetcher_thread import POLL_S
from zkconsumer.tables import nearest_rank

COLUMNS = ("source", "run_id", "protocol", "members", "event", "seed", "member", "task",
           "attempt_ms", "stop_ms", "read_ms", "claim_ms", "conflict", "since_delivery_ms",
           "poll_phase_ms", "plan_ms")
ON_BOUNDARY_MS = 10.0  # a stop within this of a poll boundary (after it) ended at the boundary
HORIZON_S = 10.0  # a member's first attempt after the event (a crash's: after the session
# expiry) ends well within this
POLL_MS = POLL_S * 1000
CELL = ("protocol", "members", "partitions", "event", "session_timeout_ms", "tasks")


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def phase_rows(records: Iterable[dict[str, Any]], window: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of one run from its records (``kind``, ``ts``, ``member``, ``what``, ``task``):
    one per member whose first attempt after the event stopped its fetchers.

    Deliveries (``kind`` ``d``) count from before the event too: a member's last message may
    have come a whole producer cycle before its stop.

    Records count from the event until half a second after the run settled (the window's
    ``done.settled_ts``; without it :data:`HORIZON_S`), so that a later rebalance (the lab
    stopping its members) is not taken for the event's. A member that planned before
    stopping anything (a joiner) has a row with its attempt, its first plan (``plan_ms``) and
    its conflict only; an owner conflict counts when it came before the member fetched again.
    """
    event = float(window["event_ts"])
    settled = (window.get("done") or {}).get("settled_ts")
    end = float(settled) + 0.5 if settled is not None else event + HORIZON_S
    first: dict[str, dict[str, Any]] = {}
    delivered: dict[str, float] = {}  # each member's last delivery before its stop
    for r in sorted(records, key=lambda r: r["ts"]):
        if r["kind"] == "d":
            if "revoked" not in first.get(r["member"], {}) and r["ts"] <= end:
                delivered[r["member"]] = r["ts"]
            continue
        if not event <= r["ts"] <= end:
            continue
        m = first.setdefault(r["member"], {"task": r["task"]})
        if "assigned" in m:
            continue  # fetching again: this member's first attempt is over
        if r["kind"] == "co" and r["what"] == "attempt":
            m.setdefault("attempt", r["ts"])
        elif "attempt" not in m:
            continue  # before its first attempt: nothing of the rebalance yet
        elif r["kind"] == "co" and r["what"] == "owner_conflict":
            m["conflict"] = True
        elif r["kind"] == "tl" and r["what"] == "revoked":
            m.setdefault("revoked", r["ts"])
        elif r["kind"] == "dc":
            m.setdefault("decided" if "revoked" in m else "planned", r["ts"])
        elif r["kind"] == "tl" and r["what"] == "assigned":
            m["assigned"] = r["ts"]
    rows = []
    for member, m in sorted(first.items()):
        if "attempt" not in m:
            continue
        row = {"source": "real", "run_id": window["run_id"], "protocol": window["protocol"],
               "members": int(window["members"]), "event": window["event"],
               "seed": int(window["seed"]), "member": member, "task": m["task"],
               "attempt_ms": _ms(m["attempt"] - event), "stop_ms": None, "read_ms": None,
               "claim_ms": None, "conflict": bool(m.get("conflict")),
               "since_delivery_ms": None, "poll_phase_ms": None, "plan_ms": None}
        if "revoked" not in m:
            if "planned" in m:  # a joiner: planned with nothing to stop
                rows.append({**row, "plan_ms": _ms(m["planned"] - event)})
            continue  # an idle member: neither stopped nor planned
        since = _ms(m["revoked"] - delivered[member]) if member in delivered else None
        decided = "decided" in m
        rows.append({**row, "stop_ms": _ms(m["revoked"] - m["attempt"]),
                     "read_ms": _ms(m["decided"] - m["revoked"]) if decided else None,
                     "claim_ms": _ms(m["assigned"] - m["revoked"]) if "assigned" in m else None,
                     "since_delivery_ms": since,
                     "plan_ms": _ms(m["decided"] - event) if decided else None,
                     "poll_phase_ms": None if since is None else round(since % POLL_MS, 1)})
    return rows


def on_boundary(rows: Sequence[dict[str, Any]]) -> tuple[int, int]:
    """(k, n): of the ``n`` rows with a delivery before the stop, the ``k`` whose stop ended
    within :data:`ON_BOUNDARY_MS` after a poll boundary of the member's own fetcher."""
    phases = [float(r["poll_phase_ms"]) for r in rows if r["poll_phase_ms"] not in (None, "")]
    return sum(p <= ON_BOUNDARY_MS for p in phases), len(phases)


def model_rows(cell: dict[str, Any], draws: int, cal: Any) -> list[dict[str, Any]]:
    """The simulator's members for one cell (a window's ``protocol``, ``members``,
    ``partitions``, ``event``, ``session_timeout_ms`` and ``tasks``), seeds 0 to ``draws - 1``,
    drawn as the plan scorer draws them (:func:`zkconsumer.spark.herd.validate.lab_sim_config`)."""
    from zkconsumer.scenarios.timing import Timing
    from zkconsumer.sim.simulate import simulate
    from zkconsumer.spark.herd.validate import lab_sim_config

    rows = []
    for seed in range(draws):
        result = simulate(lab_sim_config(
            cell["protocol"], int(cell["members"]), int(cell["partitions"]), cell["event"],
            seed, cal, int(cell["session_timeout_ms"]), int(cell["tasks"]), Timing()))
        base = {"source": "model", "run_id": "", "protocol": cell["protocol"],
                "members": int(cell["members"]), "event": cell["event"], "seed": seed,
                "task": "", "conflict": "", "since_delivery_ms": "", "poll_phase_ms": ""}
        for p in result.member_phases:
            plan = None if p.read_s is None else p.attempt_s + p.stop_s + p.read_s
            rows.append({**base, "member": p.member, "attempt_ms": _ms(p.attempt_s),
                         "stop_ms": _ms(p.stop_s), "read_ms": _ms(p.read_s),
                         "claim_ms": _ms(p.claim_s), "plan_ms": _ms(plan)})
        for j in result.joiner_phases:
            rows.append({**base, "member": j.member, "attempt_ms": _ms(j.attempt_s),
                         "stop_ms": None, "read_ms": None, "claim_ms": None,
                         "plan_ms": _ms(j.plan_s)})
    return rows


def phase_summary(rows: Sequence[dict[str, Any]], phase: str
                  ) -> tuple[int, float | None, float | None, float | None]:
    """(n, 25 %, median, 75 %) of one phase's milliseconds over the rows that reached it."""
    values = [float(r[phase]) for r in rows if r[phase] not in (None, "")]
    return (len(values), *(nearest_rank(values, q) for q in (0.25, 0.5, 0.75)))


def add_arguments(p: argparse.ArgumentParser) -> None:
    from zkconsumer.spark.herd.request_types import add_records_arguments

    add_records_arguments(p, "a real-mode output directory of ZooKeeper-protocol runs "
                             "(records/, windows/); may repeat")
    p.add_argument("--calibration", type=Path, default=None,
                   help="also draw the simulator's members for the same cells with this "
                        "calibration file")
    p.add_argument("--draws", type=int, default=20, help="model draws a cell (default 20)")


def run(args: argparse.Namespace, spark: Any = None) -> int:
    """The job; ``spark`` reuses a session (tests), else one is created and stopped."""
    from zkconsumer.results import capture
    from zkconsumer.results.provenance import write_rows_csv
    from zkconsumer.sim import Calibration
    from zkconsumer.spark.herd.request_types import (
        raw_windows,
        records_job_command,
        run_records,
    )
    from zkconsumer.spark.session import session_for

    if args.draws < 1:
        raise ValueError(f"--draws must be >= 1, got {args.draws}")
    command = records_job_command("rebalance-phases", args)
    if args.calibration is not None:
        command += f" --calibration {args.calibration} --draws {args.draws}"
    prov = capture(command, poll_ms=POLL_MS, on_boundary_ms=ON_BOUNDARY_MS)
    cal = Calibration.load(args.calibration) if args.calibration is not None else None
    inputs = [(raw, raw_windows(raw)) for raw in args.raw]  # bad input before Spark starts
    rows: list[dict[str, Any]] = []
    with session_for(spark, args.master, "zkconsumer-rebalance-phases") as session:
        for raw, windows in inputs:
            for w in windows:
                rows += phase_rows(run_records(session, raw, w["run_id"], ("co", "tl", "dc", "d")),
                                   w)
    if cal is not None:
        cells = {tuple(w[k] for k in CELL): {k: w[k] for k in CELL}
                 for _, windows in inputs for w in windows}
        for key in sorted(cells):
            rows += model_rows(cells[key], args.draws, cal)
    write_rows_csv(args.out, COLUMNS, rows, prov)
    for source in ("real", "model"):
        for phase in ("stop_ms", "read_ms", "claim_ms"):
            n, q1, mid, q3 = phase_summary([r for r in rows if r["source"] == source], phase)
            if n:
                print(f"{source} {phase}: n = {n}, median {mid:.0f} ms [{q1:.0f}-{q3:.0f}]")
    k, n = on_boundary([r for r in rows if r["source"] == "real"])
    if n:
        print(f"real stops ending within {ON_BOUNDARY_MS:.0f} ms after a poll boundary of the "
              f"member's own fetcher (polls restart at each message): {k} of {n}")
    print(f"wrote {args.out}: {len(rows)} members from {len(args.raw)} sweeps")
    return 0
