"""docs/validation-plan-24.md: the legacy events placed on the producer's cycle as the lab
placed them, the source rules as Tansu's eager model, requests judged inside their spread.

Reads committed files only: validation plan 24's scoring (held-out runs), plans 23 and 22's
runs of the same cells with their own formation rows (the lab against itself, split the same
way), the diagnostic on plan 23's runs (``validation-24/diagnostic``), plan 24's formation
rows, and the event times the legacy models draw (``event-on-producer``: ``spark
formation-spread``'s ``producer_event`` rows on plans 21 to 23's legacy runs).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from zkconsumer.results.distributions import settled
from zkconsumer.results.figures.formation_validation import (
    StragglerSource,
    stragglers_source,
    stragglers_table,
)
from zkconsumer.results.figures.straggler_split import split_validation
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.real_runs import producer_events, spread_rows, sweep_runs
from zkconsumer.results.registry import Context, figure
from zkconsumer.scenarios.timing import Timing

HELD_OUT = 24
BEFORE = ((23, "scale/validation-23/formation-spread"),
          (22, "scale/validation-22/formation-spread"))
DIAGNOSTIC = f"scale/validation-{HELD_OUT}/diagnostic"
EVENT_TIMES = "scale/event-on-producer"
SOURCES: tuple[StragglerSource, ...] = (
    (f"plan {HELD_OUT}", f"scale/validation-{HELD_OUT}/formation-spread",
     f"scale/validation-{HELD_OUT}/tansu/*"),)


@figure("scale-validation-24", source=f"results/scale/validation-{HELD_OUT}/scoring, "
                                      + ", ".join(f"results/scale/validation-{p}/tansu, "
                                                  f"results/scale/validation-{p}/kafka-2.4.1, "
                                                  f"results/{rows}" for p, rows in BEFORE)
                                      + f", results/{DIAGNOSTIC}")
def validation_24(ctx: Context) -> str:
    """Plan 24's scoring, plans 23 and 22's runs as a prediction of its runs (split the same
    way), its failing cells run by run, and the diagnostic on plan 23's runs."""
    return split_validation(ctx, HELD_OUT, BEFORE, DIAGNOSTIC,
                            "Disclosed before the runs: this plan's models and checks on plan "
                            "23's runs, the event times from plans 21 and 22 only")


def three_quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    """(first quartile, median, third quartile), interpolated as the checks' quartiles are
    (a single value is all three)."""
    if len(values) == 1:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(sorted(values), n=4, method="inclusive")
    return q1, q2, q3


def cycle_points(seconds: Sequence[float], cycle_s: float) -> tuple[float, float, float]:
    """Where on a producer cycle of ``cycle_s`` the events fell: the quartiles of the event
    times modulo the cycle, in seconds after a record to partition 0 was sent."""
    return three_quartiles([s % cycle_s for s in seconds])


@figure("event-on-producer", source=f"results/{EVENT_TIMES}")
def event_on_producer(ctx: Context) -> str:
    """Per legacy cell: when the lab's event came after the producer's first record, and where
    on partition 0's cycle it fell (tight where the group forms within one look)."""
    folder = ctx.results / EVENT_TIMES
    times = producer_events(spread_rows(folder))
    timing = Timing()
    partitions = 24
    cycle = partitions / timing.produce_rate
    out = ["| protocol | N | event | runs | event after the first record, s: median [range] "
           f"| on partition 0's {cycle:g} s cycle, s after its record: quartiles |",
           "|---|---|---|---|---|---|"]
    for (protocol, members, event), seconds in sorted(times.items()):
        q1, q2, q3 = cycle_points(seconds, cycle)
        out.append(f"| {protocol} | {members} | {event} | {len(seconds)} | "
                   f"{statistics.median(seconds):.2f} [{min(seconds):.2f}–{max(seconds):.2f}] | "
                   f"{q1:.2f} / {q2:.2f} / {q3:.2f} |")
    prov = read_provenance(folder)
    out += ["", f"The lab's producer sends {timing.produce_rate:g} messages a second over "
            f"{partitions} partitions, one to each in turn, so partition 0 (the leaver's, "
            f"m00000's) gets one every {cycle:g} s. A uniform phase would put the quartiles "
            f"near {cycle / 4:.2f} / {cycle / 2:.2f} / {3 * cycle / 4:.2f}. Measured at "
            f"revision `{prov.revision[:12]}` on {prov.date[:10]}; re-run: `{prov.command}`."]
    return "\n".join(out)


