"""The ``splitbrain-findings`` block that opens docs/split-brain-at-scale.md: what the real runs
and the simulated sweeps under ``results/splitbrain/`` showed, each number with how many runs
it rests on and its spread (or a 95 % interval for a count), real and simulated told apart."""

from __future__ import annotations

import csv
from typing import Any

from zkconsumer.results.figures.placement import placement_line
from zkconsumer.results.figures.splitbrain import (
    AREA,
    BROKER,
    RowKind,
    by_cell,
    fix_of,
    gave_up,
    legacy_storms,
    median_range,
    num,
    real_rows,
    row_kind,
    rows_of,
    suffix,
    sweep_folders,
)
from zkconsumer.results.figures.splitbrain_formation import formation_cells, formation_statement
from zkconsumer.results.figures.splitbrain_text import runs, share, sizes, span
from zkconsumer.results.registry import Context, figure

Row = dict[str, Any]


def values(rows: list[Row], metric: str) -> list[float]:
    return [v for r in rows if (v := num(r.get(metric))) is not None]


def shown(ctx: Context) -> list[Row]:
    """The real rows that ran their scenario, each with ``run`` and ``pre_fix``."""
    fix = fix_of(ctx)
    return [{**r, "run": run, "pre_fix": fix is not None and fix.predates(run, r["protocol"])}
            for run, r in real_rows(ctx) if row_kind(r) is RowKind.SHOWN]


def pick(rows: list[Row], protocols: tuple[str, ...], scenario: str) -> list[Row]:
    return [r for r in rows if r["protocol"] in protocols and r["scenario"] == scenario
            and not r["pre_fix"]]


def where(rows: list[Row]) -> str:
    return f"{sizes(int(r['members']) for r in rows)}; {runs(len(rows))}"


def zombie_real(rows: list[Row]) -> str:
    legacy = pick(rows, ("zk-range",), "zombie")
    leader = pick(rows, ("zk-leader-range",), "zombie")
    return (f"- **Zombie, real** (two client processes). Legacy group ({where(legacy)}): "
            f"double-owned partition·s {span(values(legacy, 'double_owned_partition_s'))}, "
            f"deliveries by a zombie while another member owned the partition "
            f"{span(values(legacy, 'zombie_deliveries'), digits=0)}, zombies stopped fetching "
            f"after {span(values(legacy, 'zombie_stop_s'), ' s')}, records delivered twice "
            f"{span(values(legacy, 'delivered_twice'), digits=0)}. Fenced leader mode with the "
            f"fix ({where(leader)}): double-owned "
            f"{span(values(leader, 'double_owned_partition_s'))}, zombies stopped after "
            f"{span(values(leader, 'zombie_stop_s'), ' s')}.")


