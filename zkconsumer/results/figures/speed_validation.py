"""docs/validation-plan-25.md: each run set drawn at its own speed and with its own stragglers.

Reads committed files only: validation plan 25's scoring (held-out runs), plans 24 and 23's runs
of the same cells with their own formation rows (the lab against itself, split the same way),
the diagnostic on plan 24's runs (``validation-25/diagnostic``), the speed reference's fit
(``set-speed/fit``: ``spark fit-speed`` on plans 20 to 23's sets), and plan 25's formation rows.
"""

from __future__ import annotations

import json
from collections import Counter

from zkconsumer.results.distributions import CellScore
from zkconsumer.results.figures.formation_validation import (
    StragglerSource,
    stragglers_source,
    stragglers_table,
)
from zkconsumer.results.figures.scale_distributions import load_scores, scores_in
from zkconsumer.results.figures.straggler_split import split_validation
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.real_runs import spread_rows
from zkconsumer.results.registry import Context, figure

HELD_OUT = 25
BEFORE = ((24, "scale/validation-24/formation-spread"),
          (23, "scale/validation-23/formation-spread"))
DIAGNOSTIC = f"scale/validation-{HELD_OUT}/diagnostic"
FIT = "scale/set-speed/fit"
SOURCES: tuple[StragglerSource, ...] = (
    (f"plan {HELD_OUT}", f"scale/validation-{HELD_OUT}/formation-spread",
     f"scale/validation-{HELD_OUT}/tansu/*"),)


@figure("scale-validation-25", source=f"results/scale/validation-{HELD_OUT}/scoring, "
                                      + ", ".join(f"results/scale/validation-{p}/tansu, "
                                                  f"results/{rows}" for p, rows in BEFORE)
                                      + f", results/{DIAGNOSTIC}")
def validation_25(ctx: Context) -> str:
    """Plan 25's scoring, plans 24 and 23's runs as a prediction of its runs (split the same
    way), its failing cells run by run, and the diagnostic on plan 24's runs."""
    return split_validation(ctx, HELD_OUT, BEFORE, DIAGNOSTIC,
                            "Disclosed before the runs: this plan's models and checks on plan "
                            "24's Tansu runs, with plan 24's formation rows")


def time_said(s: CellScore | None) -> str:
    """A cell's time to stable as the speed tables give it: the real median [IQR] / the model's
    median, marked where it fails; a dash where either side has none."""
    if s is None or s.real_tts is None or s.sim_tts is None or s.real_tts_iqr is None:
        return "–"
    q1, q3 = s.real_tts_iqr
    return (f"{s.real_tts:.2f} [{q1:.2f}–{q3:.2f}] / {s.sim_tts:.2f}"
            + ("" if s.tts_ok else " (fails)"))


def _speed_rows(label: str, role: str, scores: list[CellScore]) -> list[str]:
    """One row per group size a scoring drew at its set's speed: the factor, and each event's
    real median [IQR] beside the model's median."""
    by_size: dict[int, dict[str, CellScore]] = {}
    for s in scores:
        if "speed_factor" in dict(s.inputs):
            by_size.setdefault(s.key.members, {})[s.key.event] = s
    out = []
    for members, cells in sorted(by_size.items()):
        inputs = dict(next(iter(cells.values())).inputs)
        said = [time_said(cells.get(event)) for event in ("join", "leave")]
        out.append(f"| {label} | {role} | {members} | {inputs['formation_read_s']:.3f} | "
                   f"{inputs['speed_factor']:.3f} | {said[0]} | {said[1]} |")
    return out


@figure("speed-fit", source=f"results/{FIT}, results/{DIAGNOSTIC}, "
                            f"results/scale/validation-{HELD_OUT}/scoring")
