"""docs/findings.md, topics (c) and (d) and the summary table at the top of the page.

(c) the uncontrollable outcome: the legacy group under a retry budget (``rebalance.max.retries``)
in the real storms under ``results/splitbrain/real-*`` (formation verdicts through
:func:`zkconsumer.results.exclusions.formation_verdict`) and the simulated storms
``sim-storm-r*``; (d) what broker coordination on Apache Kafka 2.4.1 and the leader mode do
instead, from ``results/comparison`` (read by :mod:`.comparison`), with the leader-mode defect
found at N = 100 from the real split-brain runs. Topics (a) and (b) are in :mod:`.findings` and
:mod:`.findings_splitbrain`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from zkconsumer.results.figures.comparison import KAFKA, LABELS, TANSU, runs_by_broker, select
from zkconsumer.results.figures.findings import (
    LEADER,
    LEGACY,
    REAL_STYLE,
    SIM_STYLE,
    herd_slope,
    lab_herd,
)
from zkconsumer.results.figures.findings_splitbrain import brokers_of, real_splitbrain_rows
from zkconsumer.results.figures.findings_text import Share, Spread, number, share_of, spread
from zkconsumer.results.figures.splitbrain import AREA, BROKER, legacy_storms, num, rows_of
from zkconsumer.results.figures.splitbrain_text import sizes as sizes_text
from zkconsumer.results.plotting import pyplot, save_svg
from zkconsumer.results.registry import Context, figure

PROTOCOLS = (LEGACY, LEADER, "eager-range", "cooperative-sticky", "static-range")
EVENTS = ("join", "leave", "rolling-bounce", "crash")
PLOTTED_SIM_BUDGETS = 3  # the smallest simulated budgets are drawn; the claim lists every one


# --- (c) the uncontrollable outcome ----------------------------------------------------------

@dataclass(frozen=True)
class BudgetCell:
    """The legacy storms of one retry budget and N: formation, then give-ups and stuck
    groups among the runs that formed."""

    budget: int
    members: int
    formed: Share            # of the runs with a formation verdict
    gave_up: Share | None    # among the runs that formed: some member gave up in the storm
    stuck: Share | None      # among the runs that formed: verify failed or a repair was needed


def storm_runs(ctx: Context) -> list[dict[str, Any]]:
    """The split-brain page's formation run set (:func:`.splitbrain.legacy_storms`: legacy
    storms started together by a job that checked formation) with a verdict either way; runs
    that failed otherwise or were excluded say nothing about formation."""
    return [s for s in legacy_storms(ctx) if s["formed"] is not None]


def budget_cells(runs: list[dict[str, Any]]) -> list[BudgetCell]:
    cells = []
    for budget, n in sorted({(s["budget"], s["members"]) for s in runs}):
        at = [s for s in runs if (s["budget"], s["members"]) == (budget, n)]
        formed = [s["row"] for s in at if s["formed"]]
        cells.append(BudgetCell(
            budget, n, Share(len(formed), len(at)),
            share_of((num(r["rebalances_given_up"]) or 0) > 0 for r in formed),
            share_of(r["verify_ok"] == "false" or r["repaired"] == "true" for r in formed)))
    return cells


def pooled(shares: list[Share | None]) -> Share | None:
    present = [s for s in shares if s is not None]
    return Share(sum(s.k for s in present), sum(s.n for s in present)) if present else None


@dataclass(frozen=True)
class SimGiveUp:
    """One simulated storm cell: in how many seeds some legacy member gave up, and whether
    every seed settled within the simulated hour (else it counts what happened until then)."""

    members: int
    gave_up: Share
    settled: bool


def sim_give_up(ctx: Context) -> dict[int, list[SimGiveUp]]:
    """Simulated storms, one host per member, per retry budget."""
    out: dict[int, list[SimGiveUp]] = {}
    for folder in (ctx.results / AREA).glob("sim-storm-r*"):
        budget = int(re.sub(r"\D", "", folder.name))
        rows = [r for r in rows_of(folder) if r["protocol"] == LEGACY]
        for n in sorted({int(r["members"]) for r in rows}):
            at = [r for r in rows if int(r["members"]) == n]
            out.setdefault(budget, []).append(SimGiveUp(
                n, Share(sum((num(r["p_give_up"]) or 0) > 0 for r in at), len(at), "seeds"),
                not any(r.get("settled") == "false" for r in at)))
    return dict(sorted(out.items()))


def unsettled_storms(ctx: Context) -> list[int]:
    """Sizes at which some simulated legacy storm had not settled within the simulated hour."""
    return sorted({int(r["members"]) for folder in (ctx.results / AREA).glob("sim-storm-r*")
                   for r in rows_of(folder)
                   if r["protocol"] == LEGACY and r.get("settled") == "false"})


def _sim_ends(cells: list[SimGiveUp]) -> str:
    """The smallest and the largest size shown (settled, or a give-up seen): how it starts and
    how it ends."""
    shown = [c for c in cells if c.settled or c.gave_up.k > 0]
    ends = [shown[0], shown[-1]] if len(shown) > 1 else shown
    return ", ".join(f"N = {c.members:,} {c.gave_up.cell()}" for c in ends) or "—"


def others_in_storms(ctx: Context) -> tuple[Share | None, str]:
    """Leader-mode (after the fix) and broker-group storms in which a member gave up, and the
    broker the broker groups ran on."""
    rows = [r for r in real_splitbrain_rows(ctx) if r["scenario"] == "storm"
            and r["protocol"] in (LEADER, *BROKER) and not r["reason"] and not r["pre_fix"]]
    return (share_of((num(r["rebalances_given_up"]) or 0) > 0 for r in rows),
            brokers_of([r for r in rows if r["protocol"] in BROKER]))


def formation_phrase(cells: list[BudgetCell]) -> str:
    """Where the group formed in most runs, said the right way round: "in a minority of the
    runs at every size measured (N = ...)" when it never did, never a size list that reads
    "none"."""
    majority = [c.members for c in cells if c.formed.p > 0.5]
    sizes = [c.members for c in cells]
    if all(c.formed.p < 0.5 for c in cells):
        return f"in a minority of the runs at every size measured ({sizes_text(sizes)})"
    if not majority:
        return f"in at most half of the runs at every size measured ({sizes_text(sizes)})"
    if all(c.formed.k == c.formed.n for c in cells):
        return f"in every run at every size measured ({sizes_text(sizes)})"
    if majority == sizes:
        return f"in most runs at every size measured ({sizes_text(sizes)})"
    return f"in most runs only at {sizes_text(majority)} (of {sizes_text(sizes)})"


def outcome_claim(ctx: Context) -> str:
    storms = storm_runs(ctx)
    cells = budget_cells(storms)
    rows = [s["row"] for s in storms]
    shape = ", ".join(f"P = {p}" for p in sorted({int(r["partitions"]) for r in rows}))
    tasks = sorted({r["tasks"] for r in rows if r.get("tasks")})
    shape += f", members in {' or '.join(tasks)} client processes" if tasks else ""
    parts = []
    for budget in sorted({c.budget for c in cells}):
        mine = [c for c in cells if c.budget == budget]
        total = pooled([c.formed for c in mine])
        where = formation_phrase(mine)
        parts.append(f"under `rebalance.max.retries` = {budget} a legacy group started "
                     f"together formed in {total.text() if total else '—'}, {where}")
    formed_one = [c for c in cells if c.budget == min(c.budget for c in cells)]
    stuck = pooled([c.stuck for c in formed_one])
    gave = pooled([c.gave_up for c in formed_one])
    sim = sim_give_up(ctx)
    sim_text = "; ".join(f"budget {b}: {_sim_ends(cells)}" for b, cells in sim.items() if cells)
    late = unsettled_storms(ctx)
    late_text = (f" (seeds that had not settled within the simulated hour, at "
                 f"{sizes_text(late)}, count what happened until then; a cell with such "
                 "a seed and no give-up is left out)") if late else ""
    others, brokers = others_in_storms(ctx)
    return (f"Real runs ({shape}): " + "; ".join(parts) + ". Of the "
            f"budget-{formed_one[0].budget} groups that did form, some member gave up during "
            f"the storm in {gave.text() if gave else '—'}, and {stuck.text() if stuck else '—'}"
            " were left stuck after it (partitions nobody owned while every member believed it "
            "was done; the verify tool failed). "
            "Simulated with a host per member (storm of 3 joins and 3 leaves in 2 s), seeds in "
            f"which some legacy member gave up (95 % Wilson): {sim_text}{late_text}. Leader "
            f"mode and broker groups (on {brokers}): a member gave up in "
            f"{others.text() if others else '—'}.")


def _outcome_plot(ctx: Context, cells: list[BudgetCell], svg: str) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 5))
    budgets = sorted({c.budget for c in cells})
    for i, budget in enumerate(budgets):
        mine = [c for c in cells if c.budget == budget]
        _share_bars(axes[0], [(c.members, c.formed) for c in mine], f"C{i}", REAL_STYLE,
                    f"retries {budget}, real ({sum(c.formed.n for c in mine)} runs)", i)
        given = [(c.members, c.gave_up) for c in mine if c.gave_up is not None]
        _share_bars(axes[1], given, f"C{i}", REAL_STYLE,
                    f"retries {budget}, real (groups that formed)", i)
    sim = sim_give_up(ctx)
    for j, budget in enumerate(sorted(sim)[:PLOTTED_SIM_BUDGETS]):
        pts = [(c.members, c.gave_up) for c in sim[budget] if c.settled or c.gave_up.k > 0]
        color = f"C{budgets.index(budget)}" if budget in budgets else f"C{len(budgets) + j}"
        _share_bars(axes[1], pts, color, SIM_STYLE, f"retries {budget}, simulated "
                    f"({pts[0][1].n} seeds per N)", 0, alpha=0.6)
    axes[0].set_ylabel("share of runs in which the group formed")
    axes[0].set_title("legacy group started together (real)", fontsize=9)
    axes[1].set_ylabel("share of runs in which some member gave up")
    axes[1].set_title("legacy storm: 3 joins + 3 leaves in 2 s", fontsize=9)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("members N")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, title="bars: 95 % Wilson interval", title_fontsize=7,
                  loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    fig.tight_layout()
    save_svg(fig, ctx.figures / svg)
    return f"![legacy formation and give-ups vs N and the retry budget]({ctx.plot_link(svg)})"


def _share_bars(ax: Any, pts: list[tuple[int, Share]], color: str, style: dict[str, Any],
                label: str, offset: int, alpha: float = 1.0) -> None:
    if not pts:
        return
    xs = [n * (1 + 0.07 * offset) for n, _ in pts]
    ps = [s.p for _, s in pts]
    errs = [[s.p - s.interval[0] for _, s in pts], [s.interval[1] - s.p for _, s in pts]]
    ax.errorbar(xs, ps, yerr=errs, color=color, capsize=3, label=label, alpha=alpha, **style)


@figure("findings-outcome", source="results/splitbrain")
def outcome(ctx: Context) -> str:
    cells = budget_cells(storm_runs(ctx))
    lines = [f"**Finding.** {outcome_claim(ctx)}", "",
             _outcome_plot(ctx, cells, "findings-outcome.svg"), "",
             "| `rebalance.max.retries` | N | formed (95 % Wilson) | some member gave up in "
             "the storm, of those formed | left stuck, of those formed |",
             "|---|---|---|---|---|"]
    for c in cells:
        lines.append(f"| {c.budget} | {c.members} | {c.formed.cell()} | "
                     f"{c.gave_up.cell() if c.gave_up else '—'} | "
                     f"{c.stuck.cell() if c.stuck else '—'} |")
    lines += ["", "Run set: the split-brain page's formation run set, every real legacy "
              "(`zk-range`) storm under `results/splitbrain/real-*` started together by a job "
              "that checked formation (before that check a group that lost members was "
              "declared formed), whose group either formed or lost initial members before it "
              "was stable; runs that failed for another reason or were excluded are listed on "
              "[validation.md](validation.md). Raw data: `results/splitbrain/` (`real-*`, "
              "`sim-storm-r*`)."]
    return "\n".join(lines)


# --- (d) what replaced it --------------------------------------------------------------------

def kafka_cell(ctx: Context, broker: str, protocol: str, event: str, key: str) -> Spread | None:
    """One metric of one (protocol, event) over the repeats measured next to ``broker``."""
    runs = runs_by_broker(ctx, "compare-").get(broker, [])
    return spread([r["metrics"].get(key) for r in select(runs, protocol, event)
                   if r["status"] == "ok"])


def kafka_sizes(ctx: Context) -> str:
    """The group sizes of the comparison's runs on Apache Kafka 2.4.1."""
    return sizes_text({r["members"] for r in runs_by_broker(ctx, "compare-").get(KAFKA, [])})


