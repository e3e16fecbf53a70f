"""docs/experiments.md and docs/leader.md: the herd and split-brain figures, from ``runs.json``.

Each folder under ``results/lab/`` is one run of an ``experiment`` verb: ``runs.json`` (the
compact results, ``zkconsumer.results.compact``), ``summary.md`` and ``meta.json``. The tables
are the lab's own summary tables, so the docs show what the command printed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from zkconsumer.lab.herd.report import fits_table
from zkconsumer.lab.herd.report import summary_table as herd_table
from zkconsumer.lab.runs import RunResult, RunStatus
from zkconsumer.lab.splitbrain.report import summary_table as split_table
from zkconsumer.results.compact import COMPACT_FILE
from zkconsumer.results.plotting import pyplot, save_svg
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure
from zkconsumer.scenarios.protocols import COMPARED, ZOOKEEPER, of_family

HERD = "lab/herd-zk"
HERD_BROKER = "lab/herd-broker"
ZOMBIE = "lab/split-zombie"
STALE = "lab/split-stale"
FAILOVER = "lab/split-failover"


def load(folder: Path) -> tuple[list[RunResult], dict[str, Any]]:
    doc = json.loads((folder / COMPACT_FILE).read_text(encoding="utf-8"))
    return [RunResult.from_json(r) for r in doc["runs"]], doc


def provenance_line(folder: Path, source: str) -> str:
    """Where a table comes from: command, revision, date, machine, load, broker."""
    meta = read_provenance(folder)
    return (f"`results/{source}/` (broker {meta.broker or 'none'}; revision, date and load in its "
            f"`meta.json`); reproduce:\n\n    {meta.command}\n")


def _block(ctx: Context, source: str, body: Callable[[Path], str]) -> str:
    folder = ctx.results / source
    if not (folder / COMPACT_FILE).exists():
        return f"No committed run yet (`results/{source}/`).\n"
    return provenance_line(folder, source) + "\n" + body(folder)


def _only(runs: Sequence[RunResult], protocols: Sequence[str]) -> list[RunResult]:
    return [r for r in runs if r.protocol in protocols]


# --- herd ------------------------------------------------------------------------------------

def _herd_plot(runs: Sequence[RunResult], fits: dict[str, Any], path: Path) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for key, fit in fits.items():
        pts = fit["points"]
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        ax.plot(xs, ys, marker="o", label=f"{key}, real, one run per N (slope {fit['slope']:.2f})")
    sizes = sorted({r.members for r in runs})
    if sizes:
        ref = [fits[k]["points"][0][1] for k in fits if fits[k]["points"]] or [1]
        y0 = max(ref)
        ax.plot(sizes, [y0 * (n / sizes[0]) ** 2 for n in sizes], color="grey",
                linestyle=":", label="slope 2 (reference)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(sizes)
    ax.set_xticklabels([str(n) for n in sizes])
    ax.set_xlabel("members N before the event")
    ax.set_ylabel("requests per event (clients' count)")
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return save_svg(fig, path)


def _cost_table_misses(runs: Sequence[RunResult], protocol: str, event: str) -> list[str]:
    """Measured requests minus the simulator's cost table (``sim/costs.py``) for the
    conflict-free legacy events with M >= P members after the event (M -> difference)."""
    from zkconsumer.sim.costs import clean_join_requests, clean_leave_operations

    out = []
    for r in sorted(runs, key=lambda r: r.members):
        if r.protocol != protocol or r.event != event or r.status != RunStatus.OK.value:
            continue
        m = r.members + 1 if event == "join" else r.members
        req, conflicts = r.metrics.get("coordination_requests"), r.metrics.get("conflicts")
        if req is None or conflicts != 0 or m < r.partitions:
            continue
        # The leaver is the member that joined last: the highest rank of the M + 1.
        table = (clean_join_requests(r.members, r.partitions) if event == "join" else
                 sum(clean_leave_operations(m + 1, r.partitions, m).values()))
        out.append(f"{m} → {int(req) - table:+d}")
    return out


def runs_note(runs: Sequence[RunResult]) -> str:
    """How many runs each row is: a row of one run is that run, not a median."""
    counts: dict[tuple[str, str, int], int] = {}
    for r in runs:
        key = (r.protocol, r.event, r.members)
        counts[key] = counts.get(key, 0) + 1
    sizes = sorted(set(counts.values()))
    if sizes == [1]:
        return "Each row is one run (one event at one N); the fits are over those single runs."
    return ("Runs per row: " + ", ".join(str(n) for n in sizes) + "; each row is their median.")


@figure("experiments/herd", source=HERD)
def herd(ctx: Context) -> str:
    def body(folder: Path) -> str:
        runs, doc = load(folder)
        fits = doc.get("fits") or {}
        svg = _herd_plot(runs, fits, ctx.figures / "herd-requests.svg")
        lines = [runs_note(runs), "", herd_table(runs), "", fits_table(fits), "",
                 f"![requests per event against N, log-log]({ctx.plot_link(svg.name)})", ""]
        for event in ("join", "leave"):
            misses = _cost_table_misses(runs, "zk-range", event)
            if misses:
                lines.append(f"`zk-range` {event}s without a claim conflict and with M ≥ P "
                             f"members after the event, M → measured requests − the cost "
                             f"table's (`sim/costs.py`): {', '.join(misses)}.")
        local = _local_slope(runs, "zk-range", "join")
        if local:
            lines.append(f"Local slope of `zk-range` joins between the two largest sizes: "
                         f"{local}.")
        return "\n".join(lines) + "\n"

    return _block(ctx, HERD, body)


@figure("experiments/herd-process", source=HERD)
def herd_process(ctx: Context) -> str:
    lines = ["| protocol | event | N | threads in the process | open descriptors |",
             "|---|---|---|---|---|"]
    for source in (HERD, HERD_BROKER):
        if not (ctx.results / source / COMPACT_FILE).exists():
            continue
        runs, _ = load(ctx.results / source)
        top = max(r.members for r in runs)
        for r in runs:
            if r.members == top and "threads" in r.details:
                lines.append(f"| {r.protocol} | {r.event} | {r.members} | "
                             f"{r.details['threads']} | {r.details.get('open_fds', '—')} |")
    return "\n".join(lines) + "\n"


def _local_slope(runs: Sequence[RunResult], protocol: str, event: str) -> str:
    pts = sorted((r.members, r.metrics.get("coordination_requests")) for r in runs
                 if r.protocol == protocol and r.event == event
                 and r.metrics.get("coordination_requests"))
    if len(pts) < 2:
        return ""
    (n1, q1), (n2, q2) = pts[-2], pts[-1]
    return f"log({q2}/{q1}) / log({n2}/{n1}) = {math.log(q2 / q1) / math.log(n2 / n1):.2f}"


@figure("leader/herd", source=HERD)
def leader_herd(ctx: Context) -> str:
    def body(folder: Path) -> str:
        runs, doc = load(folder)
        fits = doc.get("fits") or {}
        lines = ["| event | N | zk-range requests | zk-leader-range requests | zk-range stable s "
                 "| zk-leader-range stable s | zk-range coord. s | zk-leader-range coord. s "
                 "| conflicts (legacy / leader) |", "|---|---|---|---|---|---|---|---|---|"]
        by = {(r.protocol, r.event, r.members): r.metrics for r in runs
              if r.status == RunStatus.OK.value}
        for event in ("join", "leave"):
            for n in sorted({r.members for r in runs}):
                a, b = by.get(("zk-range", event, n)), by.get(("zk-leader-range", event, n))
                if a is None or b is None:
                    continue
                lines.append(
                    f"| {event} | {n} | {a.get('coordination_requests')} | "
                    f"{b.get('coordination_requests')} | {_f(a.get('time_to_stable_s'))} | "
                    f"{_f(b.get('time_to_stable_s'))} | {_f(a.get('coordination_s'))} | "
                    f"{_f(b.get('coordination_s'))} | {a.get('conflicts')} / "
                    f"{b.get('conflicts')} |")
        notes = [f"- {r.protocol}/{r.event} at N={r.members}: {r.reason}" for r in runs
                 if r.reason and r.protocol in LEADER_PAIR]
        if notes:
            lines += ["", *notes]
        slopes = [f"{k} {v['slope']:.2f}" for k, v in fits.items()]
        lines += ["", "Fitted log-log slopes of requests per event: " + ", ".join(slopes) + "."]
        return "\n".join(lines) + "\n"

    return _block(ctx, HERD, body)


def _f(value: Any) -> str:
    if value is None:
        return "—"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


# --- split brain -----------------------------------------------------------------------------

ZOMBIE_REPEAT_COLUMNS = (
    ("double_owned_s", "double-owned partition·s"),
    ("zombie_overlap_deliveries", "zombie deliveries while double-owned"),
    ("delivered_by_two", "msgs delivered by two"),
    ("late_commits_accepted", "late commits accepted"),
    ("late_commits_rejected", "late commits rejected"),
    ("offset_regressions", "committed offset went back"),
    ("zombie_stopped_s", "zombie stopped fetching s"),
    ("lost", "lost"),
)


def per_repeat_table(runs: Sequence[RunResult], cols: Sequence[tuple[str, str]]) -> str:
    head = ["protocol", "repeat", *[t for _, t in cols]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in sorted(runs, key=lambda r: (r.protocol, r.repeat)):
        if r.status != RunStatus.OK.value:
            lines.append(f"| {r.protocol} | {r.repeat} | **{r.status}** |"
                         + " |" * (len(cols) - 1))
            continue
        lines.append("| " + " | ".join([r.protocol, str(r.repeat),
                                        *[_f(r.metrics.get(k)) for k, _ in cols]]) + " |")
    return "\n".join(lines) + "\n"


def _regressions(runs: Sequence[RunResult], protocol: str) -> str:
    ok = [r for r in runs if r.protocol == protocol and r.status == RunStatus.OK.value]
    went_back = sum(1 for r in ok if (r.metrics.get("offset_regressions") or 0) > 0)
    return f"{went_back} of {len(ok)}"


def _split(source: str, scenario: str, protocols: Sequence[str] | None,
           repeats: bool = False) -> Callable[[Context], str]:
    def render(ctx: Context) -> str:
        def body(folder: Path) -> str:
            runs, _ = load(folder)
            if protocols is not None:
                runs = _only(runs, protocols)
            out = [split_table(runs, scenario)]
            if repeats:
                out += ["", "Every repeat:", "", per_repeat_table(runs, ZOMBIE_REPEAT_COLUMNS),
                        "", "Repeats in which a committed offset went back: " + ", ".join(
                            f"{p} {_regressions(runs, p)}"
                            for p in dict.fromkeys(r.protocol for r in runs)) + "."]
            return "\n".join(out) + "\n"

        return _block(ctx, source, body)

    return render


LEADER_PAIR = of_family(COMPARED, ZOOKEEPER)  # the legacy and the leader mode

figure("experiments/zombie", source=ZOMBIE)(_split(ZOMBIE, "zombie", None, repeats=True))
figure("experiments/stale-view", source=STALE)(_split(STALE, "stale-view", None))
figure("experiments/failover", source=FAILOVER)(_split(FAILOVER, "failover", None))
figure("leader/zombie", source=ZOMBIE)(_split(ZOMBIE, "zombie", LEADER_PAIR, repeats=True))
figure("leader/stale-view", source=STALE)(_split(STALE, "stale-view", LEADER_PAIR))
figure("leader/failover", source=FAILOVER)(_split(FAILOVER, "failover", LEADER_PAIR))

