"""The ``splitbrain-formation`` block of docs/split-brain-at-scale.md: whether a legacy group
started together formed, against how far apart its client processes began their first
rebalance (``process_start_skew_ms``), from the real storm runs under ``results/splitbrain/``
that recorded it; a table per retry budget and N, a plot, and the statements they support."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from zkconsumer.results.exclusions import formation_verdict
from zkconsumer.results.figures.splitbrain import (
    AREA,
    finish_plot,
    num,
    provenance_lines,
    rows_of,
)
from zkconsumer.results.plotting import pyplot
from zkconsumer.results.registry import Context, figure

SVG = "splitbrain-formation.svg"


def formation_rows(ctx: Context) -> tuple[list[dict[str, Any]], list[str]]:
    """(the legacy storm rows with a formation verdict and a measured skew, their folders):
    ``formed`` True for a run that went on to its storm, False for one whose initial members
    did not all survive the formation."""
    out, folders = [], []
    for d in sorted((ctx.results / AREA).glob("real-*")):
        found = False
        for r in rows_of(d):
            skew = num(r.get("process_start_skew_ms"))
            formed = formation_verdict(r)
            if (r["protocol"], r["scenario"], r["applicable"]) != ("zk-range", "storm", "true") \
                    or skew is None or formed is None:
                continue
            out.append({"run": d.name, "members": int(r["members"]), "seed": int(r["seed"]),
                        "budget": int(r["rebalance_max_retries"]), "skew": skew,
                        "formed": formed})
            found = True
        if found:
            folders.append(d.name)
    return out, folders


def _ms(values: list[float]) -> str:
    return ", ".join(f"{v:,.1f}" for v in sorted(values)) or "—"


def statements(rows: list[dict[str, Any]]) -> list[str]:
    """Per budget: how many runs formed, and the skews that separate them (when they do)."""
    lines = []
    for budget in sorted({r["budget"] for r in rows}):
        runs = [r for r in rows if r["budget"] == budget]
        formed = [r["skew"] for r in runs if r["formed"]]
        lost = [r["skew"] for r in runs if not r["formed"]]
        sizes = ", ".join(map(str, sorted({r["members"] for r in runs})))
        text = (f"- **`rebalance.max.retries` {budget}**: the group formed in {len(formed)} of "
                f"{len(runs)} runs (N = {sizes}).")
        if formed and lost:
            if max(formed) < min(lost):
                text += (f" Every run that formed had its processes start their first "
                         f"rebalance at most {max(formed):,.1f} ms apart; every run that lost "
                         f"members, at least {min(lost):,.1f} ms apart.")
            else:
                overlap = [s for s in formed + lost if min(lost) <= s <= max(formed)]
                text += (f" The skews of runs that formed reach {max(formed):,.1f} ms and those "
                         f"of runs that lost members start at {min(lost):,.1f} ms: "
                         f"{len(overlap)} runs lie where both outcomes occur, so the skew is "
                         "not the whole story there (which members' views differ, and by how "
                         "much, depends on the order within each process too).")
        lines.append(text)
    return lines


@figure("splitbrain-formation", source="results/splitbrain/real-*")
def formation(ctx: Context) -> str:
    rows, folders = formation_rows(ctx)
    if not rows:
        return "No real formation with a measured process start skew committed yet."
    cells: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        cells[(r["budget"], r["members"])].append(r)
    lines = ["| retries | N | runs | formed | skew (ms) of the runs that formed | "
             "skew (ms) of the runs that lost members |", "|---|---|---|---|---|---|"]
    for (budget, n), runs in sorted(cells.items()):
        lines.append(f"| {budget} | {n} | {len(runs)} | {sum(r['formed'] for r in runs)} | "
                     f"{_ms([r['skew'] for r in runs if r['formed']])} | "
                     f"{_ms([r['skew'] for r in runs if not r['formed']])} |")
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
                           color=f"C{i}", s=18,
                           label=f"retries {budget}, {'formed' if formed else 'lost members'}")
    finish_plot(fig, ax, ctx.figures / SVG, "members N (2 client processes)",
                "process start skew, ms (first rebalances)",
                "legacy group started together: formed or not (real runs)", log_y=True,
                xticks=sorted({r["members"] for r in rows}))
    return "\n".join([f"![formation vs process start skew]({ctx.plot_link(SVG)})", "",
                      *lines, "", *statements(rows), "",
                      *provenance_lines([ctx.results / AREA / f for f in folders])])