def kip_join_requests(ctx: Context, protocol: str) -> list[tuple[int, Spread]]:
    """Requests of one join, per N, on Apache Kafka 2.4.1 (the comparison's and the KIP runs)."""
    runs = runs_by_broker(ctx, "compare-").get(KAFKA, []) + \
        runs_by_broker(ctx, "kip-").get(KAFKA, [])
    at = [r for r in select(runs, protocol, "join") if r["status"] == "ok"]
    out = []
    for n in sorted({r["members"] for r in at}):
        s = spread([r["metrics"].get("coordination_requests") for r in at if r["members"] == n])
        if s is not None:
            out.append((n, s))
    return out


def leader_defect(ctx: Context) -> dict[str, Any] | None:
    """The leader-mode run measured before the assignment-watch fix that ended in a wrong
    state, and the runs of the same scenario after the fix."""
    rows = [r for r in real_splitbrain_rows(ctx) if r["protocol"] == LEADER
            and r["applicable"] == "true"]
    bad = [r for r in rows if r["pre_fix"] and (r["verify_ok"] == "false"
                                                or r["repaired"] == "true")]
    if not bad:
        return None
    first = bad[0]
    after = [r for r in rows if not r["pre_fix"] and r["scenario"] == first["scenario"]
             and not r["reason"]]
    return {"row": first, "after": after,
            "after_ok": share_of(r["verify_ok"] == "true" and (num(r["lost"]) or 0) == 0
                              for r in after)}


