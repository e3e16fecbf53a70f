"""docs/findings.md, topic (b): split brain, the zombie and the stale view.

Sources: the zombie next to Apache Kafka 2.4.1 (``results/comparison/zombie-*``, read by
:mod:`.comparison`) and next to Tansu (``results/lab/split-zombie``, read by :mod:`.lab`), the
stale view (``results/lab/split-stale``), the real runs at N = 50–200 and the simulated zombie
sweep under ``results/splitbrain`` (read by :mod:`.splitbrain`, leader-mode rows measured
before the assignment-watch fix marked by its ancestry record).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from zkconsumer.results.figures.comparison import KAFKA, LABELS, runs_by_broker
from zkconsumer.results.figures.findings import (
    LEADER,
    LEGACY,
    REAL_STYLE,
    SIM_STYLE,
    broker_of,
)
from zkconsumer.results.figures.findings_text import Share, Spread, number, share_of, spread
from zkconsumer.results.figures.lab import load
from zkconsumer.results.figures.splitbrain import AREA, fix_of, num, real_rows, rows_of
from zkconsumer.results.figures.splitbrain_text import sizes as sizes_text
from zkconsumer.results.plotting import pyplot, save_svg
from zkconsumer.results.registry import Context, figure

ZOMBIE_LAB = "lab/split-zombie"
STALE_LAB = "lab/split-stale"
SIM_ZOMBIE = "sim-zombie-f0.1"

@dataclass(frozen=True)
class ZombieCell:
    """One protocol's zombie runs in one source: double ownership and late commits."""

    protocol: str
    members: int
    source: str               # "Apache Kafka 2.4.1", "Tansu 0.6.0" or "simulated"
    double_owned: Spread
    late_accepted: Share | None
    offset_back: Share | None


def _lab_zombie_cells(runs: Sequence[dict[str, Any]], source: str,
                      protocols: Sequence[str]) -> list[ZombieCell]:
    out = []
    for protocol in protocols:
        ok = [r for r in runs if r["protocol"] == protocol and r["status"] == "ok"]
        dbl = spread([r["metrics"].get("double_owned_s") for r in ok])
        if dbl is None:
            continue
        out.append(ZombieCell(
            protocol, ok[0]["members"], source, dbl,
            share_of((r["metrics"].get("late_commits_accepted") or 0) > 0 for r in ok),
            share_of((r["metrics"].get("offset_regressions") or 0) > 0 for r in ok)))
    return out


def real_zombie_small(ctx: Context, protocols: Sequence[str] = (LEGACY, LEADER)
                      ) -> list[ZombieCell]:
    """N = 4: the zombie next to Apache Kafka 2.4.1 and next to Tansu (lab)."""
    cells = []
    for broker, runs in sorted(runs_by_broker(ctx, "zombie-").items()):
        cells += _lab_zombie_cells(runs, LABELS.get(broker, broker), protocols)
    folder = ctx.results / ZOMBIE_LAB
    lab_runs, _ = load(folder)
    as_dicts = [{"protocol": r.protocol, "status": r.status, "members": r.members,
                 "metrics": r.metrics} for r in lab_runs]
    return cells + _lab_zombie_cells(as_dicts, LABELS.get(broker_of(folder), broker_of(folder)),
                                     protocols)


def real_splitbrain_rows(ctx: Context) -> list[dict[str, Any]]:
    """Every real row under results/splitbrain (:func:`.splitbrain.real_rows`) with its
    folder as ``run`` and ``pre_fix`` set for leader-mode rows measured before the
    assignment-watch fix."""
    fix = fix_of(ctx)
    return [{**r, "run": run, "pre_fix": fix is not None and fix.predates(run, r["protocol"])}
            for run, r in real_rows(ctx)]


def brokers_of(rows: Sequence[dict[str, Any]]) -> str:
    """The brokers a set of real rows ran beside, named as the docs name them."""
    names = sorted({LABELS.get(r.get("broker", ""), r.get("broker", "")) for r in rows} - {""})
    return " and ".join(names) or "an unrecorded broker"


def real_zombie_large(ctx: Context) -> list[ZombieCell]:
    """N = 100 and 200 on this machine (Tansu serves the data), leader mode after the fix."""
    rows = [r for r in real_splitbrain_rows(ctx) if r["scenario"] == "zombie"
            and r["applicable"] == "true" and not r["reason"] and not r["pre_fix"]]
    cells = []
    for protocol in (LEGACY, LEADER):
        for n in sorted({int(r["members"]) for r in rows if r["protocol"] == protocol}):
            at = [r for r in rows if r["protocol"] == protocol and int(r["members"]) == n]
            dbl = spread([num(r["double_owned_partition_s"]) for r in at])
            if dbl is not None:
                cells.append(ZombieCell(protocol, n, "real, Spark", dbl, share_of(
                    (num(r["zombie_commits_accepted"]) or 0) > 0 for r in at), share_of(
                    (num(r["offsets_went_back"]) or 0) > 0 for r in at)))
    return cells


