"""docs/kip848.md at scale: KIP-848's own claims as the group grows, and its split brain.

Read from the committed herd sweeps on Apache Kafka 4 (``results/comparison/herd-apache-kafka-4*``,
one folder per KIP-848 heartbeat interval: one growing group per protocol, one join and one
leave at each N, so every point is one event, n = 1) and the split-brain runs on it
(``results/comparison/split-<scenario>-apache-kafka-4*``). Every table and plot names its broker
and the heartbeat interval the broker gave the KIP-848 groups (``meta.json`` ``extra``).

The claims checked, beside the legacy herd's N-law: members that keep their partitions never
stop (``members_idle``, and ``members_paused`` against the members that gave something up);
only what must move moves (``partitions_moved`` against ⌊P/(N+1)⌋, the share a balanced
assignment gives the newcomer or took from the leaver); time to stable does not grow with N;
and the requests per event, KIP-848's ConsumerGroupHeartbeat included.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zkconsumer.results.figures.comparison import num
from zkconsumer.results.figures.findings_text import Spread, spread
from zkconsumer.results.plotting import pyplot, save_svg
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure
from zkconsumer.scenarios.protocols import PROTOCOL_TABLE

HERD_PREFIX = "herd-apache-kafka-4"
SPLIT_PREFIX = "split-"
KAFKA4_MARK = "-apache-kafka-4"
RUNS_FILE = "runs.json"
HERD_EVENTS = ("join", "leave")
KIP848_HEARTBEAT = "ConsumerGroupHeartbeat"
SPLIT_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "zombie": (("late_commits_rejected", "late commits refused"),
               ("late_commits_accepted", "late commits taken"),
               ("offset_regressions", "committed offset went back"),
               ("double_owned_s", "double-owned s"),
               ("zombie_overlap_deliveries", "zombie deliveries while double-owned"),
               ("zombie_stopped_s", "zombie stopped s"),
               ("stable_after_resume_s", "stable s after resume"),
               ("lost", "lost")),
    "stale-view": (("time_to_stable_s", "stable s"), ("members_paused", "paused"),
                   ("partitions_revoked", "revoked"), ("conflicts", "owner conflicts"),
                   ("double_owned_intervals", "double-owned"),
                   ("partition_seconds_unavailable", "part·s no owner"),
                   ("duplicates", "dups"), ("lost", "lost")),
}


@dataclass(frozen=True)
class Sweep:
    """One committed herd folder on Apache Kafka 4."""

    name: str
    broker: str
    heartbeat_ms: int | None
    conditions: str
    command: str
    partitions: int
    runs: list[dict[str, Any]]
    fits: dict[str, dict[str, Any]]

    def protocols(self) -> list[str]:
        seen = dict.fromkeys(r["protocol"] for r in self.runs)
        return sorted(seen, key=lambda p: (PROTOCOL_TABLE[p].rank is None,
                                           PROTOCOL_TABLE[p].rank or 0))

    def sizes(self) -> list[int]:
        return sorted({int(r["members"]) for r in self.runs})

    def point(self, protocol: str, event: str, n: int) -> dict[str, Any] | None:
        for r in self.runs:
            if (r["protocol"], r["event"], int(r["members"])) == (protocol, event, n) \
                    and r["status"] == "ok":
                return r
        return None

    def value(self, protocol: str, event: str, n: int, key: str) -> float | None:
        r = self.point(protocol, event, n)
        return None if r is None else metric(r, key)

    def local_slope(self, protocol: str, event: str) -> float | None:
        """log(requests) between the two largest sizes over log of their ratio: the N-law where
        it shows, without the per-partition constant that weighs at small N."""
        sizes = self.sizes()
        if len(sizes) < 2:
            return None
        a, b = sizes[-2], sizes[-1]
        ra = self.value(protocol, event, a, "coordination_requests")
        rb = self.value(protocol, event, b, "coordination_requests")
        if not ra or not rb:
            return None
        return math.log(rb / ra) / math.log(b / a)

    def label(self) -> str:
        hb = "—" if self.heartbeat_ms is None else f"{self.heartbeat_ms} ms"
        return f"{self.broker}, KIP-848 heartbeat {hb}"


def metric(run: dict[str, Any], key: str) -> float | None:
    """A run's metric; ``heartbeat_requests`` is its ConsumerGroupHeartbeat count."""
    metrics = run.get("metrics") or {}
    if key == "heartbeat_requests":
        value = (metrics.get("requests_by_type") or {}).get(KIP848_HEARTBEAT)
    else:
        value = metrics.get(key)
    return None if value is None else float(value)