def zombie_sim(ctx: Context) -> str:
    parts, leader = [], []
    for d in sweep_folders(ctx, "sim-zombie-f"):
        dbl = by_cell(rows_of(d), "double_owned_partition_s")
        legacy = {n: v for (p, n), v in dbl.items() if p == "zk-range"}
        pos = [n for n, v in legacy.items() if sorted(v)[len(v) // 2] > 0]
        first = min(legacy) if legacy else None
        head = (f"at N = {first:,}, median (lowest–highest) {median_range(legacy[first])} "
                f"over {len(legacy[first])} seeds" if first in pos else "")
        parts.append(f"fraction {suffix(d, 'sim-zombie-f')}: a median above 0 "
                     f"{'at ' + sizes(pos) if pos else 'at no N measured'}"
                     f"{'; ' + head if head else ''}")
        leader += [x for (p, _), v in dbl.items() if p == "zk-leader-range" for x in v]
    return (f"- **Zombie, simulated** (one host per member; legacy double-owned partition·s "
            f"per cell of seeds, by cut-off fraction): {'; '.join(parts)}. Leader mode: "
            f"{span(leader, what='seed')}." if parts else "")


def stale_real(rows: list[Row]) -> str:
    legacy = pick(rows, ("zk-range",), "stale-view")
    leader = pick(rows, ("zk-leader-range",), "stale-view")
    broker = pick(rows, BROKER, "stale-view")
    return (f"- **Stale view, real.** Legacy group ({where(legacy)}): owner conflicts "
            f"{span(values(legacy, 'conflicts'), digits=0)}, time to stable "
            f"{span(values(legacy, 'time_to_stable_s'), ' s')}. Leader mode with the fix "
            f"({where(leader)}) and broker groups ({where(broker)}): conflicts "
            f"{span(values(leader + broker, 'conflicts'), digits=0)}.")


def storm_real(ctx: Context, rows: list[Row]) -> str:
    """Give-ups and end states of the legacy storms that formed, per budget; then the others."""
    out = []
    formed = [s for s in legacy_storms(ctx) if s["formed"]]
    for budget in sorted({s["budget"] for s in formed}):
        rs = [s["row"] for s in formed if s["budget"] == budget]
        k = sum((num(r["rebalances_given_up"]) or 0) > 0 for r in rs)
        stuck = [r for r in rs if r["verify_ok"] == "false"]
        out.append(f"budget {budget} ({sizes(int(r['members']) for r in rs)}): some member "
                   f"gave up a rebalance during the storm in {share(k, len(rs))}; "
                   f"{len(stuck)} of them ended with partitions nobody owned (verify failed), "
                   f"{int(sum(values(stuck, 'lost'))):,} acknowledged records undelivered at "
                   f"the end{for_good(stuck)}")
    leader = pick(rows, ("zk-leader-range",), "storm")
    broker = pick(rows, BROKER, "storm")
    return (f"- **Storm, real** (legacy groups of the formation run set that formed): "
            f"{'; '.join(out)}. Leader mode with the fix ({where(leader)}) and broker groups "
            f"({where(broker)}): rebalances given up "
            f"{span(values(leader + broker, 'rebalances_given_up'), digits=0)}.")


def for_good(rows: list[Row]) -> str:
    """Of the undelivered records, those below their partition's committed offset (lost for
    good), in the runs that read the committed offsets at the end."""
    read = [r for r in rows if num(r.get("lost_for_good")) is not None]
    if not read:
        return ""
    return (f" ({int(sum(values(read, 'lost_for_good'))):,} of the "
            f"{int(sum(values(read, 'lost'))):,} in the {runs(len(read))} that read the "
            "committed offsets were below them, lost for good; the rest wait for an owner)")


def storm_sim(ctx: Context, prefix: str, placement: str) -> str:
    """Per budget, the seeds in which some legacy member gave up, at every N; the budgets
    without any give-up merged; the other protocols' total."""
    zero, parts, other_k, other_n = [], [], 0, 0
    folders = sweep_folders(ctx, prefix)
    if not folders:
        return ""
    for d in folders:
        probs = by_cell(rows_of(d), "p_give_up")
        legacy = {n: v for (p, n), v in sorted(probs.items()) if p == "zk-range"}
        if not any(gave_up(v) for v in legacy.values()):
            zero.append(suffix(d, prefix))
        else:
            parts.append(f"budget {suffix(d, prefix)}: " + ", ".join(
                f"{gave_up(v)}/{len(v)}" for v in legacy.values()) + f" at {sizes(legacy)}")
        others = [v for (p, _), v in probs.items() if p != "zk-range"]
        other_k += sum(gave_up(v) for v in others)
        other_n += sum(len(v) for v in others)
    if zero:
        parts.append(f"budget {', '.join(zero)}: no give-up at any N measured")
    return (f"- **Storm, simulated ({placement})**, seeds in which some legacy member gave up: "
            f"{'; '.join(parts)}. Leader mode and broker groups: {other_k} of {other_n} seeds.")


def plan4(ctx: Context) -> str:
    """The budget-2 storm scored against the model (plan 4): real vs expected counts."""
    path = ctx.results / AREA / "validation-4" / "checks.csv"
    if not path.is_file():
        return ""
    with open(path, newline="") as fh:
        rows = sorted((r for r in csv.DictReader(fh) if r["metric"] == "runs_with_give_up"),
                      key=lambda r: int(r["members"]))
    real = ", ".join(f"{float(r['real']):.0f} of {r['rule'].removeprefix('binomial95-of-')}"
                     for r in rows)
    sim = ", ".join(f"{float(r['sim']):.1f}" for r in rows)
    ok = sum(r["ok"] == "True" for r in rows)
    at = sizes(int(r["members"]) for r in rows)
    return (f"- **Budget 2, real against modelled** (plan 4, {at}): runs with a give-up "
            f"{real} (real); expected {sim} (model); {ok} of {len(rows)} "
            "counts within the 95 % binomial tolerance.")


def formation_real(ctx: Context) -> str:
    cells = formation_cells(legacy_storms(ctx))
    return (f"- **Formation, real** (the formation table's run set): "
            f"{' '.join(formation_statement(b, c) for b, c in sorted(cells.items()))}"
            if cells else "")


def leader_defect(rows: list[Row]) -> str:
    pre = [r for r in rows if r["pre_fix"] and r["verify_ok"] == "false"]
    if not pre:
        return ""
    after = [r for r in rows if not r["pre_fix"] and r["protocol"] == "zk-leader-range"
             and any((r["scenario"], r["members"]) == (p["scenario"], p["members"])
                     for p in pre)]
    bad = "; ".join(f"{r['scenario']} N = {r['members']} (`{r['run']}`, one run): verify "
                    f"failed, {int(num(r['lost']) or 0):,} records undelivered" for r in pre)
    good = "; ".join(f"{r['scenario']} N = {r['members']} (`{r['run']}`, one run): verify "
                     f"{'ok' if r['verify_ok'] == 'true' else 'failed'}, "
                     f"{int(num(r['lost']) or 0):,} undelivered" for r in after)
    return (f"- **Leader-mode defect (lost assignment watch), real.** Before its fix: {bad}. "
            f"After: {good or 'not re-run yet'}.")


@figure("splitbrain-findings", source="results/splitbrain")
def findings(ctx: Context) -> str:
    rows = shown(ctx)
    out = [zombie_real(rows), zombie_sim(ctx), stale_real(rows), formation_real(ctx),
           storm_real(ctx, rows), plan4(ctx)] if rows else []
    out += [storm_sim(ctx, "sim-here-storm-r", "this machine's placement"),
            storm_sim(ctx, "sim-storm-r", "one host per member")]
    if rows:
        out.append(leader_defect(rows))
    folders = sorted({ctx.results / AREA / r["run"] for r in rows})
    folders += [d for prefix in ("sim-zombie-f", "sim-here-storm-r", "sim-storm-r")
                for d in sweep_folders(ctx, prefix)]
    line = placement_line(*folders)
    if line and any(out):
        out.append(f"- {line}")
    return "\n".join(x for x in out if x) or "No results committed yet."
