"""docs/validation-plan-21.md: plan 10's cells again, on the Tansu formation the records show.

Reads committed files only: validation plan 21's scoring (held-out runs), plan 10's runs of
the same cells (the lab against itself), the diagnostic on the Tansu run sets read before
(``validation-21/diagnostic``), and the formation rows ``spark formation-spread`` read off the
runs made to look at it (``tansu-formation``).
"""

from __future__ import annotations

import csv
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
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure
from zkconsumer.tables import nearest_rank

HELD_OUT = 21
BEFORE = 10  # the plan whose cells this one repeats
DIAGNOSTIC = f"scale/validation-{HELD_OUT}/diagnostic"
FORMATION = "scale/tansu-formation"
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


def _cell(run_id: str) -> str:
    """``cooperative-sticky-n12-p24-join-s0-ab12cd`` -> ``cooperative-sticky``."""
    return run_id.split("-n", 1)[0]


@figure("tansu-formation", source=f"results/{FORMATION}")
def tansu_formation(ctx: Context) -> str:
    """Where the Tansu runs' formations left each task's clients and each member's answer."""
    folder = ctx.results / FORMATION
    with open(folder / "formation-spread.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    ticks: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    leads: dict[int, list[float]] = defaultdict(list)
    for r in rows:
        if r["kind"] == "task_tick":
            ticks[(_cell(r["run_id"]), int(r["members"]), r["event"])].append(
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