def balanced_share(partitions: int, n: int) -> int:
    """What a join N -> N+1 (or the leave back) must move at least under a balanced
    assignment: the newcomer's (the leaver's) share, ⌊P/(N+1)⌋."""
    return partitions // (n + 1)


def sweeps(ctx: Context) -> list[Sweep]:
    """The committed herd folders on Apache Kafka 4, shortest heartbeat first."""
    out = []
    for folder in sorted((ctx.results / "comparison").glob(f"{HERD_PREFIX}*")):
        if not (folder / RUNS_FILE).is_file():
            continue
        doc = json.loads((folder / RUNS_FILE).read_text())
        meta = read_provenance(folder)
        hb = meta.extra.get("consumer_heartbeat_interval_ms")
        out.append(Sweep(folder.name, meta.broker, None if hb is None else int(hb),
                         meta.conditions(), meta.command, int(doc["spec"]["partitions"]),
                         list(doc["runs"]), dict(doc.get("fits") or {})))
    return sorted(out, key=lambda s: (s.heartbeat_ms or 0, s.name))


def _per_n_table(sweep: Sweep, title: str, cell: Any) -> list[str]:
    sizes = sweep.sizes()
    lines = [f"| {title} | event | " + " | ".join(f"N = {n}" for n in sizes) + " |",
             "|---|---|" + "---|" * len(sizes)]
    for protocol in sweep.protocols():
        for event in HERD_EVENTS:
            cells = [cell(protocol, event, n) for n in sizes]
            lines.append(f"| {protocol} | {event} | " + " | ".join(cells) + " |")
    return lines


def herd_tables(sweep: Sweep) -> list[str]:
    """Requests, movement and time to stable per protocol, event and N (one event each)."""

    def requests(p: str, e: str, n: int) -> str:
        total = sweep.value(p, e, n, "coordination_requests")
        hb = sweep.value(p, e, n, "heartbeat_requests")
        if total is None:
            return "—"
        if not PROTOCOL_TABLE[p].kip848 or hb is None:
            return num(total)
        return f"{num(total)} ({num(hb)} CGH)"

    def moved(p: str, e: str, n: int) -> str:
        m = sweep.value(p, e, n, "partitions_moved")
        paused = sweep.value(p, e, n, "members_paused")
        idle = sweep.value(p, e, n, "members_idle")
        if m is None:
            return "—"
        return f"{num(m)} / {num(paused)} / {num(idle)}"

    def stable(p: str, e: str, n: int) -> str:
        return num(sweep.value(p, e, n, "time_to_stable_s"))

    floor = ", ".join(f"{balanced_share(sweep.partitions, n)} at N = {n}"
                      for n in sweep.sizes())
    return [
        "Requests per event (the clients' count over the event's window; for KIP-848 groups, "
        "in brackets, the ConsumerGroupHeartbeat requests among them, CGH):", "",
        *_per_n_table(sweep, "requests", requests), "",
        f"Partitions moved / members paused / members idle (at least {floor} must move: "
        "⌊P/(N+1)⌋):", "",
        *_per_n_table(sweep, "moved / paused / idle", moved), "",
        "Seconds from the event until the group was stable:", "",
        *_per_n_table(sweep, "stable s", stable),
    ]


