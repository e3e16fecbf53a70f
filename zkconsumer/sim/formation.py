"""The legacy group's formation: N members started together, each with the run's retry budget.

The split-brain model starts from a formed group (:meth:`.LegacySplitModel.form`); this module
asks the question before it: do N members started at once form a group at all? In the
original, a member's first rebalance runs inside ``createMessageStreams``; when it fails
``rebalance.max.retries`` times the call throws and the member exits, and its deregistration
makes everybody rebalance again. Whether that happens depends on how far apart the members
register: registered at the same instant, they all read the same group and claim disjoint
shares; registered one after another, an early member holds owner znodes a later member's
share needs when it claims them, and a budget of one attempt has no second try.

The start-up spread has two parts. Within a client process (a Spark task) the members start one
after another, as the real job spawns them, each taking the calibration's session set-up
(``zk_connect_ms``, measured by ``calibrate``) varied by its ``jitter_cv``. Between processes,
the skew of their starts is drawn from a sample measured on real runs (their
``process_start_skew_ms`` column, :func:`skew_sample`): one process, chosen at random, starts
at 0 and each other one that much later. Without a sample the processes start together.
Everything after registration is the split-brain model's legacy rebalance
(:mod:`.splitbrain_legacy`).

    python -m zkconsumer.sim.formation --members 2,3,4,10,100 --budgets 1,2,3 [--tasks 2] \
        [--partitions 64] [--draws 20] [--calibration FILE] [--skew-from RUNS ...] --out DIR

writes ``formation.csv`` (one row per N and budget: the share of draws that formed, members
exited, time to form) and ``meta.json``.
"""

from __future__ import annotations

import argparse
import csv
import random
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from zkconsumer.sim.calibration import Calibration
from zkconsumer.sim.splitbrain import HORIZON_S, stable_at
from zkconsumer.sim.splitbrain_legacy import LegacySplitModel
from zkconsumer.spark.splitbrain_rules import Action, Kind, Plan, member_name, task_of

MIN_CONNECT_FACTOR = 0.1     # a jittered set-up is never shorter than a tenth of the median


@dataclass(frozen=True)
class FormationOutcome:
    """What a simulated formation ended with (the real job's formation verdict)."""

    members: int
    formed: bool             # every member alive and every partition fetched by exactly one
    exited: int              # members whose first rebalance gave up
    gave_up: int             # members that gave up some rebalance (the exited among them)
    settled: bool            # every rebalance over within the simulated hour
    time_s: float | None     # the last change of a formed group, from the first start


def skew_sample(dirs: Sequence[Path]) -> tuple[float, ...]:
    """The measured process start skews (ms) of the real runs in ``dirs`` (their sweeps'
    ``process_start_skew_ms``, rows that have one), in folder and row order."""
    out: list[float] = []
    for d in dirs:
        path = d / "sweep.csv"
        if not path.is_file():
            raise ValueError(f"{d}: no sweep.csv to read process start skews from")
        with open(path, newline="") as fh:
            for row in csv.DictReader(fh):
                value = row.get("process_start_skew_ms") or ""
                if row.get("mode") == "real" and value:
                    out.append(float(value))
    if not out:
        raise ValueError(f"no process_start_skew_ms in {', '.join(map(str, dirs))}")
    return tuple(out)


def start_offsets(members: int, tasks: int, cal: Calibration, rng: random.Random,
                  skew_ms: Sequence[float] = ()) -> dict[str, float]:
    """Each member's start, in seconds: its process's start (0 for one process chosen at
    random, a draw from ``skew_ms`` for each other; 0 for all without a sample), then the
    set-ups of the members before it in that process (members named and spread over
    processes as the real job does: :func:`.member_name`, :func:`.task_of`)."""
    if members < 1:
        raise ValueError(f"members must be >= 1, got {members}")
    if tasks < 1:
        raise ValueError(f"tasks must be >= 1, got {tasks}")
    if any(x < 0 for x in skew_ms):
        raise ValueError(f"process start skews must be >= 0 ms, got {min(skew_ms)}")
    connect_s = cal.zk_connect_ms / 1000.0
    first = rng.randrange(tasks)
    clock: dict[int, float] = {proc: (0.0 if proc == first or not skew_ms
                                      else rng.choice(skew_ms) / 1000.0)
                               for proc in range(tasks)}
    out: dict[str, float] = {}
    for i in range(members):
        name = member_name(i)
        proc = task_of(name, tasks)
        out[name] = clock.get(proc, 0.0)
        step = connect_s * max(MIN_CONNECT_FACTOR, rng.gauss(1.0, cal.jitter_cv))
        clock[proc] = out[name] + step
    return out


def formation_plan(members: int, tasks: int, cal: Calibration, rng: random.Random,
                   skew_ms: Sequence[float] = ()) -> Plan:
    """No member before; every member joins at its start offset."""
    offsets = start_offsets(members, tasks, cal, rng, skew_ms)
    actions = tuple(Action(round(t, 6), name, Kind.JOIN) for name, t in offsets.items())
    return Plan("formation", "zk-range", members, (), actions)


