"""Each section's figures with captions in words: what is plotted, how many runs back it, and
from which instant its time counts.

The report draws the compare and herd figures itself from the raw results (the per-run
``timeline.json`` and ``results.json``), at page width and one protocol per row, in place of
the lab's wide PNGs (listed as superseded so the section does not show both); any other image
the lab left is inlined with the caption known for its name.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zkconsumer.report import plots
from zkconsumer.report.findings import cells, runs_phrase
from zkconsumer.report.zombie_plot import zombie_lanes

# The instant a run's clock starts (the lab's ``event_ts``), per event.
EVENT_INSTANT = {
    "join": "the instant the runner started the new member",
    "leave": "the instant the runner asked the leaving member to shut down",
    "crash": "the instant the runner SIGKILLed the victim's process",
    "rolling-bounce": "the instant the runner shut the first member down",
    "zombie": "the instant the zombie's ZooKeeper connection was paused",
}
OTHER_METRICS = (("members_paused", "members paused (stopped a partition)"),
                 ("partition_seconds_unavailable", "partition-seconds nobody fetched"),
                 ("coordination_requests", "coordination requests"),
                 ("rebalance_attempts", "rebalance attempts"),
                 ("group_rebalances", "group rebalances"),
                 ("members_idle", "members idle at some instant"),
                 ("watch_notifications", "watch notifications"),
                 ("conflicts", "owner conflicts"), ("rollbacks", "rollbacks"),
                 ("duplicates", "duplicate deliveries"), ("lost", "lost records"),
                 ("double_owned_intervals", "double-owned intervals"),
                 ("failed_rebalances", "failed rebalances"),
                 ("conflicting_decisions", "conflicting decisions"))
# Captions of the images the lab writes, by file name (prefix match for per-event files).
LAB_IMAGES = {
    "zombie-timeline.png": "The zombie's partitions, one lane each: the paused member's fetching "
                           "(red, upper bar) against the members that took them over (lower "
                           "bars); dots are deliveries, so dots in both rows of a lane are "
                           "messages delivered twice. Time counts from the instant the zombie's "
                           "ZooKeeper connection was paused (t = 0); dashed lines mark when "
                           "another member took its partitions and when the pause ended. One "
                           "run per protocol, drawn by the lab.",
    "requests_vs_n.png": "Coordination requests per membership event against group size N, "
                         "from the Spark sweep (one point per size and mode).",
    "time_to_stable_vs_n.png": "Seconds from the membership event to a stable group against "
                               "group size N, from the Spark sweep.",
    "conflicts_vs_n.png": "Owner-znode conflicts per event against group size N, from the sweep.",
    "double_owned_vs_n.png": "Double-owned partition-seconds of the zombie scenario against "
                             "group size N, from the sweep.",
    "give_up_vs_n.png": "Share of storm runs where some member gave up rebalancing, against N.",
    "unowned_vs_n.png": "Partition-seconds with no owner in the storm scenario, against N.",
}
SUPERSEDED_COMPARE = ("metrics.png",)
SUPERSEDED_HERD = ("herd-requests.png", "herd-time-to-stable.png")


@dataclass(frozen=True)
class Figure:
    caption: str
    inner: str  # inline SVG or an <img> with a data: URL


def instants(events: Sequence[str]) -> str:
    return "; ".join(f"{e}: {EVENT_INSTANT.get(e, 'the event as the lab timed it')}"
                     for e in events)


def run_folder(folder: Path, run: Mapping[str, Any]) -> Path | None:
    """The run's records folder (``records_dir`` may name another machine's path: the
    folder's own ``runs/<name>`` is tried too)."""
    records = run.get("records_dir")
    if not records:
        return None
    for candidate in (Path(records), folder / "runs" / Path(records).name):
        if (candidate / "timeline.json").is_file():
            return candidate
    return None


def timeline_of(folder: Path, run: Mapping[str, Any]) -> dict[str, Any] | None:
    """The run's ``timeline.json``: fetching and assignment intervals, relative to the event."""
    where = run_folder(folder, run)
    return dict(json.loads((where / "timeline.json").read_text())) if where else None