def fits_table(sweep: Sweep) -> list[str]:
    sizes = sweep.sizes()
    last = f"slope N = {sizes[-2]} → {sizes[-1]}" if len(sizes) >= 2 else "slope"
    lines = ["| protocol | event | slope of log requests on log N | r² | " + last + " |",
             "|---|---|---|---|---|"]
    for protocol in sweep.protocols():
        for event in HERD_EVENTS:
            fit = sweep.fits.get(f"{protocol}/{event}")
            if fit is None:
                continue
            r2 = fit.get("r2")
            lines.append(f"| {protocol} | {event} | {fit['slope']:.2f} | "
                         f"{'—' if r2 is None else f'{r2:.3f}'} | "
                         f"{_slope(sweep.local_slope(protocol, event))} |")
    return lines


def _herd_plot(ctx: Context, sweep: Sweep, svg: str) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for protocol in sweep.protocols():
        colour = PROTOCOL_TABLE[protocol].colour
        for event, marker, style in (("join", "o", "-"), ("leave", "s", ":")):
            for ax, key in zip(axes, ("coordination_requests", "time_to_stable_s"),
                               strict=True):
                pts = [(n, sweep.value(protocol, event, n, key)) for n in sweep.sizes()]
                pts = [(n, v) for n, v in pts if v is not None and (v > 0 or ax is axes[1])]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker,
                            linestyle=style, color=colour, label=f"{protocol} {event}")
    for ax, title in zip(axes, ("requests per event", "seconds until stable"), strict=True):
        ax.set_xscale("log")
        ax.set_xticks(sweep.sizes(), [str(n) for n in sweep.sizes()])
        ax.minorticks_off()
        ax.set_xlabel("group size N before the event")
        ax.set_title(f"{title}: {sweep.label()}", fontsize=8)
        ax.grid(True, alpha=0.3)
    axes[0].set_yscale("log")
    axes[1].set_ylim(bottom=0)
    axes[1].legend(fontsize=6, ncol=2)
    fig.tight_layout()
    save_svg(fig, ctx.figures / svg)
    return f"![Herd on {sweep.label()}: requests and time to stable against N]" \
           f"({ctx.plot_link(svg)})"


@figure("kip848-herd", source=f"results/comparison/{HERD_PREFIX}*")
def kip848_herd(ctx: Context) -> str:
    found = sweeps(ctx)
    if not found:
        return "_No herd sweep on Apache Kafka 4 committed yet._"
    lines: list[str] = []
    for sweep in found:
        lines += [f"`{sweep.name}`: {sweep.label()}; {sweep.partitions} partitions; one "
                  f"growing group per protocol, one join and one leave at each N (n = 1 per "
                  f"cell); {sweep.conditions}; `{sweep.command}`", "",
                  _herd_plot(ctx, sweep, f"kip848-{sweep.name}.svg"), "",
                  *herd_tables(sweep), "",
                  "Requests per event against N (least squares over the sizes):", "",
                  *fits_table(sweep), ""]
    return "\n".join(lines).rstrip()


def _spread_over_n(sweep: Sweep, protocol: str, event: str, key: str) -> Spread | None:
    return spread([sweep.value(protocol, event, n, key) for n in sweep.sizes()], "sizes")


