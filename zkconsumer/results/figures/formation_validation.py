"""docs/validation-plan-21.md: plan 10's cells again, on the Tansu formation the records show.

Reads committed files only: validation plan 21's scoring (held-out runs), plan 10's runs of
the same cells (the lab against itself), the diagnostic on the Tansu run sets read before
(``validation-21/diagnostic``), the formation rows ``spark formation-spread`` read off the
runs made to look at it (``tansu-formation``), and the same rows of plan 21's Tansu broker runs
(``validation-21/formation-spread``) beside those runs' outcomes.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from zkconsumer.results.figures.scale_distributions import (
    diagnostic_block,
    load_scores,
    planned_sets,
    replication_said,
    runs_legend,
    runs_table,
    validation_block,
)
from zkconsumer.results.figures.splitbrain_text import wilson
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.real_runs import (
    RunKey,
    formed_runs,
    run_key,
    spread_rows,
    straggler_runs,
    sweep_key,
    sweep_runs,
)
from zkconsumer.results.registry import Context, figure
from zkconsumer.tables import nearest_rank

HELD_OUT = 21
BEFORE = 10  # the plan whose cells this one repeats
DIAGNOSTIC = f"scale/validation-{HELD_OUT}/diagnostic"
FORMATION = "scale/tansu-formation"
HELD_OUT_FORMATION = f"scale/validation-{HELD_OUT}/formation-spread"
# where each source's formation rows and the sweeps of the same runs are
STRAGGLER_SOURCES = (("tansu-formation", FORMATION, f"{FORMATION}/runs-*/*"),
                     (f"plan {HELD_OUT}", HELD_OUT_FORMATION,
                      f"scale/validation-{HELD_OUT}/tansu/*"))
LONG_LEAD_S = 0.04  # where the N = 12 leads split into their two groups (the block says so)


@figure("scale-validation-21", source=f"results/scale/validation-{HELD_OUT}/scoring, "
                                      f"results/scale/validation-{BEFORE}/scoring, "
                                      f"results/{DIAGNOSTIC}")
def validation_21(ctx: Context) -> str:
    """Plan 21's scoring, plan 10's runs as a prediction of its runs, its failing cells run by
    run beside plan 10's, and the diagnostic on the run sets read before it."""
    scores, data = load_scores(ctx, HELD_OUT)
    out = [validation_block(ctx, HELD_OUT), "", replication_said(ctx, HELD_OUT, (BEFORE,)), ""]
    if any(s.judged and not s.ok for s in scores):
        out += ["The failing cells run by run, beside plan 10's runs of the same cells:", "",
                *runs_table(ctx, HELD_OUT, BEFORE), "", runs_legend(int(data["sim_draws"])),
                ""]
    out += diagnostic_block(ctx, DIAGNOSTIC, "Disclosed before the runs: the same models on "
                            "run sets already read",
                            f"{planned_sets(ctx, DIAGNOSTIC)}, in that order")
    return "\n".join(out)


@figure("tansu-formation", source=f"results/{FORMATION}")
def tansu_formation(ctx: Context) -> str:
    """Where the Tansu runs' formations left each task's clients and each member's answer."""
    folder = ctx.results / FORMATION
    rows = spread_rows(folder)
    ticks: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    leads: dict[int, list[float]] = defaultdict(list)
    for r in rows:
        if r["kind"] == "task_tick":
            ticks[(run_key(r["run_id"]).protocol, int(r["members"]), r["event"])].append(
                float(r["seconds"]))
        elif r["kind"] == "tick_lead":
            leads[int(r["members"])].append(float(r["seconds"]))
    out = ["| protocol | N | event | runs | task 0's clients ticked last | the other task's last "
           "tick against task 0's, ms: median (range) |", "|---|---|---|---|---|---|"]
    for (protocol, n, event), lags in sorted(ticks.items()):
        ms = sorted(x * 1000 for x in lags)
        last = sum(1 for x in lags if x < 0)
        out.append(f"| {protocol} | {n} | {event} | {len(lags)} | {last} of {len(lags)} | "
                   f"{nearest_rank(ms, 0.5):+.0f} ({ms[0]:+.0f} to {ms[-1]:+.0f}) |")
    out += ["", "| N | members' answers | lead after the member's own statistics tick, ms: "
            "5 % / median / 95 % | leads under / over "
            f"{LONG_LEAD_S * 1000:.0f} ms |", "|---|---|---|---|"]
    for n, v in sorted(leads.items()):
        ms = sorted(x * 1000 for x in v)
        short = sum(1 for x in v if x < LONG_LEAD_S)
        out.append(f"| {n} | {len(v)} | {nearest_rank(ms, 0.05):.0f} / "
                   f"{nearest_rank(ms, 0.5):.0f} / {nearest_rank(ms, 0.95):.0f} | "
                   f"{short} / {len(v) - short} |")
    prov = read_provenance(folder)
    out += ["", f"From `{prov.command}` ({prov.date[:16].replace('T', ' ')} UTC, revision "
            f"`{prov.revision[:12]}`), over the runs in `results/{FORMATION}` (each with the "
            "command that made it). A lead: from a member's last statistics sample to its last "
            "assignment of the formation, modulo the 1 s statistics interval."]
    return "\n".join(out)


