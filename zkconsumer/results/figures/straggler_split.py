"""docs/validation-plan-23.md: plan 22's cells on fresh runs, the Tansu classic cells judged by
whether their formation left stragglers.

Reads committed files only: validation plan 23's scoring (held-out runs), plans 22 and 21's runs
of the same cells with their own formation rows (the lab against itself, split the same way),
the diagnostic on the Tansu run sets read before (``validation-23/diagnostic``), and plan 23's
formation rows (``validation-23/formation-spread``) beside the runs' outcomes.
"""

from __future__ import annotations

import dataclasses
import json

from zkconsumer.results.distributions import CellScore
from zkconsumer.results.figures.formation_validation import (
    StragglerSource,
    stragglers_source,
    stragglers_table,
)
from zkconsumer.results.figures.scale_distributions import (
    diagnostic_block,
    load_scores,
    planned_sets,
    replication_paragraph,
    runs_legend,
    runs_table,
    validation_block,
)
from zkconsumer.results.judging import Run
from zkconsumer.results.real_runs import spread_rows, straggler_runs, sweep_cell
from zkconsumer.results.registry import Context, figure

HELD_OUT = 23
# the plans whose runs of the same cells stand beside this one's, each with the folder of the
# formation rows read off its Tansu runs
BEFORE = ((22, "scale/validation-22/formation-spread"),
          (21, "scale/validation-21/formation-spread"))
DIAGNOSTIC = f"scale/validation-{HELD_OUT}/diagnostic"
SOURCES: tuple[StragglerSource, ...] = (
    (f"plan {HELD_OUT}", f"scale/validation-{HELD_OUT}/formation-spread",
     f"scale/validation-{HELD_OUT}/tansu/*"),)


def split_replication(ctx: Context, n: int, before: tuple[tuple[int, str], ...]
                      ) -> tuple[list[CellScore], list[CellScore]]:
    """The real runs of the plans ``before`` (pooled, each run marked by its own plan's
    formation rows on the sets plan ``n`` splits), scored as if they were the model of plan
    ``n``'s real runs, and plan ``n``'s own scores; a split plan cannot take the earlier runs
    from their scorings, which did not record the stragglers."""
    scores, _ = load_scores(ctx, n)
    split = {s["name"] for s in _plan_sets(ctx, n) if s.get("formation_spread")}
    pooled: dict[tuple[object, str], tuple[Run, ...]] = {}
    for plan, rows in before:
        # a run id names no broker: the rows read off one broker's runs mark that set's only
        late = straggler_runs(spread_rows(ctx.results / rows))
        folders = {s["name"]: s["folder"] for s in _plan_sets(ctx, plan)}
        for s in scores:
            folder = (ctx.results.parent / folders[s.key.set_name]
                      / f"{s.key.protocol}-n{s.key.members}")
            marked = late if s.key.set_name in split else set()
            found = tuple(run for _, run in sweep_cell(folder, s.key, marked))
            pooled[(s.key, s.model)] = pooled.get((s.key, s.model), ()) + found
    name = "the runs of plans " + " and ".join(str(p) for p, _ in before)
    return ([dataclasses.replace(s, sim=pooled[(s.key, s.model)], model=name) for s in scores],
            scores)


def _plan_sets(ctx: Context, plan: int) -> list[dict[str, str]]:
    return list(json.loads((ctx.results / f"scale/validation-plan-{plan}.json").read_text())
                ["sets"])


@figure("scale-validation-23", source=f"results/scale/validation-{HELD_OUT}/scoring, "
                                      + ", ".join(f"results/scale/validation-{p}/tansu, "
                                                  f"results/scale/validation-{p}/kafka-2.4.1, "
                                                  f"results/{rows}" for p, rows in BEFORE)
                                      + f", results/{DIAGNOSTIC}")
def validation_23(ctx: Context) -> str:
    """Plan 23's scoring, plans 22 and 21's runs as a prediction of its runs (split the same
    way), its failing cells run by run, and the diagnostic on the run sets read before it."""
    return split_validation(ctx, HELD_OUT, BEFORE, DIAGNOSTIC,
                            "Disclosed before the runs: the split on run sets already read")


def split_validation(ctx: Context, n: int, before: tuple[tuple[int, str], ...],
                     diagnostic: str, what: str) -> str:
    """A split plan ``n``'s scoring, the runs of the plans ``before`` as a prediction of its
    runs (:func:`split_replication`), its failing cells run by run, and its ``diagnostic``
    (a scoring folder, said as ``what``)."""
    scores, data = load_scores(ctx, n)
    plans = tuple(p for p, _ in before)
    out = [validation_block(ctx, n), "",
           replication_paragraph(n, plans, *split_replication(ctx, n, before)), ""]
    if any(s.judged and not s.ok for s in scores):
        out += ["The failing cells run by run:", "", *runs_table(ctx, n), "",
                runs_legend(int(data["sim_draws"]), stragglers=True), ""]
    out += diagnostic_block(ctx, diagnostic, what, f"{planned_sets(ctx, diagnostic)}, in that "
                            "order")
    return "\n".join(out)


@figure("tansu-stragglers-23", source=stragglers_source(SOURCES))
def tansu_stragglers_23(ctx: Context) -> str:
    """Plan 23's Tansu formations: how many left stragglers, and what the runs after them did."""
    return "\n".join(stragglers_table(ctx, SOURCES))
