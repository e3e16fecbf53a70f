"""docs/validation-plan-26.md: stragglers drawn where the records put them, each cell at its own
speed, and the race behind a legacy join's second attempt.

Reads committed files only: validation plan 26's scoring (held-out runs), plans 24 and 23's runs
of the same cells with their own formation rows (the lab against itself, split the same way),
the diagnostic on plan 25's runs (``validation-26/diagnostic``), the per-cell speed fit
(``set-speed/fit-cell``), the formation rows of plans 21 to 26 (who straggled), and the
rebalance phases of every zk-range N = 12 set since plan 20 (``validation-NN/phases``) beside
those sets' runs.
"""

from __future__ import annotations

import json
import statistics

from zkconsumer.results.distributions import CellKey, CellScore
from zkconsumer.results.figures.fetcher_stop_validation import read_phases
from zkconsumer.results.figures.formation_validation import (
    StragglerSource,
    stragglers_source,
    stragglers_table,
)
from zkconsumer.results.figures.scale_distributions import load_scores, scores_in
from zkconsumer.results.figures.speed_validation import time_said
from zkconsumer.results.figures.straggler_split import split_validation
from zkconsumer.results.judging import quartiles
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.real_runs import spread_rows, straggler_ranks, sweep_cell
from zkconsumer.results.registry import Context, figure

HELD_OUT = 26
BEFORE = ((24, "scale/validation-24/formation-spread"),
          (23, "scale/validation-23/formation-spread"))
DIAGNOSTIC = f"scale/validation-{HELD_OUT}/diagnostic"
FIT = "scale/set-speed/fit-cell"
SOURCES: tuple[StragglerSource, ...] = (
    (f"plan {HELD_OUT}", f"scale/validation-{HELD_OUT}/formation-spread",
     f"scale/validation-{HELD_OUT}/tansu/*"),)
# The formation rows plan 26 weighted its straggler draw by, and its own (held out)
RANK_ROWS = tuple(f"scale/validation-{plan}/formation-spread" for plan in range(21, 26))
HELD_OUT_ROWS = f"scale/validation-{HELD_OUT}/formation-spread"
# The lab's Spark herd runs: two tasks, member i in task i % 2, and task 0 starts its clients
# last (the model's LAB_LAST_STARTED), so the stragglers drawn are task 1's
LAB_TASKS, LAST_STARTED = 2, 0
# Every zk-range N = 12 run set since the legacy stops were put on the producer's schedule, and
# in its join the joiner and the member range gives it a partition from (the newest incumbent)
RACE_PLANS = tuple(range(20, 28))
JOINER, GIVER = "m00012", "m00011"
# the same cell on the other broker: (plan, its set's folder, the broker)
KAFKA_RACE = (28, "kafka-2.4.1", "apache-kafka-2.4.1")


@figure("scale-validation-26", source=f"results/scale/validation-{HELD_OUT}/scoring, "
                                      + ", ".join(f"results/scale/validation-{p}/tansu, "
                                                  f"results/scale/validation-{p}/kafka-2.4.1, "
                                                  f"results/{rows}" for p, rows in BEFORE)
                                      + f", results/{DIAGNOSTIC}")
def validation_26(ctx: Context) -> str:
    """Plan 26's scoring, plans 24 and 23's runs as a prediction of its runs (split the same
    way), its failing cells run by run, and the diagnostic on plan 25's runs."""
    return split_validation(ctx, HELD_OUT, BEFORE, DIAGNOSTIC,
                            "Disclosed before the runs: this plan's models and checks on plan "
                            "25's Tansu runs, the ranks counted on plans 21 to 24 and the "
                            "reference fitted on plans 20 to 24")


def _judged_rows(label: str, role: str, scores: list[CellScore]) -> list[str]:
    """One row per cell a scoring drew at its own speed."""
    out = []
    for s in scores:
        inputs = dict(s.inputs)
        if "speed_factor" not in inputs:
            continue
        out.append(f"| {label} | {role} | {s.key.members} | {s.key.event} | "
                   f"{inputs['formation_read_s']:.3f} | {inputs['speed_factor']:.3f} | "
                   f"{time_said(s)} |")
    return out


@figure("speed-fit-cell", source=f"results/{FIT}, results/{DIAGNOSTIC}, "
                                 f"results/scale/validation-{HELD_OUT}/scoring")
