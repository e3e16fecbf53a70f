"""PNG plots: ownership Gantt charts (protocols side by side, one event) and metric bar charts.

matplotlib with the Agg backend: no display on these machines, and the figures go to files.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zkconsumer.lab.compare.report import medians
from zkconsumer.lab.runs import METRIC_NAMES, RunResult, RunStatus
from zkconsumer.lab.timelines import run_intervals
from zkconsumer.results.plotting import pyplot, save_png

log = logging.getLogger(__name__)

LEAD_S = 3.0     # seconds shown before the event


def gantt(results: Sequence[RunResult], event: str, path: Path) -> Path | None:
    """Per-partition fetching intervals of the first measured run of each protocol for
    ``event``; one panel per protocol, same time axis, time 0 = the event."""
    chosen: dict[str, tuple[RunResult, dict[str, Any]]] = {}
    for r in results:
        if r.event != event or r.status != RunStatus.OK.value or r.protocol in chosen:
            continue
        data = run_intervals(r)
        if data is not None:
            chosen[r.protocol] = (r, data)
    if not chosen:
        return None
    plt = pyplot()
    t_max = max(d["end_s"] for _, d in chosen.values())
    partitions = max(r.partitions for r, _ in chosen.values())
    members = sorted({iv["member"] for _, d in chosen.values() for iv in d["fetching"]})
    cmap = plt.get_cmap("tab20")
    colour = {m: cmap(i % 20) for i, m in enumerate(members)}
    fig, axes = plt.subplots(1, len(chosen), figsize=(5.5 * len(chosen), 1.2 + 0.28 * partitions),
                             sharey=True, squeeze=False)
    for ax, (protocol, (r, data)) in zip(axes[0], chosen.items(), strict=False):
        for iv in data["assigned"]:
            ax.broken_barh([(iv["start"], iv["end"] - iv["start"])], (iv["partition"] - 0.42, 0.84),
                           facecolors="none", edgecolors=colour.get(iv["member"], "grey"),
                           linewidth=0.6)
        for iv in data["fetching"]:
            ax.broken_barh([(iv["start"], iv["end"] - iv["start"])], (iv["partition"] - 0.35, 0.7),
                           facecolors=colour.get(iv["member"], "grey"))
        ax.axvline(0.0, color="black", linestyle="--", linewidth=1)
        if data["stable_s"] is not None:
            ax.axvline(data["stable_s"], color="green", linestyle=":", linewidth=1.2)
        ax.set_xlim(-LEAD_S, t_max + 0.5)
        ax.set_ylim(-0.6, partitions - 0.4)
        ax.invert_yaxis()
        stable = data["stable_s"]
        ax.set_title(f"{protocol}: {event}\nstable after "
                     f"{'—' if stable is None else f'{stable:.1f} s'}, "
                     f"{r.metrics.get('members_paused')} member(s) paused", fontsize=9)
        ax.set_xlabel("seconds since the event")
    axes[0][0].set_ylabel("partition")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour[m]) for m in members]
    fig.legend(handles, members, loc="lower center", ncol=min(len(members), 12), fontsize=7,
               frameon=False)
    return save_png(fig, path, title="Who fetches each partition (filled), who is assigned it "
                    "(outline); dashed: event, dotted: stable", rect=(0, 0.07, 1, 0.95))


def metric_bars(results: Sequence[RunResult], path: Path) -> Path | None:
    """One panel per metric: medians per event, one bar per protocol."""
    cells = medians(results)
    if not any(c["_n"] for c in cells.values()):
        return None
    plt = pyplot()
    protocols = list(dict.fromkeys(r.protocol for r in results))
    events = list(dict.fromkeys(r.event for r in results))
    cols = 6
    rows = (len(METRIC_NAMES) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.0 * cols, 3.2 * rows), squeeze=False)
    width = 0.8 / max(len(protocols), 1)
    cmap = plt.get_cmap("tab10")
    for k, metric in enumerate(METRIC_NAMES):
        ax = axes[k // cols][k % cols]
        for j, protocol in enumerate(protocols):
            xs, ys = [], []
            for i, event in enumerate(events):
                cell = cells.get((protocol, event))
                value = cell.get(metric) if cell else None
                if value is None:  # a metric the protocol does not have: no bar, not a 0
                    continue
                xs.append(i + (j - (len(protocols) - 1) / 2) * width)
                ys.append(float(value))
            ax.bar(xs, ys, width=width, color=cmap(j % 10), label=protocol)
        ax.set_xticks(range(len(events)))
        ax.set_xticklabels(events, fontsize=8)
        ax.set_title(metric, fontsize=9)
        ax.tick_params(axis="y", labelsize=8)
    for k in range(len(METRIC_NAMES), rows * cols):
        axes[k // cols][k % cols].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(protocols), fontsize=8,
               frameon=False)
    repeats = max((c["_n"] for c in cells.values()), default=0)
    basis = "Medians over repeats" if repeats > 1 else "One run"
    return save_png(fig, path, title=f"{basis} per membership event (no bar: the protocol has "
                    "no such metric or no run measured it; see summary.md)",
                    rect=(0, 0.06, 1, 0.95), dpi=100, title_size=10)


def write_plots(results: Sequence[RunResult], out_dir: Path) -> list[Path]:
    written = []
    for event in dict.fromkeys(r.event for r in results):
        p = gantt(results, event, out_dir / f"gantt-{event}.png")
        if p is not None:
            written.append(p)
    p = metric_bars(results, out_dir / "metrics.png")
    if p is not None:
        written.append(p)
    return written
