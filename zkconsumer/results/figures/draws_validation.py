"""docs/validation-plan-27.md: the legacy cells on fresh runs, the model drawn 200 times a cell.

Reads committed files only: validation plan 27's scoring (held-out runs), plans 24 and 23's runs
of the same cells (the lab against itself), and the diagnostic on plan 26's zk-range runs and
plan 24's zk-leader-range runs (``validation-27/diagnostic``).
"""

from __future__ import annotations

from zkconsumer.results.figures.straggler_split import split_validation
from zkconsumer.results.registry import Context, figure

HELD_OUT = 27
BEFORE = ((24, "scale/validation-24/formation-spread"),
          (23, "scale/validation-23/formation-spread"))
DIAGNOSTIC = f"scale/validation-{HELD_OUT}/diagnostic"


@figure("scale-validation-27", source=f"results/scale/validation-{HELD_OUT}/scoring, "
                                      + ", ".join(f"results/scale/validation-{p}/tansu"
                                                  for p, _ in BEFORE)
                                      + f", results/{DIAGNOSTIC}")
def validation_27(ctx: Context) -> str:
    """Plan 27's scoring, plans 24 and 23's runs as a prediction of its runs, its failing cells
    run by run, and the diagnostic on the legacy sets read before it."""
    return split_validation(ctx, HELD_OUT, BEFORE, DIAGNOSTIC,
                            "Disclosed before the runs: this plan's models and checks on plan "
                            "26's zk-range runs and plan 24's zk-leader-range runs")
