"""docs/findings.md, topic (a): the herd effect, from committed results, and what the topic
modules share (protocol names, the real and simulated plot styles).

Every number carries its n (runs or seeds) and a range or a 95 % Wilson interval
(:mod:`zkconsumer.results.uncertainty`); real and simulated points are told apart in each plot.
Sources, read through the readers of the pages that publish them in full:

* herd: ``results/lab/herd-zk`` (one growing group, one run per size,
  :func:`zkconsumer.results.figures.lab.load`), the real Spark sweeps under
  ``results/scale/fitting`` and ``results/scale/validation-1`` (three runs per cell) and the
  simulated sweep ``results/scale/sim-sweep`` (:func:`zkconsumer.results.exclusions.sweep_rows`);

Topic (b) is in :mod:`.findings_splitbrain`, (c) and (d) in :mod:`.findings_outcome`, the
summary table in :mod:`.findings_summary`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from zkconsumer.results.exclusions import sweep_rows
from zkconsumer.results.figures.comparison import LABELS
from zkconsumer.results.figures.findings_text import Spread, exponent, number, spread
from zkconsumer.results.figures.lab import load
from zkconsumer.results.figures.splitbrain import num
from zkconsumer.results.plotting import pyplot, save_svg
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure
from zkconsumer.scenarios.protocols import COMPARED, PROTOCOL_TABLE, ZOOKEEPER, of_family

HERD_LAB = "lab/herd-zk"
# The largest real herds: plans 29 and 30's Spark-hosted runs on Tansu, N = 12 to 200, P = 24
HERD_SETS = ("scale/validation-29/tansu-a", "scale/validation-29/tansu-b",
             "scale/validation-29/tansu-96", "scale/validation-30/tansu-200")
HERD_P = 24
SCALE_REAL = ("scale/fitting", "scale/validation-1",
              # the held-out herd runs of plans 29 and 30 (P = 24, 5 to 20 runs a size)
              *HERD_SETS)
SIM_SWEEP = "scale/sim-sweep"
# The two ZooKeeper designs the findings set side by side (the table's compared ones).
LEGACY, LEADER = of_family(COMPARED, ZOOKEEPER)
REAL_STYLE = {"marker": "o", "linestyle": "none", "markersize": 6}
SIM_STYLE = {"marker": "^", "linestyle": "--", "markersize": 5, "markerfacecolor": "none"}


# --- the herd --------------------------------------------------------------------------------

@dataclass(frozen=True)
class HerdPoint:
    """One (source, N) cell of legacy joins: requests, notifications, time to stable."""

    source: str        # "lab", "spark" or "sim"
    event: str         # "join" or "leave"
    broker: str        # whose broker served the data path ("" for the simulator)
    members: int       # N before the join
    partitions: int
    requests: Spread
    notifications: Spread | None
    stable_s: Spread | None

    @property
    def group(self) -> str:
        """The group's size before → after the event. The lab's growing group has N members
        between events (a joiner makes N + 1, then leaves again); a Spark or simulated cell
        starts from N members."""
        if self.event == "join":
            return f"{self.members:,} → {self.members + 1:,}"
        if self.source == "lab":
            return f"{self.members + 1:,} → {self.members:,}"
        return f"{self.members:,} → {self.members - 1:,}"


def lab_herd(ctx: Context, protocol: str = LEGACY, event: str = "join") -> list[HerdPoint]:
    """The lab's growing group: one run per N, every request the members sent counted."""
    folder = ctx.results / HERD_LAB
    runs, _ = load(folder)
    broker = broker_of(folder)
    out = []
    for r in sorted(runs, key=lambda r: r.members):
        if (r.protocol, r.event, r.status) != (protocol, event, "ok"):
            continue
        m = r.metrics
        out.append(HerdPoint("lab", event, broker, r.members, r.partitions,
                             Spread((float(m["coordination_requests"]),)),
                             spread([m.get("watch_notifications")]),
                             spread([m.get("time_to_stable_s")])))
    return out


def herd_slope(ctx: Context, key: str = f"{LEGACY}/join") -> float | None:
    """The log-log slope of requests on N the herd command fitted (stored with its runs)."""
    _, doc = load(ctx.results / HERD_LAB)
    fit = (doc.get("fits") or {}).get(key)
    return None if fit is None else float(fit["slope"])


