"""The zombie timeline: the paused member and its successor fetching the same partitions.

One panel per protocol (its first measured zombie run), one lane per partition the zombie owned
before the pause. In each lane the upper bar is the zombie fetching, the lower bars are the
others; dots are deliveries (each message a dot, so a stretch where both rows have dots is a
stretch of messages delivered twice). Time 0 is the pause; dashed lines mark when another member
took over and when the pause ended. matplotlib's Agg backend: files, no display.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zkconsumer.lab.records import RecordTail
from zkconsumer.lab.runs import RunResult, RunStatus
from zkconsumer.lab.timelines import run_intervals
from zkconsumer.results.plotting import pyplot, save_png

log = logging.getLogger(__name__)

LEAD_S = 2.0
ZOMBIE_COLOUR = "#d62728"


def zombie_timeline(results: Sequence[RunResult], path: Path) -> Path | None:
    chosen: dict[str, tuple[RunResult, dict[str, Any]]] = {}
    for r in results:
        if r.event != "zombie" or r.status != RunStatus.OK.value or r.protocol in chosen:
            continue
        data = run_intervals(r)
        if data is not None and r.records_dir:
            chosen[r.protocol] = (r, data)
    if not chosen:
        return None
    plt = pyplot()
    lanes_max = max(len(r.details.get("zombie_partitions") or [0]) for r, _ in chosen.values())
    fig, axes = plt.subplots(len(chosen), 1, figsize=(10, 1.6 + 1.1 * lanes_max * len(chosen)),
                             squeeze=False)
    others_cmap = plt.get_cmap("tab10")
    for ax, (r, data) in zip(axes[:, 0], chosen.values(), strict=False):
        _panel(ax, r, data, others_cmap)
    return save_png(fig, path, title="Zombie: the paused member (red, upper bar) keeps fetching "
                    "while others (lower bars) take its partitions; dots are deliveries",
                    rect=(0, 0, 1, 0.96))


def _panel(ax: Any, r: RunResult, data: dict[str, Any], cmap: Any) -> None:
    zombie = r.details.get("zombie")
    parts = list(r.details.get("zombie_partitions") or [])
    lane = {p: i for i, p in enumerate(parts)}
    event = float(r.details.get("event_ts", 0.0))
    others = sorted({iv["member"] for iv in data["fetching"]} - {zombie})
    colour = {m: cmap(i % 10) for i, m in enumerate(others)}
    colour[zombie] = ZOMBIE_COLOUR
    for iv in data["fetching"]:
        if iv["partition"] not in lane:
            continue
        y = lane[iv["partition"]] + (-0.2 if iv["member"] == zombie else 0.2)
        ax.broken_barh([(iv["start"], iv["end"] - iv["start"])], (y - 0.15, 0.3),
                       facecolors=colour.get(iv["member"], "grey"), alpha=0.55)
    tail = RecordTail(r.records_dir or ".")
    tail.poll()
    xs: dict[str, list[float]] = {}
    ys: dict[str, list[float]] = {}
    for d in tail.records.deliveries:
        if d.partition not in lane:
            continue
        y = lane[d.partition] + (-0.2 if d.member == zombie else 0.2)
        xs.setdefault(d.member, []).append(d.ts - event)
        ys.setdefault(d.member, []).append(y)
    for m in xs:
        ax.scatter(xs[m], ys[m], s=6, color=colour.get(m, "grey"),
                   label=f"{m}{' (zombie)' if m == zombie else ''}")
    ax.axvline(0.0, color="black", linestyle="-", linewidth=1)
    ax.text(0.0, 0.01, " pause", fontsize=7, va="bottom", transform=ax.get_xaxis_transform())
    for key, label in (("takeover_s", "taken over"),):
        if r.details.get(key) is not None:
            ax.axvline(r.details[key], color="grey", linestyle="--", linewidth=1)
            ax.text(r.details[key], 0.01, f" {label}", fontsize=7, va="bottom",
                    transform=ax.get_xaxis_transform())
    if r.details.get("pause_s") is not None:
        ax.axvline(r.details["pause_s"], color="black", linestyle="--", linewidth=1)
        ax.text(r.details["pause_s"], 0.01, " resumed", fontsize=7, va="bottom",
                transform=ax.get_xaxis_transform())
    end = data["end_s"]
    ax.set_xlim(-LEAD_S, end + 0.5)
    ax.set_ylim(-0.7, len(parts) - 0.3)
    ax.invert_yaxis()
    ax.set_yticks(range(len(parts)))
    ax.set_yticklabels([f"p{p}" for p in parts], fontsize=8)
    ax.set_xlabel("seconds since the pause")
    broker = r.details.get("broker", "")
    ax.set_title(f"{r.protocol}: {r.metrics.get('delivered_by_two')} message(s) delivered by "
                 f"two members, double-owned {r.metrics.get('double_owned_s')} partition-s "
                 f"({broker})", fontsize=8)
    ax.legend(loc="upper right", fontsize=7, markerscale=2, frameon=False)
