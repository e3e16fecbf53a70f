"""docs/findings.md, the summary table at the top: defect -> legacy outcome -> what removes it
-> at what cost, one row per defect, every number from the topic blocks' own functions
(:mod:`.findings`, :mod:`.findings_splitbrain`, :mod:`.findings_outcome`), so the summary
cannot disagree with them."""

from __future__ import annotations

from zkconsumer.results.figures.comparison import KAFKA, LABELS
from zkconsumer.results.figures.findings import (
    LEADER,
    LEGACY,
    lab_herd,
    largest_herd,
    sim_herd,
)
from zkconsumer.results.figures.findings_outcome import (
    budget_cells,
    kafka_cell,
    kafka_sizes,
    leader_defect,
    others_in_storms,
    pooled,
    storm_runs,
)
from zkconsumer.results.figures.findings_splitbrain import real_zombie_small, stale_view
from zkconsumer.results.figures.findings_text import number, spread
from zkconsumer.results.figures.formation_original import formation_rows, formed_share
from zkconsumer.results.figures.lab import load
from zkconsumer.results.figures.splitbrain import num
from zkconsumer.results.registry import Context, figure
from zkconsumer.scenarios.protocols import COMPARED

FAILOVER_LAB = "lab/split-failover"


def _k(ctx: Context, protocol: str, event: str, key: str, digits: int = 2) -> str:
    s = kafka_cell(ctx, KAFKA, protocol, event, key)
    return "—" if s is None else s.cell(digits)


def _largest(ctx: Context) -> str:
    """The largest real herd's join, hosted in Spark tasks (empty without it)."""
    points = largest_herd(ctx)
    if not points:
        return ""
    big = points[-1]
    return (f"; hosted in Spark tasks, {big.requests.cell(0)} at N = {big.members} "
            f"(P = {big.partitions})")


def _herd_row(ctx: Context) -> str:
    lab, leader, sim = lab_herd(ctx), lab_herd(ctx, LEADER), sim_herd(ctx)
    first, last, big = lab[0], lab[-1], sim[-1]
    lead = next(p for p in leader if p.members == last.members)
    notified = all(p.notifications is not None and p.notifications.median == p.members
                   for p in lab)
    stable = "" if big.stable_s is None else f", stable after {big.stable_s.cell(0)} s"
    sizes = kafka_sizes(ctx)
    return (f"| (a) herd: every change wakes every member | "
            f"{'a join notifies all N members; ' if notified else ''}requests per join "
            f"{number(first.requests.median)} at N = {first.members} → "
            f"{number(last.requests.median)} at N = {last.members} (one run each)"
            f"{_largest(ctx)}; simulated "
            f"N = {big.members:,}: {big.requests.cell(0)} requests{stable} | broker "
            f"coordination, requests per join at {sizes}: "
            f"{_k(ctx, 'eager-range', 'join', 'coordination_requests', 0)} (eager) against "
            f"{_k(ctx, LEGACY, 'join', 'coordination_requests', 0)} (legacy); leader mode: "
            f"{number(lead.requests.median)} at N = {lead.members} (one run) | eager: every "
            f"member owning a partition pauses on a join (members paused at {sizes}: "
            f"{_k(ctx, 'eager-range', 'join', 'members_paused', 0)}); cooperative-sticky: a "
            f"second round (rebalances per join: "
            f"{_k(ctx, 'cooperative-sticky', 'join', 'group_rebalances', 0)}; stable after "
            f"{_k(ctx, 'cooperative-sticky', 'join', 'time_to_stable_s')} s, eager "
            f"{_k(ctx, 'eager-range', 'join', 'time_to_stable_s')} s) |")


def _zombie_row(ctx: Context) -> str:
    small = {(c.protocol, c.source): c for c in real_zombie_small(ctx, COMPARED)}
    kafka = LABELS[KAFKA]
    legacy, leader = small.get((LEGACY, kafka)), small.get((LEADER, kafka))
    brokers = [c for (p, src), c in small.items() if src == kafka and p not in (LEGACY, LEADER)]
    fenced = pooled([c.late_accepted for c in brokers])
    defect = leader_defect(ctx)
    defect_text = "" if defect is None else (
        f"; a leader-mode defect (a member deaf to new assignments) left partitions unowned "
        f"and {defect['row']['lost']} records undelivered in one run at N = "
        f"{defect['row']['members']}, fixed since")
    failover = _failover(ctx)
    if legacy is None or leader is None:
        return "| (b) zombie | not measured | — | — |"
    return (f"| (b) split brain, zombie: a member cut off from ZooKeeper keeps fetching | "
            f"{legacy.double_owned.cell(1)} double-owned partition·s; late commit accepted in "
            f"{legacy.late_accepted.cell() if legacy.late_accepted else '—'} runs (N = "
            f"{legacy.members}, {kafka}) | leader mode (stops fetching on suspension, fenced "
            f"commits): "
            f"{leader.double_owned.cell(1)} partition·s, late commits accepted "
            f"{leader.late_accepted.cell() if leader.late_accepted else '—'}; broker groups "
            f"(generation fencing): runs with a late commit accepted "
            f"{fenced.cell() if fenced else '—'} | leader "
            f"mode pauses fetching whenever ZooKeeper is unreachable{failover}{defect_text} |")