def simulate_formation(members: int, partitions: int, cal: Calibration, session_s: float,
                       backoff_s: float, max_retries: int, tasks: int,
                       rng: random.Random, skew_ms: Sequence[float] = ()) -> FormationOutcome:
    """One formation of ``members`` started together on ``tasks`` processes."""
    if max_retries < 1:
        raise ValueError(f"max_retries must be >= 1, got {max_retries}")
    pl = formation_plan(members, tasks, cal, rng, skew_ms)
    model = LegacySplitModel(pl, partitions, cal, session_s, backoff_s, max_retries, tasks, rng)
    model.form()
    out = model.run(HORIZON_S)
    exited = sum(1 for m in model.members.values() if m.gone)
    stable = stable_at(out.fetch_intervals, partitions, out.end) if out.converged else None
    formed = exited == 0 and stable is not None
    return FormationOutcome(members, formed, exited, len(out.gave_up), out.converged,
                            round(stable, 3) if formed and stable is not None else None)


def p_formed(members: int, partitions: int, cal: Calibration, session_s: float,
             backoff_s: float, max_retries: int, tasks: int, seed: int, draws: int,
             skew_ms: Sequence[float] = ()) -> float:
    """The share of ``draws`` formations that formed (each draw its own randomness)."""
    if draws < 1:
        raise ValueError(f"draws must be >= 1, got {draws}")
    formed = sum(simulate_formation(members, partitions, cal, session_s, backoff_s,
                                    max_retries, tasks,
                                    random.Random(f"formation/{members}/{seed}/{draw}"),
                                    skew_ms).formed
                 for draw in range(draws))
    return formed / draws


FIELDS = ("members", "partitions", "tasks", "rebalance_max_retries", "draws", "p_formed",
          "exited_mean", "gave_up_mean", "p_settled", "time_to_form_s")


def sweep(members: Sequence[int], budgets: Sequence[int], partitions: int, tasks: int,
          cal: Calibration, draws: int, session_s: float = 6.0, backoff_s: float = 1.0,
          skew_ms: Sequence[float] = ()) -> list[dict[str, object]]:
    """One row per (N, budget): the share of ``draws`` formations that formed, the mean numbers
    of members that exited and that gave up some rebalance, the share whose rebalances were
    all over within the simulated hour, the median time to form of those that formed (None if
    none)."""
    rows = []
    for budget in budgets:
        for n in members:
            outs = [simulate_formation(n, partitions, cal, session_s, backoff_s, budget, tasks,
                                       random.Random(f"formation/{n}/{budget}/{draw}"),
                                       skew_ms)
                    for draw in range(draws)]
            times = [o.time_s for o in outs if o.time_s is not None]
            rows.append({"members": n, "partitions": partitions, "tasks": tasks,
                         "rebalance_max_retries": budget, "draws": draws,
                         "p_formed": round(sum(o.formed for o in outs) / draws, 4),
                         "exited_mean": round(sum(o.exited for o in outs) / draws, 3),
                         "gave_up_mean": round(sum(o.gave_up for o in outs) / draws, 3),
                         "p_settled": round(sum(o.settled for o in outs) / draws, 4),
                         "time_to_form_s": round(statistics.median(times), 3) if times
                         else None})
    return rows


def _ints(text: str, what: str, least: int) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what}: not a list of integers: {text!r}") from None
    if not values or min(values) < least:
        raise argparse.ArgumentTypeError(f"{what}: each must be >= {least}, got {text!r}")
    return values


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m zkconsumer.sim.formation",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--members", required=True, type=lambda t: _ints(t, "--members", 1))
    p.add_argument("--budgets", required=True, type=lambda t: _ints(t, "--budgets", 1),
                   help="rebalance.max.retries values")
    p.add_argument("--partitions", type=int, default=64)
    p.add_argument("--tasks", type=int, default=2, help="client processes hosting the members")
    p.add_argument("--draws", type=int, default=20)
    p.add_argument("--calibration", type=Path, default=None)
    p.add_argument("--skew-from", type=Path, action="append", default=[],
                   help="real split-brain runs whose process start skews to draw from "
                        "(default: processes start together)")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    for name in ("partitions", "tasks", "draws"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    try:
        cal = Calibration.load(args.calibration) if args.calibration else Calibration()
        skews = skew_sample(args.skew_from) if args.skew_from else ()
    except (OSError, ValueError) as exc:
        p.error(str(exc))
    from zkconsumer.results import capture, write_provenance

    prov = capture(" ".join(["python -m zkconsumer.sim.formation",
                             f"--members {','.join(map(str, args.members))}",
                             f"--budgets {','.join(map(str, args.budgets))}",
                             f"--partitions {args.partitions}", f"--tasks {args.tasks}",
                             f"--draws {args.draws}",
                             *([f"--calibration {args.calibration}"] if args.calibration
                               else []), *(f"--skew-from {d}" for d in args.skew_from),
                             f"--out {args.out}"]), skews=len(skews))
    rows = sweep(args.members, args.budgets, args.partitions, args.tasks, cal, args.draws,
                 skew_ms=skews)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "formation.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, FIELDS)
        w.writeheader()
        w.writerows({k: ("" if v is None else v) for k, v in r.items()} for r in rows)
    write_provenance(args.out, prov)
    for r in rows:
        print(f"N={r['members']:>5} budget={r['rebalance_max_retries']:>2} "
              f"P(formed)={r['p_formed']:.2f} exited={r['exited_mean']} "
              f"gave up={r['gave_up_mean']} settled={r['p_settled']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