def compare_figures(folder: Path, doc: Mapping[str, Any]) -> tuple[list[Figure], set[str]]:
    runs = list(doc.get("runs") or [])
    found: list[Figure] = []
    drawn = set(SUPERSEDED_COMPARE)
    stable = plots.time_to_stable(runs)
    by_cell = cells(runs)
    events = list(dict.fromkeys(e for e, _ in by_cell))
    if stable is not None:
        svg, n = stable
        found.append(Figure(
            f"Seconds from the event until the group was stable (every partition fetched by "
            f"exactly one member, every member fetching, and so to the end of the window), per "
            f"protocol and event; each bar is {runs_phrase(n)}. Time counts from "
            f"{instants(events)}.", svg))
    for event in events:
        chosen = []
        for (e, protocol), rs in by_cell.items():
            timeline = timeline_of(folder, rs[0]) if e == event else None
            if timeline is not None:
                chosen.append((protocol, rs[0], timeline))
        svg = plots.gantt(event, chosen)
        if svg is not None:
            drawn.add(f"gantt-{event}.png")
            found.append(Figure(
                f"Who fetched each partition around the {event}, one row per protocol (the "
                f"first measured run of each, one run): filled bars are fetching, outlines "
                f"assignment, a colour per member. Time counts from "
                f"{EVENT_INSTANT.get(event, 'the event')} (dashed line, t = 0); the dotted "
                f"line marks when the group was stable.", svg))
    metrics = plots.metric_panels(runs, OTHER_METRICS)
    if metrics is not None:
        svg, zero, absent = metrics
        n = min((len(rs) for rs in by_cell.values()), default=0)
        notes = [f"Each bar is {runs_phrase(n)} per protocol and event; a protocol without "
                 f"the metric shows n/a (broker groups set no ZooKeeper watches and make no "
                 f"owner-znode decisions), never 0."]
        if zero:
            notes.append(f"0 for every protocol, not drawn: {', '.join(zero)}.")
        if absent:
            notes.append(f"Not measured here: {', '.join(absent)}.")
        found.append(Figure("Other metrics of the same runs, one panel per metric and one "
                            "row per protocol. " + " ".join(notes), svg))
    return found, drawn


def herd_figures(doc: Mapping[str, Any]) -> tuple[list[Figure], set[str]]:
    runs = [r for r in doc.get("runs") or [] if r.get("status", "ok") == "ok"]
    per_size: dict[tuple[str, str, int], int] = {}
    for r in runs:
        key = (str(r["protocol"]), str(r["event"]), int(r["members"]))
        per_size[key] = per_size.get(key, 0) + 1
    n = min(per_size.values(), default=0)
    events = list(dict.fromkeys(str(r["event"]) for r in runs))
    found = []
    svg = plots.herd_panels(doc.get("fits") or {}, runs)
    if svg is not None:
        found.append(Figure(
            f"Left: coordination requests of one membership event against the group size N "
            f"before it, log-log, {runs_phrase(n)} per size; the legend gives the least-squares "
            f"slope (1: the group's work grows with N; 2: every member's work grows with N, the "
            f"herd). Right: seconds until the group was stable again, {runs_phrase(n)} per size; "
            f"time counts from {instants(events)}.", svg))
    return found, set(SUPERSEDED_HERD)


def zombie_figures(folder: Path, doc: Mapping[str, Any]) -> tuple[list[Figure], set[str]]:
    panels = []
    for (event, _protocol), rs in cells(doc.get("runs") or []).items():
        where = run_folder(folder, rs[0]) if event == "zombie" else None
        if where is not None:
            timeline = dict(json.loads((where / "timeline.json").read_text()))
            panels.append((rs[0], timeline, where))
    svg = zombie_lanes(panels)
    if svg is None:
        return [], set()
    return [Figure(
        "The zombie's partitions, one lane each, one row per protocol (its first measured run, "
        "one run): the paused member's fetching (red, upper bar) against the members that took "
        "the partitions over (lower bars); dots are deliveries, so dots in both rows of a lane "
        "are messages delivered twice. Time counts from the instant the zombie's ZooKeeper "
        "connection was paused (t = 0); dashed lines mark when another member took its "
        "partitions and when the pause ended.", svg)], {"zombie-timeline.png"}


def lab_image(path: Path) -> Figure:
    caption = LAB_IMAGES.get(path.name)
    if caption is None and path.name.startswith("gantt-"):
        event = path.stem[len("gantt-"):]
        caption = (f"Who fetched each partition around the {event}, as the lab drew it; time "
                   f"counts from {EVENT_INSTANT.get(event, 'the event')}.")
    if caption is None:
        caption = (f"{path.name}: a plot the experiment drew; its data are in this section's "
                   f"tables.")
    if path.suffix == ".svg":
        text = path.read_text()
        return Figure(caption, plots.inline_svg(text) if "<svg" in text else "")
    data = base64.b64encode(path.read_bytes()).decode()
    return Figure(caption, f'<img alt="{html.escape(path.stem)}" '
                           f'src="data:image/png;base64,{data}">')
