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
    pass_line,
    score_table,
)
from zkconsumer.results.figures.scale_distributions import (
    load_scores,
    scores_in,
    validation_block,
)
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


@figure("scale-validation-13", source=f"results/scale/validation-{HELD_OUT}/scoring, "
                                      f"results/{RESCORED}, "
                                      f"results/scale/validation-{BEFORE}/scoring")
def validation_13(ctx: Context) -> str:
    """Plan 13's scoring, the same runs with the model as plan 10 judged it, and plan 10's
    scoring of the same cells."""
    out = [validation_block(ctx, HELD_OUT), ""]
    again, data = scores_in(ctx.results / RESCORED)
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
    prov = read_provenance(folder)
    return "\n".join([*phases_table(read_phases(folder)), "", (
        f"Median [interquartile range], nearest rank. A member that never fetched "
        f"again within the job's horizon has no claim. The model: the rule plan "
        f"{BEFORE} judged. Made at revision `{prov.revision[:12]}`: `{prov.command}` (the "
        f"raw folder is the N = 12 run set's local output).")])


def read_phases(folder: Any) -> list[dict[str, str]]:
    """The rows of ``folder/phases.csv`` (``spark rebalance-phases``)."""
    with open(folder / "phases.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def phases_table(rows: list[dict[str, str]], tag: str = "") -> list[str]:
    """The phases of :func:`read_phases` rows per cell, real members and the model's, median
    [IQR]; the read (stopped to the plan) where the file has it; ``tag`` follows each row's
    N (where rows of several files share one table)."""
    reads = bool(rows) and "read_ms" in rows[0]
    out = ["| N | event | members | stop: first attempt to fetchers stopped, ms | "
           + ("read: fetchers stopped to the plan decided, ms | " if reads else "")
           + "claim: fetchers stopped to fetching again, ms | members that met an owner "
           "conflict |", "|---|---|---|---|---|---|" + ("---|" if reads else "")]
    cells = dict.fromkeys((r["members"], r["event"]) for r in rows)
    for members, event in cells:
        for source in ("real", "model"):
            part = [r for r in rows if (r["members"], r["event"], r["source"])
                    == (members, event, source) and r["stop_ms"]]  # a joiner stops nothing
            if not part:
                continue
            runs = len({(r["run_id"], r["seed"]) for r in part})

            def phase(name: str, part: list[dict[str, str]] = part) -> str:
                return _quartiles([float(r[name]) for r in part if r[name]])
            conflicts = (f"{sum(r['conflict'] == 'True' for r in part)} of {len(part)}"
                         if source == "real" else "—")
            out.append(f"| {members}{tag} | {event} | {source}: {len(part)} in {runs} "
                       f"{'runs' if source == 'real' else 'draws'} | {phase('stop_ms')} | "
                       + (f"{phase('read_ms')} | " if reads else "")
                       + f"{phase('claim_ms')} | {conflicts} |")
    return out


GRID = "scale/stop-grid"


@figure("scale-stop-grid", source=f"results/{GRID}")
def stop_grid(ctx: Context) -> str:
    """Where the real stops ended on each member's own poll grid, per event, the plot, and
    the members' phases beside the model's."""
    from zkconsumer.results.figures.splitbrain_text import wilson

    folder = ctx.results / GRID
    prov = read_provenance(folder)
    margin, poll = float(prov.extra["on_boundary_ms"]), float(prov.extra["poll_ms"])
    everyone = read_phases(folder)
    rows = [r for r in everyone if r["source"] == "real"]
    draws = len({r["seed"] for r in everyone if r["source"] == "model"})
    out = ["| N | event | runs | stops after a delivery | since the member's last message, "
           f"ms | ended within {margin:.0f} ms after a poll boundary of its own "
           "fetcher [95 %] | the rest: remainder after a boundary, ms |",
           "|---|---|---|---|---|---|---|"]
    by_event: dict[str, list[float]] = {}
    for members, event in dict.fromkeys((r["members"], r["event"]) for r in rows):
        part = [r for r in rows if (r["members"], r["event"]) == (members, event)
                and r["poll_phase_ms"]]
        phases = [float(r["poll_phase_ms"]) for r in part]
        by_event[f"N = {members} {event}"] = phases
        k = sum(p <= margin for p in phases)
        lo, hi = wilson(k, len(phases))
        rest = sorted(p for p in phases if p > margin)
        runs = len({r["run_id"] for r in part})
        out.append(f"| {members} | {event} | {runs} | {len(phases)} | "
                   f"{_quartiles([float(r['since_delivery_ms']) for r in part])} | "
                   f"{k} of {len(phases)} [{lo:.0%}–{hi:.0%}] | "
                   f"{_quartiles(rest) if rest else '—'} |")
    name = "stop-grid.svg"
    _plot_grid(by_event, poll, ctx.figures / name)
    out += ["", f"Real runs only (the model has no producer schedule to place a stop on). "
            f"Median [interquartile range], nearest rank. A member's fetcher polls "
            f"{poll:.0f} ms at a time and starts a new poll at each message, so its poll "
            f"boundaries fall a whole number of polls after its last delivered message; the "
            f"remainder is the stop's end minus the last boundary before it. Made at revision "
            f"`{prov.revision[:12]}`: `{prov.command}` (the raw folder is the local output of "
            f"the run sets in `results/{GRID}`).", "",
            f"![Real stops: remainder after the member's last poll boundary](figures/{name})",
            "", "The same members' phases, and the model's (the legacy model as plan "
            f"{BEFORE} judged it, {draws} draws a cell, same settings):", "",
            *phases_table(everyone), "",
            "Median [interquartile range], nearest rank. A member that never fetched again "
            "within the job's horizon has no claim.", "",
            "The join's race, run by run (the same runs and draws):", "", *join_race(everyone),
            "", "Median [interquartile range], nearest rank, in ms after the event. Under the "
            "range assignor the joiner, named last, takes the last partition from the member "
            "ranked last before it (the last-ranked owner); the joiner's claim conflicts when "
            "its plan comes before that owner's fetchers stopped and its release followed."]
    return "\n".join(out)


def join_race(rows: list[dict[str, str]]) -> list[str]:
    """Per join cell, real runs and the model's draws: the joiner's first plan and the
    last-ranked owner's fetchers stopped, both after the event, and how many runs had the plan
    first (and, real, an owner conflict)."""
    out = ["| N | source | runs | the joiner's plan | the last-ranked owner's fetchers stopped "
           "| runs where the plan came first | runs with an owner conflict |",
           "|---|---|---|---|---|---|---|"]
    for members in dict.fromkeys(r["members"] for r in rows if r["event"] == "join"):
        for source in ("real", "model"):
            runs: dict[tuple[str, str], list[dict[str, str]]] = {}
            for r in rows:
                if (r["members"], r["event"], r["source"]) == (members, "join", source):
                    runs.setdefault((r["run_id"], r["seed"]), []).append(r)
            plans, stops, first, conflicts = [], [], 0, 0
            for part in runs.values():
                joiners = [r for r in part if not r["stop_ms"] and r.get("plan_ms")]
                owners = sorted((r for r in part if r["stop_ms"]), key=lambda r: r["member"])
                if len(joiners) != 1 or not owners:
                    continue
                plan = float(joiners[0]["plan_ms"])
                stop = float(owners[-1]["attempt_ms"]) + float(owners[-1]["stop_ms"])
                plans.append(plan)
                stops.append(stop)
                first += plan < stop
                conflicts += any(r["conflict"] == "True" for r in part)
            if plans:
                out.append(f"| {members} | {source} | {len(plans)} | {_quartiles(plans)} | "
                           f"{_quartiles(stops)} | {first} of {len(plans)} | "
                           + (f"{conflicts} of {len(plans)} |" if source == "real" else "— |"))
    return out


def _plot_grid(by_event: dict[str, list[float]], poll_ms: float, path: Any) -> Any:
    from zkconsumer.results.plotting import pyplot, save_svg

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.0, 3.0))
    bins = [5.0 * i for i in range(int(poll_ms / 5) + 1)]
    ax.hist(list(by_event.values()), bins=bins, label=[f"real runs, {k}" for k in by_event],
            stacked=True)
    ax.set_xlabel("stop's end after the member's last poll boundary (ms)", fontsize=8)
    ax.set_ylabel("real stops", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7)
    fig.suptitle("Real zk-range stops on Tansu: where they end on the member's own poll grid",
                 fontsize=9)
    fig.tight_layout()
    return save_svg(fig, path)