def large_zombie_timing(ctx: Context) -> tuple[Spread | None, Spread | None]:
    """Legacy zombie runs at N = 100–200: time to stable from the cut, and the cut's length."""
    rows = [r for r in real_splitbrain_rows(ctx) if r["scenario"] == "zombie"
            and r["protocol"] == LEGACY and r["applicable"] == "true" and not r["reason"]]
    return (spread([num(r["time_to_stable_s"]) for r in rows]),
            spread([num(r["cut_s"]) for r in rows]))


def sim_zombie(ctx: Context) -> list[ZombieCell]:
    """Simulated, a tenth of the members cut for two sessions; cells with a run that had not
    settled within the simulated hour are left out (their metric is not complete)."""
    rows = [r for r in rows_of(ctx.results / AREA / SIM_ZOMBIE) if r["applicable"] == "true"]
    cells = []
    for protocol in (LEGACY, LEADER):
        for n in sorted({int(r["members"]) for r in rows if r["protocol"] == protocol}):
            at = [r for r in rows if r["protocol"] == protocol and int(r["members"]) == n]
            if any(r.get("settled") == "false" for r in at):
                continue
            dbl = spread([num(r["double_owned_partition_s"]) for r in at], "seeds")
            if dbl is not None:
                cells.append(ZombieCell(protocol, n, "simulated", dbl, None, None))
    return cells


def unsettled_zombie_sizes(ctx: Context) -> list[int]:
    rows = rows_of(ctx.results / AREA / SIM_ZOMBIE)
    return sorted({int(r["members"]) for r in rows
                   if r["protocol"] == LEGACY and r.get("settled") == "false"})


def stale_view(ctx: Context) -> dict[str, Any]:
    """Owner conflicts of the stale view: the lab's N = 4 run and the runs at N = 50, 100."""
    lab_runs, _ = load(ctx.results / STALE_LAB)
    lab = {r.protocol: r.metrics for r in lab_runs if r.status == "ok"}
    lab_members = sorted({r.members for r in lab_runs})
    rows = [r for r in real_splitbrain_rows(ctx) if r["scenario"] == "stale-view"
            and not r["reason"] and not r["pre_fix"]]
    big = {p: [r for r in rows if r["protocol"] == p] for p in (LEGACY, LEADER)}
    deciders = [r for r in rows if r["protocol"] != LEGACY]
    return {"lab": lab, "lab_members": lab_members,
            "members": sorted({int(r["members"]) for r in rows}),
            "one_decider": share_of((num(r["conflicts"]) or 0) > 0 for r in deciders),
            "decider_brokers": brokers_of([r for r in deciders if r["protocol"] != LEADER]),
            "conflicts": {p: spread([num(r["conflicts"]) for r in v]) for p, v in big.items()},
            "stable": {p: spread([num(r["time_to_stable_s"]) for r in v])
                       for p, v in big.items()}}


def _zombie_row(c: ZombieCell) -> str:
    late = "—" if c.late_accepted is None else c.late_accepted.cell()
    back = "—" if c.offset_back is None else c.offset_back.cell()
    return (f"| {c.protocol} | {c.members:,} | {c.source} | {c.double_owned.cell(1)} | {late} "
            f"| {back} |")


def zombie_claim(ctx: Context) -> str:
    small = [c for c in real_zombie_small(ctx) if c.protocol == LEGACY]
    large = [c for c in real_zombie_large(ctx) if c.protocol == LEGACY]
    sim = [c for c in sim_zombie(ctx) if c.protocol == LEGACY]
    positive = [c.members for c in sim if c.double_owned.median > 0]
    zero = [c.members for c in sim if c.double_owned.median == 0]
    kafka = next((c for c in small if c.source == LABELS[KAFKA]), small[0])
    large_text = ", ".join(f"{c.double_owned.text(1)} at N = {c.members}" for c in large)
    pooled = [c.late_accepted for c in large if c.late_accepted is not None]
    large_late = Share(sum(s.k for s in pooled), sum(s.n for s in pooled)) if pooled else None
    seeds = "–".join(sorted({str(c.double_owned.n) for c in sim}))
    if positive and zero and max(positive) < min(zero):
        sim_text = (f"simulated ({seeds} seeds per N), the median is above zero up to N = "
                    f"{max(positive):,} and zero from N = {min(zero):,}")
    else:
        sim_text = (f"simulated ({seeds} seeds per N), the median is above zero at "
                    f"{sizes_text(positive)} and zero at {sizes_text(zero)}")
    stable, cut = large_zombie_timing(ctx)
    timing = "" if stable is None or cut is None else (
        f" (the group was stable again {stable.text(1, ' s')} after the cut began; the cut "
        f"lasted {cut.text(1, ' s')})")
    return (f"A legacy member cut off from ZooKeeper keeps fetching after its partitions were "
            f"given to others: at N = {kafka.members} next to {kafka.source} the group "
            f"double-owned {kafka.double_owned.text(1)} partition·s per run and a zombie's late "
            f"commit was accepted in {kafka.late_accepted.text() if kafka.late_accepted else '—'}"
            f"; at N = {large[0].members}–{large[-1].members} on this machine "
            f"(double-owned partition·s: {large_text}) the survivors' rebalance outlasted the "
            f"cut{timing}, so the zombies' partitions sat unowned instead of double-owned, yet "
            f"a zombie's late commit was still accepted in "
            f"{large_late.text() if large_late else '—'}; {sim_text}.")