def _range(values: list[float], spec: str) -> str:
    if not values:
        return "—"
    return (f"{format(statistics.median(values), spec)} ({format(min(values), spec)}–"
            f"{format(max(values), spec)})")


# (label, folder of a `spark formation-spread` output, glob of the same runs' sweep folders)
StragglerSource = tuple[str, str, str]


def stragglers_source(sources: tuple[StragglerSource, ...]) -> str:
    """A block's ``source=``: every folder :func:`stragglers_table` reads."""
    return ", ".join(f"results/{folder}, results/{runs.rsplit('/', 1)[0]}"
                     for _, folder, runs in sources)


@figure("tansu-stragglers", source=stragglers_source(STRAGGLER_SOURCES))
def tansu_stragglers(ctx: Context) -> str:
    """Which Tansu formations left stragglers, and what the runs after them did."""
    return "\n".join(stragglers_table(ctx, STRAGGLER_SOURCES))


def stragglers_table(ctx: Context, sources: tuple[StragglerSource, ...]) -> list[str]:
    """Per source and cell: the formations with stragglers (Wilson interval) and the runs'
    time to stable and requests after stragglers and after none; then the pooled share."""
    out = ["| runs | protocol | N | event | runs | formations with stragglers [95 % interval] "
           "| time to stable, s, after stragglers / after none: median (range) | requests, "
           "the same |", "|---|---|---|---|---|---|---|---|"]
    notes, pooled, total, gaps = [], 0, 0, []
    for label, folder, runs in sources:
        rows = spread_rows(ctx.results / folder)
        late = straggler_runs(rows)
        gaps += [float(r["seconds"]) for r in rows if r["kind"] == "straggler"]
        outcome = {sweep_key(row): run for sweep in sorted(ctx.results.glob(runs))
                   for row, run in sweep_runs(sweep)}
        cells: dict[tuple[str, int, str], list[RunKey]] = defaultdict(list)
        for key in formed_runs(rows):
            # a ZooKeeper group's runs (their speed rows may share the file) have no broker
            # look to straggle behind
            if not key.protocol.startswith("zk-"):
                cells[(key.protocol, key.members, key.event)].append(key)
        for (protocol, n, event), ids in sorted(cells.items()):
            k = sum(1 for i in ids if i in late)
            lo, hi = wilson(k, len(ids))
            sides: dict[bool, list] = {True: [], False: []}
            for i in ids:
                sides[i in late].append(outcome[i])
            tts = {side: [r.tts for r in v if r.tts is not None] for side, v in sides.items()}
            req = {side: [r.requests for r in v] for side, v in sides.items()}
            out.append(f"| {label} | {protocol} | {n} | {event} | {len(ids)} | {k} of "
                       f"{len(ids)} [{lo:.2f}–{hi:.2f}] | {_range(tts[True], '.2f')} / "
                       f"{_range(tts[False], '.2f')} | {_range(req[True], '.0f')} / "
                       f"{_range(req[False], '.0f')} |")
            pooled, total = pooled + k, total + len(ids)
        prov = read_provenance(ctx.results / folder)
        notes.append(f"{label}: `{prov.command}` ({prov.date[:16].replace('T', ' ')} UTC, "
                     f"revision `{prov.revision[:12]}`)")
    lo, hi = wilson(pooled, total)
    out += ["", f"Real runs only. Over every formation above: {pooled} of {total} with "
            f"stragglers [{lo:.2f}–{hi:.2f}]. A straggler: a member whose last assignment of "
            f"the formation came more than 0.8 s after the group's first ({min(gaps):.3f}–"
            f"{max(gaps):.3f} s after it, {len(gaps)} stragglers: one of Tansu's one-second "
            "looks); the outcomes are the sweeps' rows of the same runs. "
            "From " + "; ".join(notes) + "."]
    return out