def alternatives_claim(ctx: Context) -> str:
    def t(protocol: str, event: str, broker: str = KAFKA) -> str:
        s = kafka_cell(ctx, broker, protocol, event, "time_to_stable_s")
        return "—" if s is None else s.text(2, " s")

    lab, leader = lab_herd(ctx), lab_herd(ctx, LEADER)
    top = max(p.members for p in leader)
    legacy_top = next(p for p in lab if p.members == top)
    leader_top = next(p for p in leader if p.members == top)
    slope = herd_slope(ctx, f"{LEADER}/join")
    defect = leader_defect(ctx)
    defect_text = ""
    if defect is not None:
        r = defect["row"]
        ok = defect["after_ok"]
        defect_text = (
            f" The leader mode does not remove split brain by construction: its {r['scenario']}"
            f" run at N = {r['members']} (one run, before the assignment-watch fix) left "
            f"partitions without an owner to the end of the run (repair joins did not help), "
            f"the verify tool failed and {r['lost']} "
            f"acknowledged records were not delivered; after the fix the {r['scenario']} runs "
            f"(N = {', '.join(sorted({x['members'] for x in defect['after']}, key=int))}) "
            f"ended verified with nothing lost in {ok.text() if ok else '—'}.")
    def reqs(protocol: str) -> str:
        s = kafka_cell(ctx, KAFKA, protocol, "join", "coordination_requests")
        return "—" if s is None else s.text(0)

    grow = kip_join_requests(ctx, "eager-range")
    grow_text = "" if len(grow) < 2 else (
        f"; an eager join's requests grew from {grow[0][1].text(0)} at N = {grow[0][0]} to "
        f"{grow[-1][1].text(0)} at N = {grow[-1][0]} (×{grow[-1][1].median / grow[0][1].median:.1f}"
        f" for ×{grow[-1][0] / grow[0][0]:g} members)")
    return (f"On Apache Kafka 2.4.1 ({kafka_sizes(ctx)}, 8 partitions) a broker coordinator "
            f"collects one JoinGroup and answers one SyncGroup per member: an eager join cost "
            f"{reqs('eager-range')} requests against {reqs(LEGACY)} for the legacy group"
            f"{grow_text}, and settled in {t('eager-range', 'join')} against the legacy "
            f"{t(LEGACY, 'join')}; cooperative-sticky pauses only the members that give up a "
            f"partition at the price of a second round (join {t('cooperative-sticky', 'join')})"
            f"; static membership makes a rolling bounce cost {t('static-range', 'rolling-bounce')}"
            f" against {t('eager-range', 'rolling-bounce')} for dynamic members, but a static "
            f"leave is noticed only at session expiry ({t('static-range', 'leave')}). The "
            f"leader mode keeps ZooKeeper without the herd: a join at N = {top} cost "
            f"{number(leader_top.requests.median)} requests against "
            f"{number(legacy_top.requests.median)} for the legacy group (one run each; fitted "
            f"log-log slope {'—' if slope is None else f'{slope:.2f}'} over N = "
            f"{min(p.members for p in leader)}–{top})."
            f"{defect_text} The ZooKeeper rows are not independent of the broker run beside "
            f"them: a legacy leave took {t(LEGACY, 'leave')} next to Apache Kafka 2.4.1 and "
            f"{t(LEGACY, 'leave', TANSU)} next to Tansu 0.6.0.")


