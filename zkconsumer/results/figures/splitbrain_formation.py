"""The ``splitbrain-formation`` block of docs/split-brain-at-scale.md: whether a legacy group
started together formed, per retry budget and N, over the real storms whose job checked it
(:func:`.splitbrain.legacy_storms`); then, for the runs that recorded it, against how far apart
the two client processes began their first rebalance (``process_start_skew_ms``), with a plot.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from zkconsumer.results.figures.placement import placement_line
from zkconsumer.results.figures.splitbrain import (
    AREA,
    FORMATION_FOLDER,
    finish_plot,
    fix_of,
    legacy_storms,
    meta,
    num,
    reproduce,
)
from zkconsumer.results.figures.splitbrain_text import (
    at_sizes,
    counts_at,
    share,
    sizes,
    wilson,
)
from zkconsumer.results.plotting import pyplot
from zkconsumer.results.registry import Context, figure

SVG = "splitbrain-formation.svg"


def formation_cells(storms: list[dict[str, Any]]) -> dict[int, dict[int, tuple[int, int]]]:
    """budget -> N -> (runs that formed, runs with a verdict). Runs that failed otherwise or
    were excluded say nothing about formation and are left out."""
    out: dict[int, dict[int, tuple[int, int]]] = defaultdict(dict)
    for s in storms:
        if s["formed"] is None:
            continue
        k, n = out[s["budget"]].get(s["members"], (0, 0))
        out[s["budget"]][s["members"]] = (k + bool(s["formed"]), n + 1)
    return dict(out)


def formation_statement(budget: int, cells: dict[int, tuple[int, int]]) -> str:
    """What the counts of one budget say, for every N measured: never an inverted or empty
    answer. ``cells`` is N -> (formed, runs)."""
    if not cells:
        return f"Under a budget of {budget}, no run with a formation verdict."
    total_k = sum(k for k, _ in cells.values())
    total = share(total_k, sum(n for _, n in cells.values()))
    every = [n for n, (k, m) in cells.items() if k == m]
    minority = [n for n, (k, m) in cells.items() if 2 * k < m]
    if len(every) == len(cells):
        return (f"Under a budget of {budget} the group formed in every run measured: {total}, "
                f"{at_sizes(cells)}.")
    if len(minority) == len(cells):
        return (f"Under a budget of {budget} a group started together formed only in a "
                f"minority of runs at every N measured: {total} in all, "
                f"{counts_at(cells)}.")
    rest = [n for n in cells if n not in every and n not in minority]
    parts = [f"in a minority of runs {at_sizes(minority)}" if minority else "",
             f"in every run {at_sizes(every)}" if every else "",
             f"in half or more but not all {at_sizes(rest)}" if rest else ""]
    return (f"Under a budget of {budget} a group started together formed "
            f"{', '.join(p for p in parts if p)}: {total} in all, {counts_at(cells)}.")


def run_set(ctx: Context, storms: list[dict[str, Any]]) -> str:
    """Which runs the formation counts are over, said with the counts."""
    check = fix_of(ctx, FORMATION_FOLDER)
    folders = ", ".join(f"`{r}`" for r in sorted({s["run"] for s in storms}))
    since = f" (its revision contains {check.commit[:10]})" if check is not None else ""
    return (f"Run set: the legacy (`zk-range`) storms started together by a job that checks "
            f"every initial member is alive{since}, in {folders} under `results/{AREA}/`; "
            "runs that failed otherwise or were excluded are not counted.")


def skew_statements(rows: list[dict[str, Any]]) -> list[str]:
    """Per budget: the skews of runs that formed against those that lost members."""
    lines = []
    for budget in sorted({r["budget"] for r in rows}):
        runs = [r for r in rows if r["budget"] == budget]
        formed = [r["skew"] for r in runs if r["formed"]]
        lost = [r["skew"] for r in runs if not r["formed"]]
        text = (f"- **`rebalance.max.retries` {budget}** ({len(runs)} runs with a recorded "
                f"skew, {sizes(r['members'] for r in runs)}): {len(formed)} formed.")
        if formed and lost:
            if max(formed) < min(lost):
                text += (f" Every run that formed had its processes start their first "
                         f"rebalance at most {max(formed):,.1f} ms apart; every run that lost "
                         f"members, at least {min(lost):,.1f} ms apart.")
            else:
                overlap = [s for s in formed + lost if min(lost) <= s <= max(formed)]
                text += (f" The skews of runs that formed reach {max(formed):,.1f} ms and those "
                         f"of runs that lost members start at {min(lost):,.1f} ms: "
                         f"{len(overlap)} of the {len(runs)} runs lie where both outcomes occur, "
                         "so the skew is not the whole story (the order of the members within "
                         "each process matters too).")
        lines.append(text)
    return lines


def _plot(ctx: Context, rows: list[dict[str, Any]]) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    budgets = sorted({r["budget"] for r in rows})
    for i, budget in enumerate(budgets):
        for formed, marker in ((True, "o"), (False, "x")):
            pts = [(r["members"] * (1 + 0.06 * (i - (len(budgets) - 1) / 2)),
                    max(r["skew"], 0.1))
                   for r in rows if r["budget"] == budget and r["formed"] is formed]
            if pts:
                ax.scatter([x for x, _ in pts], [y for _, y in pts], marker=marker,
                           color=f"C{i}", s=18, label=f"retries {budget}, "
                           f"{'formed' if formed else 'lost members'} (real runs)")
    finish_plot(fig, ax, ctx.figures / SVG, "members N (2 client processes)",
                "process start skew, ms (first rebalances)",
                "legacy group started together: formed or not (real runs)", log_y=True,
                xticks=sorted({r["members"] for r in rows}))


@figure("splitbrain-formation", source="results/splitbrain/real-*")
def formation(ctx: Context) -> str:
    storms = legacy_storms(ctx)
    cells = formation_cells(storms)
    if not cells:
        return "No real formation committed yet."
    lines = ["| retries | N | runs | formed | share formed (95 % interval) | results folders |",
             "|---|---|---|---|---|---|"]
    for budget, by_n in sorted(cells.items()):
        for n, (k, m) in sorted(by_n.items()):
            folders = sorted({s["run"] for s in storms if (s["budget"], s["members"]) == (
                budget, n) and s["formed"] is not None})
            lo, hi = wilson(k, m)
            lines.append(f"| {budget} | {n:,} | {m} | {k} | {k / m:.2f} ({lo:.2f}–{hi:.2f}) | "
                         f"{', '.join(f'`{f}`' for f in folders)} |")
    skewed = [{**s, "skew": num(s["row"].get("process_start_skew_ms"))} for s in storms
              if s["formed"] is not None and num(s["row"].get("process_start_skew_ms"))
              is not None]
    newest = max(sorted({s["run"] for s in storms}),
                 key=lambda r: str(meta(ctx.results / AREA / r).get("date", "")))
    placed = placement_line(*(ctx.results / AREA / r for r in sorted({s["run"] for s in storms})))
    out = [*lines, "", placed, "", run_set(ctx, storms),
           reproduce(ctx.results / AREA / newest, {
               "--members": "N", "--seeds": "RUNS", "--first-seed": "SEED",
               "--max-retries": "RETRIES"}), "",
           *(f"- {formation_statement(b, c)}" for b, c in sorted(cells.items()))]
    if skewed:
        _plot(ctx, skewed)
        out += ["", f"![formation vs process start skew]({ctx.plot_link(SVG)})", "",
                "The runs that recorded how far apart the two client processes began their "
                "first rebalances (`process_start_skew_ms`; folders "
                f"{', '.join(f'`{r}`' for r in sorted({s['run'] for s in skewed}))}):", "",
                *skew_statements(skewed)]
    return "\n".join(out)
