"""docs/validation-plan-20.md: the legacy model with its stops on the producer's schedule.

Reads committed files only: validation plan 20's scoring (held-out runs), the diagnostic on
three run sets already read (``validation-20/diagnostic``), the fetch round ``calibrate
--delivery-onto`` measured (``calibration-10``), and the members' phases of plan 20's N = 12
runs beside the model's draws (``validation-20/phases``, ``spark rebalance-phases``).
"""

from __future__ import annotations

import json

from zkconsumer.results.figures.fetcher_stop_validation import (
    join_race,
    phases_table,
    read_phases,
)
from zkconsumer.results.figures.scale_distributions import (
    diagnostic_block,
    planned_sets,
    validation_block,
)
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure
from zkconsumer.tables import nearest_rank

HELD_OUT = 20
DIAGNOSTIC = f"scale/validation-{HELD_OUT}/diagnostic"
PHASES = f"scale/validation-{HELD_OUT}/phases"
STOP_GRID_PHASES = f"scale/validation-{HELD_OUT}/stop-grid-phases"  # the runs read before
ROUND = "scale/calibration-10"


@figure("scale-validation-20", source=f"results/scale/validation-{HELD_OUT}/scoring, "
                                      f"results/{DIAGNOSTIC}")
def validation_20(ctx: Context) -> str:
    """Plan 20's scoring, then the diagnostic on the run sets read before it."""
    return "\n".join([
        validation_block(ctx, HELD_OUT), "",
        *diagnostic_block(ctx, DIAGNOSTIC, "Disclosed before the runs: the same model on run "
                          "sets already read",
                          f"{planned_sets(ctx, DIAGNOSTIC)}, in that order, four rows each")])


@figure("scale-delivery-round", source=f"results/{ROUND}")
def delivery_round(ctx: Context) -> str:
    """What ``calibrate --delivery-onto`` measured: the lags and the round taken from them."""
    folder = ctx.results / ROUND
    raw = json.loads((folder / "calibration.delivery.json").read_text())
    lags = sorted(float(x) for x in raw["lags_ms"])
    prov = read_provenance(folder)
    quart = " / ".join(f"{nearest_rank(lags, q):.0f}" for q in (0.25, 0.5, 0.75))
    return "\n".join([
        "| messages | lag, ms: least / quartiles / most | fetch round (the span of a uniform "
        "fitted to the lags), ms | command |", "|---|---|---|---|",
        f"| {len(lags)} | {lags[0]:.0f} / {quart} / {lags[-1]:.0f} | "
        f"{raw['delivery_round_ms']:g} | `{prov.command}` |", "",
        "A message's lag: when a fetcher of two partitions received it, less when the lab's "
        "producer was scheduled to send it, less the smallest such lag. Measured "
        f"{prov.date[:16].replace('T', ' ')} UTC against an embedded {prov.broker}."])


@figure("scale-validation-20-phases", source=f"results/{PHASES}, results/{STOP_GRID_PHASES}")
def phases_20(ctx: Context) -> str:
    """The members' phases and the join's race, real and modelled, on plan 20's N = 12 runs and
    on the stop-grid runs read before it."""
    out = []
    for title, folder in (("Plan 20's N = 12 runs", ctx.results / PHASES),
                          ("The stop-grid runs (read before the plan)",
                           ctx.results / STOP_GRID_PHASES)):
        rows = read_phases(folder)
        prov = read_provenance(folder)
        out += [f"*{title}* (made at revision `{prov.revision[:12]}`: `{prov.command}`):", "",
                *phases_table(rows), "", *join_race(rows), ""]
    return "\n".join([
        *out, "Median [interquartile range], nearest rank, in ms; the race's columns after the "
        "event. Under the range assignor the joiner, named last, takes the last partition from "
        "the member ranked last before it. The model: plan 20's, the same draws beside both "
        "run sets."])