def _alternatives_plot(ctx: Context, svg: str) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    width = 0.16
    for i, protocol in enumerate(PROTOCOLS):
        for ax, key in zip(axes, ("time_to_stable_s", "members_paused"), strict=True):
            cells = [kafka_cell(ctx, KAFKA, protocol, e, key) for e in EVENTS]
            xs = [j + (i - 2) * width for j, c in enumerate(cells) if c is not None]
            sp = [c for c in cells if c is not None]
            n = max((c.n for c in sp), default=0)
            ax.bar(xs, [c.median for c in sp], width, color=f"C{i}",
                   yerr=[[c.median - c.low for c in sp], [c.high - c.median for c in sp]],
                   capsize=2, label=f"{protocol}, real ({n} runs per bar)")
    axes[0].set_ylabel("time to stable (s), median, min–max bar")
    axes[1].set_ylabel("members paused, median, min–max bar")
    for ax in axes:
        ax.set_xticks(range(len(EVENTS)), EVENTS)
        ax.set_title(f"N = 4, {LABELS[KAFKA]} (real runs)", fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].legend(fontsize=6)
    fig.tight_layout()
    save_svg(fig, ctx.figures / svg)
    return f"![protocols on Apache Kafka 2.4.1: time to stable and members paused]" \
           f"({ctx.plot_link(svg)})"