def _failover(ctx: Context) -> str:
    runs, _ = load(ctx.results / FAILOVER_LAB)
    steady = {r.protocol: r.metrics.get("partition_seconds_unavailable") for r in runs
              if r.event == "failover-steady" and r.status == "ok"}
    if LEADER not in steady or LEGACY not in steady:
        return ""
    return (f" (a ZooKeeper leader failover with no rebalance: {number(steady[LEADER])} "
            f"partition·s without a fetcher against {number(steady[LEGACY])} for the legacy "
            "group, one run each)")


def _stale_row(ctx: Context) -> str:
    s = stale_view(ctx)
    legacy, leader = s["lab"].get(LEGACY, {}), s["lab"].get(LEADER, {})
    return (f"| (b) split brain, stale view: members decide from different views | "
            f"{legacy.get('conflicts')} owner conflicts, {legacy.get('rollbacks')} rollbacks, "
            f"stable after {number(legacy.get('time_to_stable_s', 0))} s (N = "
            f"{', '.join(map(str, s['lab_members']))}, one run) | one decider: leader mode "
            f"{leader.get('conflicts')} conflicts, stable after "
            f"{number(leader.get('time_to_stable_s', 0))} s (one run); at N = "
            f"{', '.join(map(str, s['members']))}, leader mode and broker groups (on "
            f"{s['decider_brokers']}) had a conflict in "
            f"{s['one_decider'].cell() if s['one_decider'] else '—'} runs "
            "| nothing measured beyond the other rows': a decider must be elected (leader mode) "
            "or located (broker coordinator) before it acts |")


def _outcome_row(ctx: Context) -> str:
    cells = budget_cells(storm_runs(ctx))
    budgets = sorted({c.budget for c in cells})
    low = [c for c in cells if c.budget == budgets[0]]
    formed = pooled([c.formed for c in low])
    stuck = pooled([c.stuck for c in low])
    others, brokers = others_in_storms(ctx)
    high = [c for c in cells if c.budget == budgets[-1]]
    formed_high = pooled([c.formed for c in high])
    top = max(c.members for c in high)
    stable = spread([num(s["row"]["time_to_stable_s"]) for s in storm_runs(ctx)
                     if (s["budget"], s["members"]) == (budgets[-1], top) and s["formed"]])
    return (f"| (c) uncontrollable outcome: a member that runs out of retries gives up and "
            f"nobody knows | `rebalance.max.retries` = {budgets[0]}: group formed in "
            f"{formed.cell() if formed else '—'} runs, and {stuck.cell() if stuck else '—'} of "
            f"those formed were left stuck (real, N = {low[0].members}–{low[-1].members})"
            f"{_original_formation(ctx, budgets[0])} | no "
            f"per-member budget (leader mode, broker groups on {brokers}): a member gave up in "
            f"{others.cell() if others else '—'} storms | a larger budget hides it: with "
            f"{budgets[-1]} retries the legacy group formed in "
            f"{formed_high.cell() if formed_high else '—'} runs (N up to {top}), and a storm "
            f"at N = {top} took {stable.cell(1) if stable else '—'} s to become stable |")


def _original_formation(ctx: Context, budget: int) -> str:
    """The same budget with original 0.10.2 members started together, when measured."""
    rows = formation_rows(ctx)
    share = formed_share(rows, "original", budget)
    if share is None:
        return ""
    sizes = sorted({int(r["members"]) for r in rows if r["kind"] == "original"})
    return (f"; original 0.10.2 members (a JVM each, N = {sizes[0]}–{sizes[-1]}, slow JVM "
            f"starts spreading their registrations) formed in {share.cell()} runs")


@figure("findings-summary", source="results")
def summary(ctx: Context) -> str:
    """The five-minute answer; the columns: the defect, what it did to the legacy group, what
    removes it, what that costs. Cells: median (min–max; n) or k/n (95 % Wilson)."""
    return "\n".join([
        "| defect | legacy outcome (measured) | what removes it | cost |", "|---|---|---|---|",
        _herd_row(ctx), _zombie_row(ctx), _stale_row(ctx), _outcome_row(ctx), "",
        "Cells read *median (min–max; n runs)* or *k/n (95 % Wilson interval)*; broker-side "
        f"figures are from {LABELS[KAFKA]} unless marked. Details, figures and run sets in the "
        "sections below."])