def herd_claims(sweep: Sweep, kip848: str = "consumer-uniform", eager: str = "eager-range",
                legacy: str = "zk-range") -> str:
    """One sentence per claim, from one sweep, each with its range over the sizes."""
    sizes = sweep.sizes()
    lo, hi = sizes[0], sizes[-1]

    def at(p: str, e: str, n: int, key: str) -> str:
        return num(sweep.value(p, e, n, key))

    def over(p: str, e: str, key: str, digits: int = 2, suffix: str = "") -> str:
        s = _spread_over_n(sweep, p, e, key)
        return "not measured" if s is None else s.text(digits, suffix)

    slope = {p: (sweep.fits.get(f"{p}/join") or {}).get("slope") for p in (kip848, legacy)}
    return (
        f"On {sweep.label()}, {sweep.partitions} partitions, N = {lo} to {hi} (one event per "
        f"size): a `{kip848}` join left {over(kip848, 'join', 'members_idle', 0)} member(s) "
        f"idle and moved {at(kip848, 'join', lo, 'partitions_moved')} partitions at N = {lo} "
        f"and {at(kip848, 'join', hi, 'partitions_moved')} at N = {hi} (a balanced assignment "
        f"must move {balanced_share(sweep.partitions, lo)} and "
        f"{balanced_share(sweep.partitions, hi)}), where `{eager}` left "
        f"{at(eager, 'join', hi, 'members_idle')} members idle at N = {hi}; its join was "
        f"stable after {over(kip848, 'join', 'time_to_stable_s', 2, ' s')}, `{eager}`'s "
        f"after {over(eager, 'join', 'time_to_stable_s', 2, ' s')} and the legacy "
        f"`{legacy}`'s after {over(legacy, 'join', 'time_to_stable_s', 2, ' s')}; its "
        f"requests per join (ConsumerGroupHeartbeat included) grew from "
        f"{at(kip848, 'join', lo, 'coordination_requests')} to "
        f"{at(kip848, 'join', hi, 'coordination_requests')} (log-log slope "
        f"{_slope(slope[kip848])}; {sizes[-2]} → {hi}: "
        f"{_slope(sweep.local_slope(kip848, 'join'))}), the legacy group's from "
        f"{at(legacy, 'join', lo, 'coordination_requests')} to "
        f"{at(legacy, 'join', hi, 'coordination_requests')} (slope {_slope(slope[legacy])}; "
        f"{sizes[-2]} → {hi}: {_slope(sweep.local_slope(legacy, 'join'))}).")


def heartbeat_claim(sweep: Sweep, kip848: str = "consumer-uniform") -> str:
    """For a sweep of KIP-848 groups alone: what the heartbeat interval does to them."""
    sizes = sweep.sizes()

    def over(e: str, key: str, digits: int, suffix: str = "") -> str:
        s = _spread_over_n(sweep, kip848, e, key)
        return "not measured" if s is None else s.text(digits, suffix)

    return (f"At {sweep.label()} (N = {', '.join(map(str, sizes))}), a `{kip848}` join was "
            f"stable after {over('join', 'time_to_stable_s', 2, ' s')} and a leave after "
            f"{over('leave', 'time_to_stable_s', 2, ' s')}, with "
            f"{over('join', 'members_idle', 0)} member(s) idle on a join: the same movement, "
            f"paced by the heartbeat.")


def _slope(value: float | None) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.2f}"


# --- split brain ------------------------------------------------------------------------------


def split_folders(ctx: Context) -> list[Path]:
    root = ctx.results / "comparison"
    return sorted(p for p in root.glob(f"{SPLIT_PREFIX}*{KAFKA4_MARK}*")
                  if (p / RUNS_FILE).is_file())


