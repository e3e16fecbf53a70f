"""docs/findings.md, (e): what replaced the classic protocol, KIP-848 on Apache Kafka 4.0.

Read from the committed Apache Kafka 4 chunks (``results/comparison/compare-apache-kafka-4*``),
one per KIP-848 heartbeat interval; every figure says which heartbeat it was measured at,
because under KIP-848 a change reaches a member only in its next heartbeat answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zkconsumer.results.comparison_data import load_runs
from zkconsumer.results.figures.comparison import folders, select
from zkconsumer.results.figures.comparison_kafka4 import KAFKA4_PREFIX, kafka4_value
from zkconsumer.results.figures.findings import REAL_STYLE
from zkconsumer.results.figures.findings_text import Spread, spread
from zkconsumer.results.figures.kip848_scale import (
    HERD_PREFIX,
    KAFKA4_MARK,
    heartbeat_claim,
    herd_claims,
    metric,
    split_folders,
    sweeps,
)
from zkconsumer.results.plotting import pyplot, save_svg
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure
from zkconsumer.scenarios.protocols import PROTOCOL_TABLE

KIP848 = "consumer-uniform"
STATIC_KIP848 = "static-consumer-uniform"
EAGER = "eager-range"
LEGACY = "zk-range"
BROKER_LABEL = "Apache Kafka 4.0.2"


@dataclass(frozen=True)
class Chunk:
    """The runs of one committed Apache Kafka 4 folder and the heartbeat its broker used."""

    name: str
    heartbeat_ms: int
    runs: list[dict[str, Any]]

    def cell(self, protocol: str, event: str, key: str) -> Spread | None:
        return spread([kafka4_value(r, key) for r in select(self.runs, protocol, event)
                       if r["status"] == "ok"])


def chunks(ctx: Context) -> list[Chunk]:
    """The Apache Kafka 4 chunks, shortest heartbeat first."""
    out = []
    for folder in folders(ctx, KAFKA4_PREFIX):
        hb = read_provenance(folder).extra.get("consumer_heartbeat_interval_ms")
        if hb is not None:
            out.append(Chunk(folder.name, int(hb), load_runs(folder)))
    return sorted(out, key=lambda c: c.heartbeat_ms)


def _text(s: Spread | None, digits: int = 0, suffix: str = "") -> str:
    return "not measured" if s is None else s.text(digits, suffix)


def today_claim(found: list[Chunk]) -> str:
    fast, default = found[0], found[-1]
    parts = [
        f"On {BROKER_LABEL} (N = 4, 8 partitions) a join under KIP-848 (`{KIP848}`, "
        f"{fast.heartbeat_ms} ms heartbeats) stopped "
        f"{_text(fast.cell(KIP848, 'join', 'partitions_revoked'))} partition(s) at "
        f"{_text(fast.cell(KIP848, 'join', 'members_paused'))} member(s) and left "
        f"{_text(fast.cell(KIP848, 'join', 'members_idle'))} member(s) with nothing to fetch, "
        f"where the eager protocol stopped "
        f"{_text(fast.cell(EAGER, 'join', 'partitions_revoked'))} partitions at "
        f"{_text(fast.cell(EAGER, 'join', 'members_paused'))} members and the legacy group "
        f"{_text(fast.cell(LEGACY, 'join', 'partitions_revoked'))}",
    ]
    if default is not fast:
        parts.append(
            f"; the price is the heartbeat: the same join became stable after "
            f"{_text(fast.cell(KIP848, 'join', 'time_to_stable_s'), 2, ' s')} at "
            f"{fast.heartbeat_ms} ms heartbeats and "
            f"{_text(default.cell(KIP848, 'join', 'time_to_stable_s'), 2, ' s')} at the "
            f"broker's default of {default.heartbeat_ms} ms, against "
            f"{_text(default.cell(EAGER, 'join', 'time_to_stable_s'), 2, ' s')} for eager")
    static = default.cell(STATIC_KIP848, "rolling-bounce", "time_to_stable_s")
    if static is not None:
        parts.append(
            f"; static KIP-848 members made a rolling bounce cost "
            f"{static.text(2, ' s')} with "
            f"{_text(default.cell(STATIC_KIP848, 'rolling-bounce', 'partitions_revoked'))} "
            f"partitions revoked, against "
            f"{_text(default.cell(KIP848, 'rolling-bounce', 'time_to_stable_s'), 2, ' s')} for "
            f"dynamic ones ({default.heartbeat_ms} ms heartbeats)")
    lost = sum(int(r["metrics"].get("lost") or 0) for c in found for r in c.runs
               if r["status"] == "ok")
    runs = sum(r["status"] == "ok" for c in found for r in c.runs)
    return "".join(parts) + f". Records lost over all {runs} runs on this broker: {lost}."


def _today_plot(ctx: Context, found: list[Chunk], svg: str) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    series = [(c, p) for c in found for p in (LEGACY, EAGER, KIP848)
              if c.cell(p, "join", "time_to_stable_s") is not None]
    for i, (chunk, protocol) in enumerate(series):
        for ax, key in zip(axes, ("partitions_revoked", "time_to_stable_s"), strict=True):
            s = chunk.cell(protocol, "join", key)
            if s is None:
                continue
            ax.errorbar([i], [s.median], yerr=[[s.median - s.low], [s.high - s.median]],
                        color=PROTOCOL_TABLE[protocol].colour, capsize=3, **REAL_STYLE)
    labels = [f"{p}\n{c.heartbeat_ms} ms hb" for c, p in series]
    for ax, title in zip(axes, ("partitions stopped by a join", "time to stable after a join (s)"),
                         strict=True):
        ax.set_xticks(range(len(series)), labels, fontsize=7)
        ax.set_title(f"{title}: {BROKER_LABEL}, real runs (median, min–max)", fontsize=8)
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_xlim(-0.5, len(series) - 0.5)
        ax.set_ylim(bottom=0)
    fig.tight_layout()
    save_svg(fig, ctx.figures / svg)
    return (f"![KIP-848 on {BROKER_LABEL}: partitions stopped and time to stable per join]"
            f"({ctx.plot_link(svg)})")


@figure("findings-today", source=f"results/comparison/{KAFKA4_PREFIX}*")
def today(ctx: Context) -> str:
    found = chunks(ctx)
    if not found:
        return "_No Apache Kafka 4 runs committed yet._"
    lines = [f"**Finding.** {today_claim(found)}", "",
             _today_plot(ctx, found, "findings-today.svg"), "",
             "| heartbeat | protocol | join: partitions stopped | join: members paused | "
             "join: members idle | join: stable s | rolling bounce: stable s |",
             "|---|---|---|---|---|---|---|"]
    for chunk in found:
        for protocol in (LEGACY, EAGER, KIP848, STATIC_KIP848):
            if not select(chunk.runs, protocol, "join"):
                continue

            def c(event: str, key: str, digits: int = 0, ch: Chunk = chunk,
                  p: str = protocol) -> str:
                s = ch.cell(p, event, key)
                return "—" if s is None else s.cell(digits)
            lines.append(f"| {chunk.heartbeat_ms} ms | {protocol} | "
                         f"{c('join', 'partitions_revoked')} | {c('join', 'members_paused')} | "
                         f"{c('join', 'members_idle')} | {c('join', 'time_to_stable_s', 2)} | "
                         f"{c('rolling-bounce', 'time_to_stable_s', 2)} |")
    lines += ["", f"Every cell: {BROKER_LABEL} (KRaft, one node) beside an embedded ZooKeeper for "
              "the ZooKeeper-coordinated rows, N = 4, 8 partitions, 6 s sessions; the heartbeat "
              "is the broker's KIP-848 `group.consumer.heartbeat.interval.ms` (the classic "
              "protocols' heartbeats are the clients' own). Raw data: "
              + ", ".join(f"`results/comparison/{c.name}`" for c in found) + "."]
    return "\n".join(lines)


@figure("findings-today-scale",
        source=f"results/comparison/{HERD_PREFIX}*, results/comparison/split-zombie{KAFKA4_MARK}*")
def today_at_scale(ctx: Context) -> str:
    """KIP-848's own claims as the group grows (the herd sweeps on Apache Kafka 4) and what its
    member epochs did to a zombie's commits (the zombie runs on it)."""
    found = sweeps(ctx)
    if not found:
        return "_No herd sweep on Apache Kafka 4 committed yet._"
    lines = [f"**At scale.** {herd_claims(sweep)}" if LEGACY in sweep.protocols()
             else f"**Heartbeat.** {heartbeat_claim(sweep, KIP848)}" for sweep in found]
    zombie = [f for f in split_folders(ctx) if f.name.startswith("split-zombie")]
    if zombie:
        runs = [r for f in zombie for r in load_runs(f)
                if r["protocol"] == KIP848 and r["status"] == "ok"]
        refused = spread([metric(r, "late_commits_rejected") for r in runs])
        taken = sum(int(metric(r, "late_commits_accepted") or 0) for r in runs)
        back = sum(int(metric(r, "offset_regressions") or 0) for r in runs)
        overlap = spread([metric(r, "zombie_overlap_deliveries") for r in runs])
        errors = sorted({e for r in runs for e in
                         ((r.get("details") or {}).get("zombie_view") or {}).get("rejections",
                                                                                ())})
        if runs:
            lines.append(
                f"**Zombie.** A `{KIP848}` member cut from the broker past its session "
                f"({BROKER_LABEL}, {len(runs)} runs): the coordinator refused "
                f"{_text(refused)} of its late commits per run, with "
                f"{', '.join(f'`{e}`' for e in errors) or 'no error'}, took {taken} and no "
                f"committed offset went back ({back}); yet it delivered {_text(overlap)} "
                f"message(s) while another member owned its partitions: fencing guards the "
                f"offsets, not the processing.")
    return "\n\n".join(lines)
