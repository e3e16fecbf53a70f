"""docs/validation-plan-13.md: the legacy model with a rebalance's fetcher stop measured.

Reads committed files only: validation plan 13's scoring (held-out runs, the model it
judged), the same runs scored again with the model as plan 10 judged it
(``validation-13/rescored``), plan 10's scoring of the same cells, the members' phases of its
N = 12 runs and of the model's draws (``validation-13/phases``, ``spark rebalance-phases``),
and the stops
``calibrate --fetcher-stop-onto`` timed (``calibration-8``: one fetcher; ``calibration-9``:
one fetcher again and six of one process together).
"""

from __future__ import annotations

import csv
import json
from typing import Any

from zkconsumer.results.distributions import (
    DistTolerances,
    pass_line,
    score_from_json,
    score_table,
)
from zkconsumer.results.figures.scale_distributions import load_scores, validation_block
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure
from zkconsumer.tables import nearest_rank

PHASES = "scale/validation-13/phases"
HELD_OUT = 13
BEFORE = 10  # the last plan that judged the same cells with the model as reverted
RESCORED = f"scale/validation-{HELD_OUT}/rescored"
STOPS = ("scale/calibration-8", "scale/calibration-9")


def _stops_said(raw: dict[str, Any]) -> str:
    stops = sorted(raw["stops_ms"])
    return (f"{len(stops)} stops, {stops[0]:.0f} to {stops[-1]:.0f} ms, median "
            f"{nearest_rank(stops, 0.5):.0f} ms; uniform ends {raw['fetcher_stop_min_ms']:g} to "
            f"{raw['fetcher_stop_max_ms']:g} ms")


@figure("scale-fetcher-stops", source=", ".join(f"results/{s}" for s in STOPS))
def fetcher_stops(ctx: Context) -> str:
    """Each measurement's stops alone, its crowds of six (if measured), and the command."""
    out = ["| calibration | one fetcher of 2 partitions, idle topic, stop asked at a random "
           "moment | six fetchers of one process stopped together under the lab's traffic, "
           "per crowd (ms) | ended together: within 10 ms of their crowd's median (fetchers "
           "on one common poll grid that would give as many) | command |",
           "|---|---|---|---|---|"]
    for folder in STOPS:
        raw = json.loads((ctx.results / folder / "calibration.fetcher-stop.json").read_text())
        crowds = raw.get("crowd_stops_ms") or []
        said = "; ".join(" ".join(f"{x:.0f}" for x in c) for c in crowds) or "not measured"
        step = (f"{raw['in_step_share']:.0%} ({raw['in_step_fraction']:.0%})"
                if crowds else "—")
        out.append(f"| `{folder.split('/')[-1]}` | {_stops_said(raw)} | {said} | {step} | "
                   f"`{read_provenance(ctx.results / folder).command}` |")
    out += ["", "In brackets: the share of fetchers on one common poll grid (the rest "
            "independent, every stop cut short by a message at the traffic's rate) whose "
            "crowds end as close together; 0 % is independent polls. The uniform's ends are "
            "the extremes widened by the mean gap between the sorted stops."]
    return "\n".join(out)


def _rescored(ctx: Context) -> tuple[list[Any], dict[str, Any]]:
    data = json.loads((ctx.results / RESCORED / "scoring.json").read_text())
    tol = DistTolerances(**data["tolerance_values"])
    return [score_from_json(c, tol, int(data["real_seeds"])) for c in data["cells"]], data


@figure("scale-validation-13", source=f"results/scale/validation-{HELD_OUT}/scoring, "
                                      f"results/{RESCORED}, "
                                      f"results/scale/validation-{BEFORE}/scoring")
def validation_13(ctx: Context) -> str:
    """Plan 13's scoring, the same runs with the model as plan 10 judged it, and plan 10's
    scoring of the same cells."""
    out = [validation_block(ctx, HELD_OUT), ""]
    again, data = _rescored(ctx)
    out += [f"*The same runs, scored with the model as plan {BEFORE} judged it* (a rebalance's "
            f"stop under traffic waits the leave's whole poll; revision "
            f"`{data['provenance']['revision'][:12]}`, `{data['provenance']['command']}` "
            f"into `results/{RESCORED}`): {pass_line(again)}.", "", *score_table(again), ""]
    scores, _ = load_scores(ctx, HELD_OUT)
    cells = {(s.key.protocol, s.key.members, s.key.event) for s in scores}
    before = [s for s in load_scores(ctx, BEFORE)[0]
              if (s.key.protocol, s.key.members, s.key.event) in cells and s.judged]
    said = ", ".join(f"N = {s.key.members} {s.key.event} {'pass' if s.ok else 'fail'}"
                     for s in before)
    out.append(f"The same cells in plan {BEFORE} (that model, its own runs): "
               f"{sum(s.ok for s in before)} of {len(before)} ({said}).")
    return "\n".join(out)


def _quartiles(values: list[float]) -> str:
    if not values:
        return "—"
    return (f"{nearest_rank(values, 0.5):.0f} [{nearest_rank(values, 0.25):.0f}–"
            f"{nearest_rank(values, 0.75):.0f}]")


@figure("scale-rebalance-phases", source=f"results/{PHASES}")
def rebalance_phases(ctx: Context) -> str:
    """Per event, real members and the model's: the stop and the claim, median [IQR]."""
    folder = ctx.results / PHASES
    with open(folder / "phases.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = ["| N | event | members | stop: first attempt to fetchers stopped, ms | claim: "
           "fetchers stopped to fetching again, ms | members that met an owner conflict |",
           "|---|---|---|---|---|---|"]
    cells = dict.fromkeys((r["members"], r["event"]) for r in rows)
    for members, event in cells:
        for source in ("real", "model"):
            part = [r for r in rows if (r["members"], r["event"], r["source"])
                    == (members, event, source)]
            if not part:
                continue
            runs = len({(r["run_id"], r["seed"]) for r in part})
            stops = [float(r["stop_ms"]) for r in part if r["stop_ms"]]
            claims = [float(r["claim_ms"]) for r in part if r["claim_ms"]]
            conflicts = (f"{sum(r['conflict'] == 'True' for r in part)} of {len(part)}"
                         if source == "real" else "—")
            label = "real" if source == "real" else "model"
            out.append(f"| {members} | {event} | {label}: {len(part)} in {runs} "
                       f"{'runs' if source == 'real' else 'draws'} | {_quartiles(stops)} | "
                       f"{_quartiles(claims)} | {conflicts} |")
    prov = read_provenance(folder)
    out += ["", f"Median [interquartile range], nearest rank. A member that never fetched "
            f"again within the job's horizon has no claim. The model: the rule plan "
            f"{BEFORE} judged. Made at revision `{prov.revision[:12]}`: `{prov.command}` (the "
            f"raw folder is the N = 12 run set's local output)."]
    return "\n".join(out)