@figure("tansu-stragglers-24", source=stragglers_source(SOURCES))
def tansu_stragglers_24(ctx: Context) -> str:
    """Plan 24's Tansu formations: how many left stragglers, and what the runs after them did."""
    return "\n".join(stragglers_table(ctx, SOURCES))


# The Tansu zk-range run sets whose formations are read for their speed: (what the table calls
# the set, its sweeps' folder, the folder of its formation rows)
SPEED_SETS = tuple(
    (label, f"scale/validation-{plan}/{folder}", f"scale/set-speed/{slug}")
    for label, plan, folder, slug in (
        ("plan 20", 20, "tansu", "plan-20"),
        ("plan 21, first set", 21, "tansu-first", "plan-21-first"),
        ("plan 21", 21, "tansu", "plan-21"),
        ("plan 22", 22, "tansu", "plan-22"),
        ("plan 23, first set", 23, "tansu-first", "plan-23-first"),
        ("plan 23", 23, "tansu", "plan-23"),
        ("plan 24", 24, "tansu", "plan-24")))


def _quartiles_said(values: Sequence[float]) -> str:
    q1, q2, q3 = three_quartiles(values)
    return f"{q2:.2f} [{q1:.2f}–{q3:.2f}]"


def _sweep_medians(ctx: Context, folder: str, members: int) -> dict[str, float]:
    rows = sweep_runs(ctx.results / folder / f"zk-range-n{members}")
    out = {}
    for event in ("join", "leave"):
        times = settled([run for raw, run in rows if raw.get("event") == event])
        if times:
            out[event] = statistics.median(times)
    return out


@figure("set-speed", source=", ".join(f"results/{speed}, results/{sweeps}"
                                      for _, sweeps, speed in SPEED_SETS))
def set_speed(ctx: Context) -> str:
    """Per Tansu zk-range run set: how long its formations' reads took (before the events) beside
    its time to stable after them; a set slow after its event was slow before it."""
    out = ["| N | run set | runs | formation's read, s: median [IQR] over runs | time to "
           "stable, s: join / leave (median over 10 runs) |", "|---|---|---|---|---|"]
    commands = []
    pairs: dict[str, list[tuple[float, float]]] = {"join": [], "leave": []}
    for members in (48, 12):
        for label, sweeps, speed in SPEED_SETS:
            folder = ctx.results / speed
            if not (folder / "formation-spread.csv").is_file():
                continue
            reads = [float(r["seconds"]) for r in spread_rows(folder)
                     if r["kind"] == "formation_read" and int(r["members"]) == members]
            tts = _sweep_medians(ctx, sweeps, members)
            if not reads or not tts:
                continue
            out.append(f"| {members} | {label} | {len(reads)} | {_quartiles_said(reads)} | "
                       f"{tts.get('join', float('nan')):.2f} / "
                       f"{tts.get('leave', float('nan')):.2f} |")
            if members == 48:
                commands.append(f"`{read_provenance(folder).command}`")
                for event in pairs:
                    if event in tts:
                        pairs[event].append((statistics.median(reads), tts[event]))
    said = [f"{event} r = {statistics.correlation(*zip(*xy, strict=True)):.2f}"
            for event, xy in pairs.items() if len(xy) > 2]
    if said:
        out += ["", f"At N = 48, across the {len(pairs['join'])} sets, the correlation of the "
                f"formation's median read with the median time to stable: "
                f"{', '.join(said)} (Pearson)."]
    out += ["", "A formation's read: each member's first attempt, from its start to its plan "
            "(the release, the registry's reads and the plan), the run's median over members "
            "(`spark formation-spread`'s `formation_read` rows); the times to stable are the "
            "sets' sweeps. Re-run: " + "; ".join(commands) + "."]
    return "\n".join(out)
