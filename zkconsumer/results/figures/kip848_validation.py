"""docs/validation-plan-11.md and 15 to 19: the KIP-848 profiles against Apache Kafka 4.0.2, on
consumer-uniform (plan 11), consumer-range (plan 15 with the uniform profile, plans 17 to 19
with the range model) and static members (plan 16).

Reads committed files only: the KIP-848 plans' scorings (held-out runs), the fitting runs'
scoring (``results/scale/kip848-fit/scoring``, in sample) and the formation spread the
model's spans were read from (``results/scale/kip848-fit/formation-spread.csv``, written by
``zkconsumer spark formation-spread``).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from zkconsumer.results.distributions import (
    CellScore,
    pass_line,
    score_table,
)
from zkconsumer.results.figures.scale_distributions import (
    RUNS_LEGEND,
    diagnostic_block,
    load_scores,
    plot_protocol,
    runs_table,
    scores_in,
)
from zkconsumer.results.provenance import read_provenance, recorded_heartbeat_ms
from zkconsumer.results.registry import Context, figure
from zkconsumer.scenarios.timing import Timing
from zkconsumer.sim.formation import (
    KIP848,
    KIP848_IDLE_SCHEDULES_S,
    KIP848_SCHEDULES_S,
    lab_event_after_change_s,
)
from zkconsumer.sim.kip848 import JOINER_START_S
from zkconsumer.tables import nearest_rank

FIT = "scale/kip848-fit"
SPREAD = f"{FIT}/formation-spread.csv"
HELD_OUT = 11
RANGE_HELD_OUT = 15  # the same profile on consumer-range


def _sets_tables(scores: list[CellScore], heartbeats: dict[str, int]) -> list[str]:
    """One table per run set (the sets share a broker and differ by its heartbeat)."""
    out: list[str] = []
    for name in dict.fromkeys(s.key.set_name for s in scores):
        cells = [s for s in scores if s.key.set_name == name]
        out += [f"*Run set `{name}`: KIP-848 heartbeat {heartbeats[name]} ms* "
                f"({pass_line(cells)})", "", *score_table(cells), ""]
    return out


def set_heartbeats(repo: Path, plan_path: Path) -> dict[str, int]:
    """Each run set's KIP-848 heartbeat interval, as its runs' ``meta.json`` recorded it."""
    plan = json.loads(plan_path.read_text())
    out = {}
    for s in plan["sets"]:
        hbs = {recorded_heartbeat_ms(m.parent) for m in (repo / s["folder"]).glob("*/meta.json")}
        hb = next(iter(hbs)) if len(hbs) == 1 else None
        if hb is None:
            raise ValueError(f"{s['folder']}: its runs name {hbs or 'no'} KIP-848 heartbeat "
                             "intervals (one expected)")
        out[s["name"]] = hb
    return out


def held_out_block(ctx: Context, plan: int, protocol: str) -> str:
    """A KIP-848 plan's scoring on Apache Kafka 4.0.2: one table per heartbeat, the plot, and
    any failing cell run by run."""
    scores, data = load_scores(ctx, plan)
    repo = ctx.results.parent
    heartbeats = set_heartbeats(repo, ctx.results / f"scale/validation-plan-{plan}.json")
    prov = data["provenance"]
    models = ", ".join(f"`{m}`" for m in sorted({s.model for s in scores}))
    out = [f"**{pass_line(scores)}** (target: 80 %). Tolerances: {data['tolerances']}.", "",
           *_sets_tables(scores, heartbeats),
           f"Real: every run of the cell on Apache Kafka 4.0.2 (median, interquartile range, "
           f"and the Wilson 95 % interval of the share with more than one attempt or a "
           f"conflict); model: {data['sim_draws']} seeded draws of {models} with the heartbeat "
           f"interval the runs' broker gave. Scored at revision `{prov['revision'][:12]}`. "
           f"Re-run: `{prov['command']}`.", ""]
    if any(s.judged and not s.ok for s in scores):
        out += ["The failing cells run by run:", "", *runs_table(ctx, plan), "",
                RUNS_LEGEND, ""]
    name = f"validation-{plan}-{protocol}.svg"
    plot_protocol(scores, protocol, ctx.figures / name,
                  label_of=lambda s: (f"{heartbeats[s.key.set_name]} ms heartbeat\n"
                                      f"N={s.key.members} {s.key.event}"),
                  legend_loc="center right")
    out.append(f"![{protocol} on Apache Kafka 4.0.2: real runs (filled) vs {models} "
               f"draws (open)](figures/{name})")
    return "\n".join(out)


@figure("scale-validation-11", source=f"results/scale/validation-{HELD_OUT}/scoring")
def validation_11(ctx: Context) -> str:
    """Plan 11's scoring (consumer-uniform)."""
    return held_out_block(ctx, HELD_OUT, "consumer-uniform")


RANGE_MODEL = f"scale/validation-{RANGE_HELD_OUT}/range-model"


@figure("scale-validation-15", source=f"results/scale/validation-{RANGE_HELD_OUT}/scoring, "
                                     f"results/{RANGE_MODEL}")
def validation_15(ctx: Context) -> str:
    """Plan 15's scoring (consumer-range, the same profile), then its runs drawn by the range
    model written after reading them."""
    return "\n".join([
        held_out_block(ctx, RANGE_HELD_OUT, "consumer-range"), "",
        *diagnostic_block(ctx, RANGE_MODEL, "The same runs drawn by the range model",
                          "`kip848-range`, written after they were read: a diagnostic, not a "
                          "validation")])


STATIC_TYPES = "scale/validation-16/request-types"