def speed_fit_cell(ctx: Context) -> str:
    """The per-cell speed reference: the cells it was fitted on, then the cells that judge it
    (plan 25's in the diagnostic, plan 26's), each with its own formation read and factor."""
    fit = json.loads((ctx.results / FIT / "fit.json").read_text())
    out = ["| run set | role | N | event | formation read, s (median over the cell's runs) | "
           "factor | time to stable: real median [IQR] / model median, s |",
           "|---|---|---|---|---|---|---|"]
    for cell in fit["cells"]:
        out.append(f"| {cell['set'].replace('validation-plan-', 'plan ')} | fitted on | "
                   f"{fit['members']} | {cell['event']} | {cell['formation_read_s']:.3f} | "
                   f"{cell['factor']:.3f} | {cell['real_tts']:.2f} / {cell['model_tts']:.2f} |")
    diagnostic, _ = scores_in(ctx.results / DIAGNOSTIC)
    out += _judged_rows("plan 25", "judged (diagnostic, read before)", diagnostic)
    if (ctx.results / f"scale/validation-{HELD_OUT}/scoring/scoring.json").is_file():
        out += _judged_rows(f"plan {HELD_OUT}", "judged (held out)",
                            load_scores(ctx, HELD_OUT)[0])
    prov = read_provenance(ctx.results / FIT)
    out += ["", f"Reference: {fit['reference_formation_read_s']:g} s of formation read, fitted "
            "per cell: each cell's factor is its own runs' median formation read over the "
            "reference, and the reference (on a 5 ms grid) brings the model's medians nearest "
            f"the fitted cells' real ones in squared log error ({fit['loss']:.4f} over "
            f"{len(fit['cells'])} cells). The diagnostic's reference was fitted the same way "
            "on plans 20 to 24 only. The fitted cells' rows come from the fit (the real median "
            "only); the judged cells' from their scorings (model at 40 draws). Fitted at "
            f"revision `{prov.revision[:12]}` on {prov.date[:10]}; re-run: `{prov.command}`."]
    return "\n".join(out)


@figure("straggler-ranks", source=", ".join(f"results/{rows}"
                                            for rows in (*RANK_ROWS, HELD_OUT_ROWS)))
def straggler_ranks_table(ctx: Context) -> str:
    """The weights the model draws stragglers by (plans 21 to 25), beside the fresh set's own
    stragglers by the same rank (plan 26)."""
    weights = straggler_ranks([r for rows in RANK_ROWS for r in spread_rows(ctx.results / rows)],
                              LAB_TASKS, LAST_STARTED)
    fresh_file = ctx.results / HELD_OUT_ROWS
    fresh = (straggler_ranks(spread_rows(fresh_file), LAB_TASKS, LAST_STARTED)
             if (fresh_file / "formation-spread.csv").is_file() else None)
    ranks = max(len(weights), len(fresh or ()))
    total, fresh_total = sum(weights), sum(fresh or ())
    out = ["| rank in task 1 | member at N = 12 | at N = 48 | stragglers, plans 21–25 (the "
           "weight) | share | stragglers, plan 26 (held out) | share |",
           "|---|---|---|---|---|---|---|"]
    for rank in range(ranks):
        k = weights[rank] if rank < len(weights) else 0
        member = LAB_TASKS * rank + 1
        said = "–"
        if fresh is not None:
            f = fresh[rank] if rank < len(fresh) else 0
            said = f"{f} | {f / fresh_total:.0%}" if fresh_total else f"{f} | –"
        out.append(f"| {rank} | {f'm{member:05d}' if member < 12 else '–'} | m{member:05d} | "
                   f"{k} | {k / total:.0%} | {said} |")
    if fresh is not None:
        never = sum(f for rank, f in enumerate(fresh)
                    if rank >= len(weights) or not weights[rank])
        out += ["", f"Plan {HELD_OUT}'s formations left {fresh_total} stragglers in task 1, "
                f"{never} of them at a rank the weights never draw."]
    out += ["", "Stragglers of the Tansu broker-side formations (eager-range and "
            "cooperative-sticky, N = 12 and 48, join and leave) in the Spark task that did not "
            "start its clients last, counted by the member's creation rank in its task (member "
            "i is rank i // 2 of task i % 2). The model draws a formation's stragglers among "
            "that task's members, never the one answered first, each with its rank's weight; a "
            "rank never seen to straggle is never drawn. At N = 12 the newest member, the one a "
            "joiner takes a partition from, is rank 5."]
    return "\n".join(out)


@figure("tansu-stragglers-26", source=stragglers_source(SOURCES))
def tansu_stragglers_26(ctx: Context) -> str:
    """Plan 26's Tansu formations: how many left stragglers, and what the runs after them did."""
    return "\n".join(stragglers_table(ctx, SOURCES))