def stale_claim(ctx: Context) -> str:
    s = stale_view(ctx)
    lab = s["lab"]
    legacy, leader = lab.get(LEGACY, {}), lab.get(LEADER, {})
    conflicts = s["conflicts"][LEGACY]
    stable = s["stable"][LEGACY]
    return (f"With members seeing ZooKeeper late (stale view), the legacy group of "
            f"{', '.join(map(str, s['lab_members']))} had "
            f"{legacy.get('conflicts')} owner conflicts and {legacy.get('rollbacks')} rollbacks "
            f"and was stable after {number(legacy.get('time_to_stable_s', 0))} s (one run; "
            f"leader mode: {leader.get('conflicts')} conflicts, "
            f"{number(leader.get('time_to_stable_s', 0))} s, one run); at N = "
            f"{', '.join(map(str, s['members']))} the legacy conflicts were "
            f"{conflicts.text(0) if conflicts else '—'} and the time to stable "
            f"{stable.text(1, ' s') if stable else '—'}; the leader mode and the broker groups "
            f"(on {s['decider_brokers']}; one decider each) had an owner conflict in "
            f"{s['one_decider'].text() if s['one_decider'] else '—'}.")


def _zombie_plot(ctx: Context, real: list[ZombieCell], sim: list[ZombieCell], svg: str) -> str:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for i, protocol in enumerate((LEGACY, LEADER)):
        pts = [c for c in sim if c.protocol == protocol]
        if pts:
            ax.errorbar([c.members for c in pts], [c.double_owned.median for c in pts],
                        yerr=[[c.double_owned.median - c.double_owned.low for c in pts],
                              [c.double_owned.high - c.double_owned.median for c in pts]],
                        color=f"C{i}", capsize=3, label=f"{protocol}, simulated (5 seeds)",
                        **SIM_STYLE)
        pts = [c for c in real if c.protocol == protocol]
        if pts:
            # side by side, not on top of each other: legacy left, leader right, Tansu outside
            ax.errorbar([c.members * (0.92, 1.08)[i] * ((0.94, 1.06)[i] if "Tansu" in c.source
                                                        else 1) for c in pts],
                        [c.double_owned.median for c in pts],
                        yerr=[[c.double_owned.median - c.double_owned.low for c in pts],
                              [c.double_owned.high - c.double_owned.median for c in pts]],
                        color=f"C{i}", capsize=3,
                        label=f"{protocol}, real ({sum(c.double_owned.n for c in pts)} runs)",
                        zorder=3, **REAL_STYLE)
    ax.set_xscale("log")
    ax.set_xlabel("members N (a tenth cut off; at N = 4, one member)")
    ax.set_ylabel("double-owned partition·s per run")
    ax.set_title("zombie: two members fetch one partition", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, title="bars: min–max over runs/seeds", title_fontsize=7)
    fig.tight_layout()
    save_svg(fig, ctx.figures / svg)
    return f"![zombie: double-owned partition-seconds vs N]({ctx.plot_link(svg)})"


@figure("findings-splitbrain", source="results/splitbrain")
def split_brain(ctx: Context) -> str:
    real = real_zombie_small(ctx) + real_zombie_large(ctx)
    sim = sim_zombie(ctx)
    lines = [f"**Finding (zombie).** {zombie_claim(ctx)}", "",
             f"**Finding (stale view).** {stale_claim(ctx)}", "",
             _zombie_plot(ctx, real, sim, "findings-zombie.svg"), "",
             "| protocol | N | where | double-owned partition·s | runs with a late commit "
             "accepted (95 % Wilson) | runs where a committed offset went back (95 % Wilson) |",
             "|---|---|---|---|---|---|"]
    lines += [_zombie_row(c) for c in real]
    lines += [_zombie_row(c) for c in sim if c.members in (10, 100, 1000)]
    late = unsettled_zombie_sizes(ctx)
    lines += ["", "Raw data: `results/comparison/zombie-apache-kafka-2.4.1/`, "
              "`results/lab/split-zombie/`, `results/lab/split-stale/`, `results/splitbrain/` "
              f"(`real-*`, `{SIM_ZOMBIE}`; the table shows the simulated N = 10, 100, 1,000 of "
              "the plot)."]
    if late:
        lines.append(f"Simulated legacy cells at N = {', '.join(f'{n:,}' for n in late)} had "
                     "runs that did not settle within the simulated hour and are not shown.")
    return "\n".join(lines)