def split_table(runs: list[dict[str, Any]], scenario: str) -> list[str]:
    """Protocols of one scenario: n, then each metric as median (min–max) over the repeats."""
    columns = SPLIT_COLUMNS[scenario]
    zombie = scenario == "zombie"
    head = ["protocol", "n", *[title for _, title in columns]] + (["refused with"] if zombie
                                                                     else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    protocols = sorted(dict.fromkeys(r["protocol"] for r in runs),
                       key=lambda p: (PROTOCOL_TABLE[p].rank is None,
                                      PROTOCOL_TABLE[p].rank or 0))
    for protocol in protocols:
        cell = [r for r in runs if r["protocol"] == protocol]
        ok = [r for r in cell if r["status"] == "ok"]
        values = [_median_range(spread([metric(r, key) for r in ok])) for key, _ in columns]
        if zombie:
            errors = sorted({e for r in ok for e in
                             ((r.get("details") or {}).get("zombie_view") or {})
                             .get("rejections", ())})
            values.append(", ".join(f"`{e}`" for e in errors) or "—")
        lines.append("| " + " | ".join([protocol, f"{len(ok)}/{len(cell)}", *values]) + " |")
    return lines


def _median_range(s: Spread | None) -> str:
    if s is None:
        return "—"
    if s.low == s.high:
        return num(s.median)
    return f"{num(s.median)} ({num(s.low)}–{num(s.high)})"


@figure("kip848-split-brain", source=f"results/comparison/{SPLIT_PREFIX}*{KAFKA4_MARK}*")
def kip848_split_brain(ctx: Context) -> str:
    folders = split_folders(ctx)
    if not folders:
        return "_No split-brain run on Apache Kafka 4 committed yet._"
    lines: list[str] = []
    for folder in folders:
        doc = json.loads((folder / RUNS_FILE).read_text())
        runs = list(doc["runs"])
        scenario = str(runs[0]["event"]) if runs else ""
        if scenario not in SPLIT_COLUMNS:
            continue
        meta = read_provenance(folder)
        hb = meta.extra.get("consumer_heartbeat_interval_ms")
        lines += [f"`{folder.name}` ({scenario}): {meta.broker}, KIP-848 heartbeat "
                  f"{hb} ms; medians (min–max) over the repeats; {meta.conditions()}; "
                  f"`{meta.command}`", "", *split_table(runs, scenario), ""]
    return "\n".join(lines).rstrip()


# --- the Spark jobs ---------------------------------------------------------------------------

SPARK_PREFIX = "spark-"
SPARK_COLUMNS = {
    "herd": ("protocol", "event", "members", "partitions", "coordination_requests",
             "rebalance_attempts", "members_paused", "time_to_stable_s", "lost"),
    "split-brain": ("protocol", "scenario", "members", "partitions", "applicable",
                    "time_to_stable_s", "unowned_partition_s", "conflicts",
                    "rebalances_given_up", "delivered_twice", "lost"),
}


def spark_rows(folder: Path) -> list[dict[str, str]]:
    import csv

    with open(folder / "sweep.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@figure("kip848-spark", source=f"results/comparison/{SPARK_PREFIX}*{KAFKA4_MARK}*")
def kip848_spark(ctx: Context) -> str:
    """The Spark jobs' real mode with KIP-848 groups on Apache Kafka 4: every row of each
    committed sweep (one seed each: n = 1 per row)."""
    root = ctx.results / "comparison"
    folders = sorted(p for p in root.glob(f"{SPARK_PREFIX}*{KAFKA4_MARK}*")
                     if (p / "sweep.csv").is_file())
    if not folders:
        return "_No Spark run on Apache Kafka 4 committed yet._"
    lines: list[str] = []
    for folder in folders:
        job = "split-brain" if "split-brain" in folder.name else "herd"
        meta = read_provenance(folder)
        hb = meta.extra.get("consumer_heartbeat_interval_ms")
        columns = SPARK_COLUMNS[job]
        lines += [f"`{folder.name}` (`spark {job} --mode real`): {meta.broker}, KIP-848 "
                  f"heartbeat {hb} ms, one seed per row; {meta.conditions()}; "
                  f"`{meta.command}`", "",
                  "| " + " | ".join(c.replace("_", " ") for c in columns) + " |",
                  "|" + "---|" * len(columns)]
        for row in spark_rows(folder):
            cells = [row.get(c, "") for c in columns]
            lines.append("| " + " | ".join(num(float(v)) if _is_number(v) else (v or "—")
                                           for v in cells) + " |")
        lines.append("")
    return "\n".join(lines).rstrip()


def _is_number(text: str) -> bool:
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return True