def _sweep_points(folders: Sequence[Path], source: str, unit: str, protocol: str,
                  event: str) -> list[HerdPoint]:
    cells: dict[tuple[int, int], list[dict[str, str]]] = {}
    broker = {}
    for folder in folders:
        for r in sweep_rows(folder):
            if (r["protocol"], r["event"]) == (protocol, event):
                key = (int(r["members"]), int(r["partitions"]))
                cells.setdefault(key, []).append(r)
                broker[key] = broker_of(folder) if source != "sim" else ""
    out = []
    for (n, p), rows in sorted(cells.items()):
        requests = spread([num(r["coordination_requests"]) for r in rows], unit)
        if requests is None:
            continue
        out.append(HerdPoint(source, event, broker[(n, p)], n, p, requests,
                             spread([num(r["watch_notifications"]) for r in rows], unit),
                             spread([num(r["time_to_stable_s"]) for r in rows], unit)))
    return out


def spark_herd(ctx: Context, protocol: str = LEGACY, event: str = "join") -> list[HerdPoint]:
    """Real members hosted by Spark tasks: three runs per cell, offset commits not counted."""
    folders = sorted(p.parent for base in SCALE_REAL
                     for p in (ctx.results / base).glob("*/sweep.csv"))
    return _sweep_points(folders, "spark", "runs", protocol, event)


def sim_herd(ctx: Context, protocol: str = LEGACY, event: str = "join") -> list[HerdPoint]:
    """The simulated sweep (P = 128): seeds per cell, the same columns as the Spark runs."""
    return _sweep_points([ctx.results / SIM_SWEEP], "sim", "seeds", protocol, event)


def broker_of(folder: Path) -> str:
    """The broker a committed result names in its meta.json."""
    return read_provenance(folder).broker


SOURCE_LABEL = {"lab": "real, lab ({runs}, {parts}, all requests)",
                "spark": "real, Spark tasks ({runs}, {parts}, no offset commits)",
                "sim": "simulated ({runs}, {parts}, no offset commits)"}


def _label(source: str, points: list[HerdPoint]) -> str:
    """The legend of one series: what it is, how many runs per point, which P."""
    ns = sorted({p.requests.n for p in points})
    unit = points[0].requests.unit if points else "runs"
    runs = (f"one {unit.removesuffix('s')} per N" if ns == [1]
            else f"{'–'.join(map(str, (ns[0], ns[-1])) if len(ns) > 1 else str(ns[0]))} "
                 f"{unit} per N")
    ps = sorted({p.partitions for p in points})
    parts = f"P = {ps[0]}" if len(ps) == 1 else f"P = {ps[0]}–{ps[-1]}"
    return SOURCE_LABEL[source].format(runs=runs, parts=parts)


def _herd_plot(ctx: Context, groups: dict[str, list[HerdPoint]], svg: str) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for i, (source, points) in enumerate(groups.items()):
        style = SIM_STYLE if source == "sim" else {**REAL_STYLE,
                                                   "marker": "os"[i % 2]}
        for ax, get in zip(axes, (lambda p: p.requests, lambda p: p.stable_s), strict=True):
            pts = [(p.members, get(p)) for p in points if get(p) is not None]
            xs = [n for n, _ in pts]
            mids = [s.median for _, s in pts]
            errs = [[s.median - s.low for _, s in pts], [s.high - s.median for _, s in pts]]
            ax.errorbar(xs, mids, yerr=errs, color=f"C{i}", capsize=3,
                        label=_label(source, points), **style)
    axes[0].set_ylabel("ZooKeeper requests per join")
    axes[1].set_ylabel("time to stable after a join (s)")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("members N before the join")
        ax.grid(True, which="both", alpha=0.3)
    legacy = f"{PROTOCOL_TABLE[LEGACY].label} ({LEGACY}) join"
    axes[0].set_title(f"{legacy}: requests", fontsize=9)
    axes[1].set_title(f"{legacy}: time to stable", fontsize=9)
    axes[0].legend(fontsize=7, title="bars: min–max over runs/seeds", title_fontsize=7)
    fig.tight_layout()
    save_svg(fig, ctx.figures / svg)
    return f"![legacy join: requests and time to stable vs N]({ctx.plot_link(svg)})"