def _ms(values: list[float]) -> str:
    if not values:
        return "–"
    q1, q3 = quartiles(values)
    return f"{statistics.median(values) * 1000:.0f} [{q1 * 1000:.0f}–{q3 * 1000:.0f}]"


def race_row(ctx: Context, plan: int, run_set: str = "tansu", broker: str = "tansu-0.6.0",
             label: str | None = None, phases_dir: str = "phases") -> str | None:
    """One zk-range N = 12 join set (plan ``plan``'s set ``run_set``, on ``broker``): its runs
    with a second attempt, the runs whose joiner planned before its giver's fetchers stopped,
    how often the two agree, and the two instants, from the set's ``spark rebalance-phases``
    rows (real members only, in the plan's folder ``phases_dir``); the row is headed ``label``
    (default: the plan)."""
    phases = ctx.results / f"scale/validation-{plan}/{phases_dir}"
    folder = ctx.results / f"scale/validation-{plan}/{run_set}/zk-range-n12"
    if not (phases / "phases.csv").is_file() or not folder.is_dir():
        return None
    plans: dict[int, float] = {}
    releases: dict[int, float] = {}
    for r in read_phases(phases):
        if (r["source"], r["protocol"], r["members"], r["event"]) != \
                ("real", "zk-range", "12", "join"):
            continue
        if r["member"] == JOINER and r["plan_ms"]:
            plans[int(r["seed"])] = float(r["plan_ms"]) / 1000
        elif r["member"] == GIVER and r["stop_ms"]:
            releases[int(r["seed"])] = (float(r["attempt_ms"]) + float(r["stop_ms"])) / 1000
    key = CellKey(run_set, broker, "zk-range", 12, 24, "join")
    runs = {int(raw["seed"]): run for raw, run in sweep_cell(folder, key)}
    both = sorted(set(runs) & set(plans) & set(releases))
    second = sum(runs[s].multi for s in runs)
    early = [s for s in both if plans[s] <= releases[s]]
    agree = sum((s in early) == runs[s].multi for s in both)
    return (f"| {label or plan} | {len(runs)} | {second} | {len(early)} of {len(both)} | "
            f"{agree} of {len(both)} | {_ms([plans[s] for s in both])} | "
            f"{_ms([releases[s] for s in both])} | "
            f"{_ms([plans[s] - releases[s] for s in both])} |")


RACE_HEAD = ("| plan | join runs | with a second attempt | joiner planned before its giver "
             "released | the two agree | joiner's plan, ms after the event: median [IQR] | "
             "giver's release, the same | plan minus release, the same |",
             "|---|---|---|---|---|---|---|---|")


@figure("join-race", source=", ".join(f"results/scale/validation-{p}/phases, "
                                      f"results/scale/validation-{p}/tansu/zk-range-n12"
                                      for p in RACE_PLANS)
        + f", results/scale/validation-{KAFKA_RACE[0]}/phases, "
        f"results/scale/validation-{KAFKA_RACE[0]}/{KAFKA_RACE[1]}/zk-range-n12")
def join_race(ctx: Context) -> str:
    """Why a legacy N = 12 join needs a second attempt in some sets more than others: the
    joiner's plan against the release of the partition it is given, set by set."""
    out = list(RACE_HEAD)
    out += [row for plan in RACE_PLANS if (row := race_row(ctx, plan)) is not None]
    plan, run_set, broker = KAFKA_RACE
    kafka = race_row(ctx, plan, run_set, broker, f"{plan}, Apache Kafka 2.4.1")
    out += [kafka] if kafka is not None else []
    prov = read_provenance(ctx.results / f"scale/validation-{RACE_PLANS[-1]}/phases")
    out += ["", f"Each set's zk-range N = 12 join runs on Tansu (the last row: plan {plan}'s "
            "set on Apache Kafka 2.4.1, the same lab on the other broker), from the `spark "
            f"rebalance-phases` rows of its raw records: the joiner's ({JOINER}) first plan, "
            f"and the end of the first stop of {GIVER}, the member range takes the joiner's "
            "partition from (24 partitions over 13 members), when its fetchers had stopped: "
            "the last step before it commits and deletes its owner znodes. A joiner that plans "
            "first meets that owner znode and tries again a backoff (1 s) later. A second "
            "attempt: more than one attempt or a conflict in the run's row. The rows of plan "
            f"{RACE_PLANS[-1]}: `{prov.command}` (revision `{prov.revision[:12]}`, "
            f"{prov.date[:10]}); the other plans' the same on their own runs."]
    return "\n".join(out)
