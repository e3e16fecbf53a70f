"""docs/validation-plan-27.md: the legacy cells on fresh runs, the model drawn 200 times a cell.

Reads committed files only: validation plan 27's scoring (held-out runs), plans 24 and 23's runs
of the same cells (the lab against itself), the diagnostic on plan 26's zk-range runs and
plan 24's zk-leader-range runs (``validation-27/diagnostic``), and every zk-range N = 12 join
set since plan 20 (``validation-NN/tansu/zk-range-n12``), pooled against the model's share.
"""

from __future__ import annotations

from zkconsumer.results.distributions import CellKey
from zkconsumer.results.figures.rank_validation import RACE_PLANS
from zkconsumer.results.figures.scale_distributions import load_scores
from zkconsumer.results.figures.splitbrain_text import wilson
from zkconsumer.results.figures.straggler_split import split_validation
from zkconsumer.results.proportions import homogeneity_p
from zkconsumer.results.real_runs import sweep_cell
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


JOIN_12 = CellKey("tansu", "tansu-0.6.0", "zk-range", 12, 24, "join")


def second_attempts(ctx: Context, folder: str) -> tuple[int, int]:
    """A zk-range N = 12 join folder's runs with a second attempt, and its runs: (k, n)."""
    runs = [run for _, run in sweep_cell(ctx.results / folder, JOIN_12)]
    return sum(r.multi for r in runs), len(runs)


def share_row(label: str, k: int, n: int, model: float) -> str:
    """A row of the table: the share with its Wilson interval, and whether the model's is in it."""
    low, high = wilson(k, n)
    return (f"| {label} | {n} | {k} of {n} [{low:.2f}–{high:.2f}] | "
            f"{'yes' if low <= model <= high else 'no'} |")


@figure("join-share-sets", source=", ".join(f"results/scale/validation-{p}/tansu/zk-range-n12"
                                            for p in RACE_PLANS)
        + f", results/scale/validation-{HELD_OUT}/scoring")
def join_share_sets(ctx: Context) -> str:
    """The zk-range N = 12 join's share of runs with a second attempt, set by set and pooled,
    against the model's share as plan 27 drew it: whether the sets differ beyond sampling."""
    scores, data = load_scores(ctx, HELD_OUT)
    model = next(s for s in scores if s.key == JOIN_12).sim_multi_share
    counts = []
    out = ["| plan | runs | with a second attempt [95 %] | the model's share inside |",
           "|---|---|---|---|"]
    for plan in RACE_PLANS:
        counts.append(second_attempts(ctx, f"scale/validation-{plan}/tansu/zk-range-n12"))
        out.append(share_row(str(plan), *counts[-1], model))
    k_all, n_all = sum(k for k, _ in counts), sum(n for _, n in counts)
    out.append(share_row("all", k_all, n_all, model))
    p = homogeneity_p(counts)
    out += ["", f"Model: {model:.3f}, the share of plan {HELD_OUT}'s {data['sim_draws']} draws "
            f"(the model every row is compared with; plans {RACE_PLANS[0]} to {HELD_OUT - 1} "
            "were judged on earlier versions of it). A second attempt: more than one attempt or "
            "a conflict in the run's row. Intervals: Wilson 95 %. "
            f"**Do the sets share one proportion?** If the {n_all} runs' {k_all} second "
            f"attempts were dealt among the {len(counts)} sets at random, sets as far apart as "
            f"these would come up with probability {p:.4f} (Fisher's exact test on Pearson's "
            "statistic, conditioned on the total: `zkconsumer.results.proportions`)."]
    return "\n".join(out)
