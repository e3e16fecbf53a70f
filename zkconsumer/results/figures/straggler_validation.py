"""docs/validation-plan-22.md: plan 21's cells on fresh runs, with the formation's stragglers.

Reads committed files only: validation plan 22's scoring (held-out runs), plans 21 and 10's
runs of the same cells (the lab against itself), the diagnostic on the Tansu run sets read
before (``validation-22/diagnostic``), and the formation rows ``spark formation-spread`` read
off plan 22's Tansu broker runs (``validation-22/formation-spread``) beside their outcomes: how
many of the held-out formations left stragglers.
"""

from __future__ import annotations

from zkconsumer.results.figures.formation_validation import (
    StragglerSource,
    stragglers_source,
    stragglers_table,
)
from zkconsumer.results.figures.scale_distributions import (
    diagnostic_block,
    load_scores,
    planned_sets,
    replication_said,
    runs_legend,
    runs_table,
    validation_block,
)
from zkconsumer.results.registry import Context, figure

HELD_OUT = 22
BEFORE = (21, 10)  # the plans whose runs of the same cells stand beside this one's
DIAGNOSTIC = f"scale/validation-{HELD_OUT}/diagnostic"
SOURCES: tuple[StragglerSource, ...] = (
    (f"plan {HELD_OUT}", f"scale/validation-{HELD_OUT}/formation-spread",
     f"scale/validation-{HELD_OUT}/tansu/*"),)


@figure("scale-validation-22", source=f"results/scale/validation-{HELD_OUT}/scoring, "
                                      + ", ".join(f"results/scale/validation-{p}/scoring"
                                                  for p in BEFORE)
                                      + f", results/{DIAGNOSTIC}")
def validation_22(ctx: Context) -> str:
    """Plan 22's scoring, plans 21 and 10's runs as a prediction of its runs, its failing cells
    run by run beside plan 21's, and the diagnostic on the run sets read before it."""
    scores, data = load_scores(ctx, HELD_OUT)
    out = [validation_block(ctx, HELD_OUT), "", replication_said(ctx, HELD_OUT, BEFORE), ""]
    if any(s.judged and not s.ok for s in scores):
        out += [f"The failing cells run by run, beside plan {BEFORE[0]}'s runs of the same "
                "cells:", "", *runs_table(ctx, HELD_OUT, BEFORE[0]), "",
                runs_legend(int(data["sim_draws"])), ""]
    out += diagnostic_block(ctx, DIAGNOSTIC, "Disclosed before the runs: the same models on "
                            "run sets already read",
                            f"{planned_sets(ctx, DIAGNOSTIC)}, in that order")
    return "\n".join(out)


@figure("tansu-stragglers-22", source=stragglers_source(SOURCES))
def tansu_stragglers_22(ctx: Context) -> str:
    """Plan 22's Tansu formations: how many left stragglers, and what the runs after them did."""
    return "\n".join(stragglers_table(ctx, SOURCES))