@figure("findings-alternatives", source="results/comparison")
def alternatives(ctx: Context) -> str:
    lines = [f"**Finding.** {alternatives_claim(ctx)}", "",
             _alternatives_plot(ctx, "findings-alternatives.svg"), "",
             "| protocol | join: requests | join: stable s | join: members paused | leave: "
             "stable s | rolling bounce: stable s | rolling bounce: group rebalances |",
             "|---|---|---|---|---|---|---|"]
    for protocol in PROTOCOLS:
        def c(event: str, key: str, digits: int = 2, p: str = protocol) -> str:
            s = kafka_cell(ctx, KAFKA, p, event, key)
            return "—" if s is None else s.cell(digits)
        lines.append(f"| {protocol} | {c('join', 'coordination_requests', 0)} | "
                     f"{c('join', 'time_to_stable_s')} | "
                     f"{c('join', 'members_paused', 0)} | {c('leave', 'time_to_stable_s')} | "
                     f"{c('rolling-bounce', 'time_to_stable_s')} | "
                     f"{c('rolling-bounce', 'group_rebalances', 0)} |")
    lines += ["", f"Every cell: {LABELS[KAFKA]} beside an embedded ZooKeeper, N = 4, 8 "
              "partitions, 6 s sessions (raw data `results/comparison/compare-apache-kafka-"
              "2.4.1-*`; Tansu's coordinator, in the same folder, times rounds differently and "
              "is not used for these broker-side figures)."]
    return "\n".join(lines)
