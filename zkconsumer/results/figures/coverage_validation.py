"""docs/validation-plan-28.md: the legacy model on Apache Kafka 2.4.1, and the herd at N = 96.

Reads committed files only: validation plan 28's scoring (held-out runs: zk-range on Apache
Kafka 2.4.1 at N = 12 and 48, three protocols on Tansu at N = 96) and, beside the N = 96
cells, the same protocols' N = 48 cells of plan 27 (zk-range, zk-leader-range) and plan 26
(eager-range), so that the page shows how each measure grew from 48 to 96 members, real and
modelled; and the N = 96 leader-mode leave's rebalance phases, real and modelled
(``validation-28/leader-phases``).
"""

from __future__ import annotations

import statistics

from zkconsumer.results.figures.fetcher_stop_validation import phases_table, read_phases
from zkconsumer.results.figures.scale_distributions import (
    load_scores,
    tansu_cell,
    two_places,
    validation_with_failures,
)
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.real_runs import sweep_runs
from zkconsumer.results.registry import Context, figure

HELD_OUT = 28
# where each protocol's N = 48 cells on Tansu were last judged
AT_48 = {"zk-range": 27, "zk-leader-range": 27, "eager-range": 26}
SMALL, LARGE = 48, 96
LEADER_PHASES = f"scale/validation-{HELD_OUT}/leader-phases"
# the N = 96 join folders whose every member rebalances on a join: the scored set, then the
# first one made (set aside by the load rule)
EARLY_FOLDERS = tuple((label, f"scale/validation-{HELD_OUT}/{run_set}/{protocol}-n{LARGE}")
                      for label, run_set in (("scored", "tansu-96"),
                                             ("first, unscored", "tansu-96-first"))
                      for protocol in ("zk-range", "eager-range"))


@figure("scale-validation-28", source=f"results/scale/validation-{HELD_OUT}/scoring")
def validation_28(ctx: Context) -> str:
    """Plan 28's scoring, and its failing cells run by run."""
    return validation_with_failures(ctx, HELD_OUT, stragglers=True)


def _growth(real: float | None, small: float | None) -> str:
    if real is None or small is None:
        return "–"
    if small == 0:
        return "both 0" if real == 0 else "from 0"
    return f"×{real / small:.1f}"


@figure("herd-96", source=f"results/scale/validation-{HELD_OUT}/scoring, "
        + ", ".join(f"results/scale/validation-{p}/scoring" for p in sorted(set(AT_48.values()))))
def herd_96(ctx: Context) -> str:
    """From 48 to 96 members on Tansu: each protocol's median time to stable and requests, real
    and modelled, at both sizes, and how much each grew."""
    large, _ = load_scores(ctx, HELD_OUT)
    earlier = {plan: load_scores(ctx, plan)[0] for plan in sorted(set(AT_48.values()))}
    out = [f"| protocol | event | time to stable, s: real N = {SMALL} → {LARGE} (growth) | "
           f"model N = {SMALL} → {LARGE} (growth) | requests: real N = {SMALL} → {LARGE} "
           f"(growth) | model N = {SMALL} → {LARGE} (growth) |",
           "|---|---|---|---|---|---|"]
    for protocol, plan in AT_48.items():
        for event in ("join", "leave"):
            big, small = (tansu_cell(large, protocol, LARGE, event),
                          tansu_cell(earlier[plan], protocol, SMALL, event))
            if big is None or small is None:
                continue
            cells = [f"{two_places(at_48)} → {two_places(at_96)} ({_growth(at_96, at_48)})"
                     for at_96, at_48 in ((big.real_tts, small.real_tts),
                                          (big.sim_tts, small.sim_tts))]
            cells += [f"{at_48:,.0f} → {at_96:,.0f} ({_growth(at_96, at_48)})"
                      for at_96, at_48 in ((big.real_requests, small.real_requests),
                                           (big.sim_requests, small.sim_requests))]
            out.append(f"| {protocol} | {event} | " + " | ".join(cells) + " |")
    plans = ", ".join(f"{plan} ({', '.join(p for p, at in AT_48.items() if at == plan)})"
                      for plan in earlier)
    out += ["", f"Medians over each cell's real runs (10) and model draws, from the scorings: "
            f"N = {LARGE} from plan {HELD_OUT}, N = {SMALL} from the plan that last judged the "
            f"protocol's N = {SMALL} cells on Tansu: plan {plans}. P = 24 at both sizes, so "
            f"at N = {LARGE} three members in four own nothing. The model's N = {SMALL} "
            f"zk-range cells were drawn at their sets' own speed; its N = {LARGE} cells at the "
            "calibration's."]
    return "\n".join(out)


@figure("leader-96-phases", source=f"results/{LEADER_PHASES}")
def leader_96_phases(ctx: Context) -> str:
    """Where the N = 96 leader-mode leave spends its time, real members against the model's:
    the stop and the claim of every member's first attempt after the event."""
    folder = ctx.results / LEADER_PHASES
    rows = [r for r in read_phases(folder) if r["event"] == "leave"]
    prov = read_provenance(folder)
    return "\n".join([*phases_table(rows), "", (
        "Median [interquartile range] over every member that stopped its fetchers in its first "
        f"attempt after the event, nearest rank. The model: {LARGE} members drawn as "
        "`spark validate` draws them, at the calibration's speed. Made at revision "
        f"`{prov.revision[:12]}`: `{prov.command}`.")])


def ended_early(raw: dict[str, str], members: int) -> bool:
    """A join run the lab ended before its group had rebalanced: no time to stable, or fewer
    of its members made a rebalance attempt than the group had (the joiner included), in a
    protocol where a join makes every member rebalance."""
    attempts = raw.get("attempts_total") or ""
    return not raw.get("time_to_stable_s") or (attempts != "" and int(attempts) < members + 1)


@figure("early-ended-96", source=", ".join(f"results/{folder}" for _, folder in EARLY_FOLDERS))
def early_ended_96(ctx: Context) -> str:
    """The N = 96 joins the lab declared settled before the group had rebalanced, per set."""
    out = ["| set | protocol | join runs | ended before the group had rebalanced | their "
           "requests (the others' median) |", "|---|---|---|---|---|"]
    for label, folder in EARLY_FOLDERS:
        rows = [raw for raw, _ in sweep_runs(ctx.results / folder) if raw["event"] == "join"]
        if not rows:
            continue
        early = [r for r in rows if ended_early(r, LARGE)]
        rest = [float(r["coordination_requests"]) for r in rows if r not in early]
        said = ", ".join(f"{float(r['coordination_requests']):,.0f}" for r in early) or "–"
        median = f" ({statistics.median(rest):,.0f})" if rest else ""
        out.append(f"| {label} | {rows[0]['protocol']} | {len(rows)} | {len(early)} | "
                   f"{said}{median} |")
    out += ["", "A join run ended before its group had rebalanced when it has no time to stable "
            f"or fewer of its members made an attempt than the group had ({LARGE} and the "
            "joiner): the lab called the group settled while the rebalance was under way "
            "(every partition still fetched once, and no timeline change for the quiet "
            "window). Such runs are outcomes: the scorer takes the time to stable over the "
            "runs that have one and the requests over all. From each folder's `sweep.csv`."]
    return "\n".join(out)