@figure("scale-validation-16", source="results/scale/validation-16/scoring, "
                                     f"results/{STATIC_TYPES}")
def validation_16(ctx: Context) -> str:
    """Plan 16's scoring (static members), and the requests by type of its N = 48 joins at
    1000 ms."""
    with open(ctx.results / STATIC_TYPES / "hb1000-n48.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh)
                if r["event"] == "join" and r["counted"] == "True" and int(r["count"])]
    types = dict.fromkeys(r["request"] for r in rows)
    said = "; ".join(
        f"{t}: " + " ".join(r["count"] for r in sorted(rows, key=lambda r: int(r["seed"]))
                            if r["request"] == t) for t in types)
    prov = read_provenance(ctx.results / STATIC_TYPES)
    return "\n".join([
        held_out_block(ctx, 16, "static-consumer-uniform"), "",
        f"The N = 48 joins at 1000 ms by request type, in seed order (`results/{STATIC_TYPES}`, "
        f"`{prov.command}`): {said}. No other type was sent in their counting windows."])


@figure("scale-validation-17", source="results/scale/validation-17/scoring")
def validation_17(ctx: Context) -> str:
    """Plan 17's scoring (the range model on new consumer-range runs)."""
    return held_out_block(ctx, 17, "consumer-range")


OBSERVER_DIAGNOSTIC = "scale/validation-18/observer-diagnostic"
MORE_DRAWS = "scale/validation-18/draws-200"


@figure("scale-validation-18", source="results/scale/validation-18/scoring, "
                                     f"results/{OBSERVER_DIAGNOSTIC}, results/{MORE_DRAWS}")
def validation_18(ctx: Context) -> str:
    """Plan 18's scoring (the range model under the lab's observer), then two diagnostics on
    runs already read: plan 17's runs drawn by the same model, and plan 18's against 200
    draws."""
    out = [held_out_block(ctx, 18, "consumer-range")]
    for folder, what in ((OBSERVER_DIAGNOSTIC, "Plan 17's runs drawn by the same model"),
                         (MORE_DRAWS, "Plan 18's runs against 200 draws of the same model")):
        out += ["", *diagnostic_block(ctx, folder, what,
                                      "runs already read: a diagnostic, not a validation")]
    return "\n".join(out)


BY_SIDE_DIAGNOSTIC = "scale/validation-19/plan-18-by-side"


@figure("scale-validation-19", source="results/scale/validation-19/scoring, "
                                     f"results/{BY_SIDE_DIAGNOSTIC}")
def validation_19(ctx: Context) -> str:
    """Plan 19's scoring (the runs split by whether anything moved), then plan 18's runs under
    the same rules (already read: a diagnostic)."""
    return "\n".join([
        held_out_block(ctx, 19, "consumer-range"), "",
        *diagnostic_block(ctx, BY_SIDE_DIAGNOSTIC, "Plan 18's runs under the same rules",
                          "already read: a diagnostic, not a validation")])


@figure("kip848-fit", source=f"results/{FIT}")
def kip848_fit(ctx: Context) -> str:
    """What the model's formation spans were read from, and how it scored on those runs."""
    with open(ctx.results / SPREAD, newline="") as fh:
        rows = list(csv.DictReader(fh))
    lag = lab_event_after_change_s(Timing().quiet_s)
    said = {
        "schedule": ("a member's schedule against the formation's last change",
                     f"{KIP848_SCHEDULES_S[0]:+.2f} to {KIP848_SCHEDULES_S[1]:+.2f} s"),
        "idle_grant": ("a member given nothing: its grant after the event, against the "
                       "last change", f"{KIP848_IDLE_SCHEDULES_S[0]:+.2f} to "
                       f"{KIP848_IDLE_SCHEDULES_S[1]:+.2f} s"),
        "tick_lead": ("its statistics sample before its schedule",
                      f"{KIP848.tick_lead_lo_s:.2f} to {KIP848.tick_lead_hi_s:.2f} s"),
        "event_lag": ("the event after the last change (the lab's quiet rule; the model "
                      "draws it as for every protocol)", f"{lag[0]:.2f} to {lag[1]:.2f} s"),
    }
    out = ["| measured on the fitting runs | heartbeat | n | 5 % | median | 95 % | the model |",
           "|---|---|---|---|---|---|---|"]
    for kind, (what, model) in said.items():
        for hb in sorted({r["heartbeat_ms"] for r in rows}, key=int, reverse=True):
            values = [float(r["seconds"]) for r in rows
                      if r["kind"] == kind and r["heartbeat_ms"] == hb]
            lo, mid, hi = (nearest_rank(values, q) for q in (0.05, 0.5, 0.95))
            if lo is None or mid is None or hi is None:
                raise ValueError(f"results/{SPREAD}: no {kind} rows at {hb} ms")
            out.append(f"| {what} | {hb} ms | {len(values)} | {lo:+.3f} s | {mid:+.3f} s | "
                       f"{hi:+.3f} s | {model} |")
    fit, _ = scores_in(ctx.results / FIT / "scoring")
    runs = len({r["run_id"] for r in rows})
    out += ["", f"From {runs} fitting runs (`results/{FIT}`: Apache Kafka 4.0.2, "
            f"`consumer-uniform`, N = 12 and 48, P = 24, join and leave, heartbeats 5000 and "
            f"1000 ms), re-run: `{read_provenance(ctx.results / FIT).command}`. The joiner's "
            f"start-up in the model: {JOINER_START_S * 1000:.0f} ms. In sample, the model "
            f"scores {pass_line(fit)} on these runs (`results/{FIT}/scoring`): a fit, not a "
            f"validation."]
    return "\n".join(out)