def _herd_row(p: HerdPoint) -> str:
    where = {"lab": "real (lab)", "spark": "real (Spark)", "sim": "simulated"}[p.source]
    broker = f", data on {LABELS.get(p.broker, p.broker)}" if p.broker else ""
    notif = "—" if p.notifications is None else p.notifications.cell(0)
    stable = "—" if p.stable_s is None else p.stable_s.cell()
    return (f"| {where}{broker} | {p.event} | {p.group} | {p.partitions} | "
            f"{p.requests.cell(0)} | "
            f"{notif} | {stable} |")


def largest_herd(ctx: Context) -> list[HerdPoint]:
    """The legacy joins of the largest real herds (:data:`HERD_SETS`), smallest N first."""
    return [p for p in spark_herd(ctx) if p.partitions == HERD_P]


def largest_herd_clause(ctx: Context) -> str:
    """The largest real herds in a clause: their requests per join from the smallest size to
    the largest, and the power of N between the two largest (empty without them)."""
    points = largest_herd(ctx)
    if len(points) < 2:
        return ""
    first, before, last = points[0], points[-2], points[-1]
    k = exponent((before.members, before.requests.median), (last.members, last.requests.median))
    grown = "" if k is None else f", as N^{k:.2f} from N = {before.members}"
    return (f"; hosted in Spark tasks (real, P = {HERD_P}), a join's requests grew from "
            f"{first.requests.text(0)} at N = {first.members} to {last.requests.text(0)} at "
            f"N = {last.members}{grown}")


def herd_claim(ctx: Context) -> str:
    """The herd in one sentence: notifications, requests and their growth, the time at scale."""
    lab = lab_herd(ctx)
    sim = sim_herd(ctx)
    first, last = lab[0], lab[-1]
    slope = herd_slope(ctx)
    big = sim[-1]
    stable = "" if big.stable_s is None else (
        f" and the group is stable after {big.stable_s.text(0, ' s')}")
    leaves = lab_herd(ctx, event="leave")
    notified = all(p.notifications is not None and p.notifications.median == p.members
                   for p in lab)
    notes = ("every one of the N members received a watch notification and re-read the group "
             if notified else "")
    leave = "" if len(leaves) < 2 else (
        f"; a leave, from {number(leaves[0].requests.median)} (group {leaves[0].group}) to "
        f"{number(leaves[-1].requests.median)} (group {leaves[-1].group}; one run each)")
    return (f"In the legacy design a join wakes the whole group: {notes}(real, lab, one run "
            f"per size, N = {first.members}–{last.members}), so a join's ZooKeeper requests "
            f"grew from {first.requests.text(0)} at N = {first.members} to "
            f"{last.requests.text(0)} at N = {last.members} (fitted log-log slope "
            f"{'—' if slope is None else f'{slope:.2f}'} over those {len(lab)} runs){leave}"
            f"{largest_herd_clause(ctx)}; "
            f"simulated, a join at N = {big.members:,} (P = {big.partitions}) costs "
            f"{big.requests.text(0)} requests, {big.requests.median / big.members ** 2:.2f} × "
            f"N²,{stable}.")


@figure("findings-herd", source="results/lab/herd-zk")
def herd(ctx: Context) -> str:
    groups = {"lab": lab_herd(ctx), "spark": spark_herd(ctx), "sim": sim_herd(ctx)}
    leaves = {"lab": lab_herd(ctx, event="leave"), "spark": spark_herd(ctx, event="leave")}
    lines = [f"**Finding.** {herd_claim(ctx)}", "",
             _herd_plot(ctx, groups, "findings-herd.svg"), "",
             "| source | event | group before → after | P | requests | watch notifications | "
             "time to stable s |",
             "|---|---|---|---|---|---|---|"]
    lines += [_herd_row(p) for source in ("lab", "spark", "sim")
              for p in groups[source] + leaves.get(source, [])]
    lines += ["", "Raw data: `results/lab/herd-zk/` (lab), `results/scale/fitting/`, "
              "`results/scale/validation-1/` and the held-out herd sets of plans 29 and 30 "
              "(" + ", ".join(f"`results/{f}/`" for f in HERD_SETS) + ") (Spark), "
              "`results/scale/sim-sweep/` (simulated). "
              "The lab counts every request the members sent in the event's window; the Spark "
              "runs and the simulator leave offset commits out, so the two real series differ "
              "by definition as well as by P."]
    return "\n".join(lines)