def speed_fit(ctx: Context) -> str:
    """The speed reference: the sets it was fitted on, then the sets that judge it (plan 24's
    in the diagnostic, plan 25's), each with its formation read, its factor and its medians."""
    fit = json.loads((ctx.results / FIT / "fit.json").read_text())
    out = ["| run set | role | N | formation read, s (median over its runs) | factor | join: "
           "real median [IQR] / model median, s | leave: the same |",
           "|---|---|---|---|---|---|---|"]
    fitted: dict[str, dict[str, dict[str, float]]] = {}
    for cell in fit["cells"]:
        fitted.setdefault(cell["set"], {})[cell["event"]] = cell
    for name, cells in fitted.items():
        first = next(iter(cells.values()))
        said = [f"{cells[e]['real_tts']:.2f} / {cells[e]['model_tts']:.2f}" if e in cells
                else "–" for e in ("join", "leave")]
        out.append(f"| {name.replace('validation-', '')} | fitted on | {fit['members']} | "
                   f"{first['formation_read_s']:.3f} | {first['factor']:.3f} | {said[0]} | "
                   f"{said[1]} |")
    diagnostic, _ = scores_in(ctx.results / DIAGNOSTIC)
    out += _speed_rows("plan 24", "judged (diagnostic, read before)", diagnostic)
    held_out = ctx.results / f"scale/validation-{HELD_OUT}/scoring/scoring.json"
    if held_out.is_file():
        out += _speed_rows(f"plan {HELD_OUT}", "judged (held out)", load_scores(ctx, HELD_OUT)[0])
    prov = read_provenance(ctx.results / FIT)
    out += ["", f"Reference: {fit['reference_formation_read_s']:g} s of formation read, the "
            "one (on a 5 ms grid) that brings the model's medians nearest the fitted sets' real "
            f"ones in squared log error ({fit['loss']:.4f} over {len(fit['cells'])} cells). A "
            "set's factor is its formation read over the reference; the model's CPU-bound "
            "steps are stretched by it. The fitted sets' rows come from the fit (the real "
            "median only); the judged sets' from their scorings (model at 40 draws). Fitted "
            f"at revision `{prov.revision[:12]}` on {prov.date[:10]}; re-run: `{prov.command}`."]
    return "\n".join(out)


@figure("tansu-stragglers-25", source=stragglers_source(SOURCES))
def tansu_stragglers_25(ctx: Context) -> str:
    """Plan 25's Tansu formations: how many left stragglers, and what the runs after them did."""
    return "\n".join(stragglers_table(ctx, SOURCES))


# The Tansu classic sets whose formation rows say who straggled
STRAGGLER_ROWS = tuple(f"scale/validation-{plan}/formation-spread" for plan in range(21, 26))


@figure("straggler-members", source=", ".join(f"results/{rows}" for rows in STRAGGLER_ROWS))
def straggler_members(ctx: Context) -> str:
    """Which members the real formations left as stragglers, by member, at each group size and
    event: the model draws them uniformly among its candidates, the records do not."""
    out = ["| N | event | formations | stragglers | by member (times a straggler), the most "
           "frequent first | the newest member |", "|---|---|---|---|---|---|"]
    rows = [r for folder in STRAGGLER_ROWS for r in spread_rows(ctx.results / folder)
            if not r["run_id"].startswith("zk-")]
    for members in (12, 48):
        for event in ("join", "leave"):
            cell = [r for r in rows if int(r["members"]) == members and r["event"] == event]
            formations = {r["run_id"] for r in cell if r["kind"] == "event_lag"}
            late = Counter(r["member"] for r in cell if r["kind"] == "straggler")
            newest = f"m{members - 1:05d}"
            said = ", ".join(f"{m} ({k})"
                             for m, k in sorted(late.items(), key=lambda x: (-x[1], x[0])))
            out.append(f"| {members} | {event} | {len(formations)} | {sum(late.values())} | "
                       f"{said} | {newest}: {late.get(newest, 0)} |")
    out += ["", "Every formation of the Tansu broker-side sets of plans 21 to 25 "
            "(`eager-range` and `cooperative-sticky`), from their `straggler` rows; a "
            "formation may leave more than one straggler. In a join run the newest member of "
            "the formed group is the one the joiner takes a partition from at N = 12."]
    return "\n".join(out)
