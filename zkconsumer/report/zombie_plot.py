"""The zombie figure at page width: one lane per partition the zombie owned, its fetching
against the members that took the partitions over, each delivery a dot.

Drawn from the run's ``timeline.json`` and its members' records (the same data as the lab's
``zombie-timeline.png``, which is drawn for a file and names the broker's address), with time
counted from the instant the zombie's ZooKeeper connection was paused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from zkconsumer.lab.records import RecordTail
from zkconsumer.report.plots import MIN_FONT_PT, TITLE_PT, WIDTH_IN, style_axes, svg_text
from zkconsumer.results.plotting import pyplot

ZOMBIE_COLOUR = "#d62728"
LEAD_S = 2.0


def deliveries(records_dir: Path, event_ts: float, partitions: Sequence[int]
               ) -> dict[str, list[tuple[float, int]]]:
    """(seconds since the pause, partition) of every delivery on ``partitions``, per member."""
    tail = RecordTail(records_dir)
    tail.poll()
    out: dict[str, list[tuple[float, int]]] = {}
    for d in tail.records.deliveries:
        if d.partition in partitions:
            out.setdefault(d.member, []).append((d.ts - event_ts, d.partition))
    return out


def zombie_lanes(panels: Sequence[tuple[Mapping[str, Any], Mapping[str, Any], Path | None]]
                 ) -> str | None:
    """``panels``: (run, timeline.json, its records folder) per protocol; one row each."""
    if not panels:
        return None
    plt = pyplot()
    lanes = max(len((r.get("details") or {}).get("zombie_partitions") or [0])
                for r, _, _ in panels)
    row_in = 1.0 + 0.8 * lanes
    fig, axes = plt.subplots(len(panels), 1, figsize=(WIDTH_IN, 0.8 + row_in * len(panels)),
                             squeeze=False)
    cmap = plt.get_cmap("tab10")
    for ax, (run, timeline, records) in zip(axes[:, 0], panels, strict=True):
        details = run.get("details") or {}
        zombie = details.get("zombie")
        parts = list(details.get("zombie_partitions") or [])
        lane = {p: i for i, p in enumerate(parts)}
        others = sorted({iv["member"] for iv in timeline["fetching"]} - {zombie})
        colour = {m: cmap(i % 10) for i, m in enumerate(others)}
        colour[zombie] = ZOMBIE_COLOUR

        def y_of(member: str, partition: int, lane: dict[int, int] = lane,
                 zombie: Any = zombie) -> float:
            return lane[partition] + (-0.2 if member == zombie else 0.2)

        for iv in timeline["fetching"]:
            if iv["partition"] in lane:
                ax.broken_barh([(iv["start"], iv["end"] - iv["start"])],
                               (y_of(iv["member"], iv["partition"]) - 0.15, 0.3),
                               facecolors=colour.get(iv["member"], "grey"), alpha=0.55)
        seen = (deliveries(records, float(details.get("event_ts", 0.0)), parts)
                if records is not None else {})
        for member, points in sorted(seen.items()):
            ax.scatter([t for t, _ in points], [y_of(member, p) for _, p in points], s=8,
                       color=colour.get(member, "grey"),
                       label=f"{member} (zombie)" if member == zombie else member)
        marks = [(0.0, "paused", "-"), (details.get("takeover_s"), "taken over", "--"),
                 (details.get("pause_s"), "resumed", "--")]
        for x, label, style in marks:
            if x is not None:
                ax.axvline(float(x), color="black", linestyle=style, linewidth=1)
                ax.text(float(x), 1.0, f" {label}", fontsize=MIN_FONT_PT, va="bottom",
                        transform=ax.get_xaxis_transform())
        ax.set_xlim(-LEAD_S, float(timeline["end_s"]) + 0.5)
        ax.set_ylim(-0.7, len(parts) - 0.3)
        ax.invert_yaxis()
        ax.set_yticks(range(len(parts)), [f"partition {p}" for p in parts])
        ax.set_title(f"{run['protocol']}: zombie {zombie}", fontsize=TITLE_PT, loc="left",
                     pad=18)
        ax.set_xlabel("seconds since the zombie's ZooKeeper connection was paused")
        if seen:
            ax.legend(loc="upper right", fontsize=MIN_FONT_PT, markerscale=2, frameon=False)
        style_axes(ax)
    fig.tight_layout()
    return svg_text(fig)
