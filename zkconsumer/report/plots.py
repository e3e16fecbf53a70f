"""The report's own plots, drawn from raw results and returned as SVG text to inline.

Every figure is drawn for the page's width (``WIDTH_IN``, shown at about 1,000 px), with no
text under ``MIN_FONT_PT``, so that at 1,100 px no label is smaller than 10 px. A value a
protocol does not have (a broker group sets no watch) is left out, never drawn as 0, and a
bar built from one run says "one run", never "median".
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

from zkconsumer.report.findings import cells, runs_phrase
from zkconsumer.results.plotting import pyplot
from zkconsumer.tables import median

WIDTH_IN = 11.0
MIN_FONT_PT = 10
TITLE_PT = 11


def svg_text(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    pyplot().close(fig)
    return inline_svg(buf.getvalue())


def inline_svg(text: str) -> str:
    """SVG ready to inline: no XML prolog or doctype, no RDF metadata block."""
    text = text[text.index("<svg"):]
    start, end = text.find("<metadata>"), text.find("</metadata>")
    if 0 <= start < end:
        text = text[:start] + text[end + len("</metadata>"):]
    return text


def style_axes(ax: Any) -> None:
    ax.tick_params(labelsize=MIN_FONT_PT)
    ax.xaxis.label.set_size(MIN_FONT_PT)
    ax.yaxis.label.set_size(MIN_FONT_PT)


def time_to_stable(runs: Sequence[Mapping[str, Any]]) -> tuple[str, int] | None:
    """Grouped bars: seconds to stable per protocol, one group per event; with the number of
    runs per bar (the smallest), so the caption can say "one run" or "median of n"."""
    by_cell = cells(runs)
    values = {k: [float(r["metrics"]["time_to_stable_s"]) for r in rs
                  if isinstance((r.get("metrics") or {}).get("time_to_stable_s"), (int, float))]
              for k, rs in by_cell.items()}
    values = {k: v for k, v in values.items() if v}
    if not values:
        return None
    events = list(dict.fromkeys(e for e, _ in values))
    protocols = list(dict.fromkeys(p for _, p in values))
    n = min(len(v) for v in values.values())
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 4.2))
    width = 0.8 / len(protocols)
    for j, proto in enumerate(protocols):
        xs, ys = [], []
        for i, event in enumerate(events):
            if (event, proto) in values:
                xs.append(i + j * width)
                ys.append(median(values[(event, proto)]))
        bars = ax.bar(xs, ys, width, label=proto)
        ax.bar_label(bars, fmt="%.2f", fontsize=MIN_FONT_PT)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(events))], events)
    ax.set_ylabel(f"seconds from the event to stable ({runs_phrase(n)})")
    ax.legend(fontsize=MIN_FONT_PT)
    style_axes(ax)
    fig.tight_layout()
    return svg_text(fig), n


def gantt(event: str, timelines: Sequence[tuple[str, Mapping[str, Any], Mapping[str, Any]]],
          lead_s: float = 3.0) -> str | None:
    """Who fetches each partition, one row per protocol (same time axis, 0 = the event).

    ``timelines``: (protocol, run, timeline.json) for the runs to draw.
    """
    if not timelines:
        return None
    plt = pyplot()
    partitions = max(int(run.get("partitions") or 1) for _, run, _ in timelines)
    t_max = max(float(t["end_s"]) for _, _, t in timelines)
    members = sorted({iv["member"] for _, _, t in timelines for iv in t["fetching"]})
    cmap = plt.get_cmap("tab10")
    colour = {m: cmap(i % 10) for i, m in enumerate(members)}
    row_in = 0.75 + 0.24 * partitions
    fig, axes = plt.subplots(len(timelines), 1, figsize=(WIDTH_IN, 0.9 + row_in * len(timelines)),
                             sharex=True, squeeze=False)
    for ax, (protocol, run, tl) in zip(axes[:, 0], timelines, strict=True):
        for iv in tl["assigned"]:
            ax.broken_barh([(iv["start"], iv["end"] - iv["start"])],
                           (iv["partition"] - 0.42, 0.84), facecolors="none",
                           edgecolors=colour.get(iv["member"], "grey"), linewidth=0.7)
        for iv in tl["fetching"]:
            ax.broken_barh([(iv["start"], iv["end"] - iv["start"])],
                           (iv["partition"] - 0.32, 0.64),
                           facecolors=colour.get(iv["member"], "grey"))
        ax.axvline(0.0, color="black", linestyle="--", linewidth=1)
        stable = tl.get("stable_s")
        if stable is not None:
            ax.axvline(float(stable), color="green", linestyle=":", linewidth=1.5)
        ax.set_xlim(-lead_s, t_max + 0.5)
        ax.set_ylim(-0.6, partitions - 0.4)
        ax.invert_yaxis()
        ax.set_yticks(range(partitions))
        paused = (run.get("metrics") or {}).get("members_paused")
        ax.set_title(f"{protocol}: stable {'never' if stable is None else f'{stable:.2f} s'} "
                     f"after the {event}, {paused} member(s) paused", fontsize=TITLE_PT,
                     loc="left")
        ax.set_ylabel("partition")
        style_axes(ax)
    axes[-1][0].set_xlabel(f"seconds since the {event} (dashed: the event; dotted: stable)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour[m]) for m in members]
    total_in = 0.9 + row_in * len(timelines)
    fig.legend(handles, [f"member {m}" for m in members], loc="upper center",
               bbox_to_anchor=(0.5, 1.0), ncol=min(len(members), 8), fontsize=MIN_FONT_PT,
               frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.45 / total_in))
    return svg_text(fig)


def metric_panels(runs: Sequence[Mapping[str, Any]], metrics: Sequence[tuple[str, str]]
                  ) -> tuple[str, list[str], list[str]] | None:
    """One panel per metric, one row per protocol, one bar per event; a protocol without the
    metric has no bar ("n/a"). Metrics nobody has are dropped, and so are metrics that are 0
    for everybody (returned, with the dropped ones, for the caption)."""
    by_cell = cells(runs)
    events = list(dict.fromkeys(e for e, _ in by_cell))
    protocols = list(dict.fromkeys(p for _, p in by_cell))
    shown, zero, absent = [], [], []
    for key, title in metrics:
        values = {c: median(_numbers([r["metrics"].get(key) for r in rs]))
                  for c, rs in by_cell.items()}
        present = [v for v in values.values() if v is not None]
        if not present:
            absent.append(title)
        elif all(v == 0 for v in present):
            zero.append(title)
        else:
            shown.append((title, values))
    if not shown:
        return None
    plt = pyplot()
    cols = 2
    rows = math.ceil(len(shown) / cols)
    panel_h = 0.55 + 0.32 * len(protocols) * max(1, len(events)) ** 0.5
    fig, axes = plt.subplots(rows, cols, figsize=(WIDTH_IN, 0.6 + panel_h * rows),
                             squeeze=False)
    cmap = plt.get_cmap("tab10")
    height = 0.8 / max(len(events), 1)
    for k, (title, values) in enumerate(shown):
        ax = axes[k // cols][k % cols]
        for j, event in enumerate(events):
            for i, protocol in enumerate(protocols):
                y = i + (j - (len(events) - 1) / 2) * height
                v = values.get((event, protocol))
                if v is None:
                    if (event, protocol) in values and j == 0 and all(
                            values.get((e, protocol)) is None for e in events):
                        ax.text(0, i, " n/a", va="center", fontsize=MIN_FONT_PT, color="grey")
                    continue
                ax.barh(y, v, height, color=cmap(j % 10))
        ax.set_yticks(range(len(protocols)), protocols)
        ax.invert_yaxis()
        ax.set_title(title, fontsize=TITLE_PT, loc="left")
        style_axes(ax)
    for k in range(len(shown), rows * cols):
        axes[k // cols][k % cols].axis("off")
    handles = [plt.Rectangle((0, 0), 1, 1, color=cmap(j % 10)) for j in range(len(events))]
    total_in = 0.6 + panel_h * rows
    fig.legend(handles, events, loc="upper center", bbox_to_anchor=(0.5, 1.0),
               ncol=len(events), fontsize=MIN_FONT_PT, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.4 / total_in))
    return svg_text(fig), zero, absent


def _numbers(values: Sequence[Any]) -> list[float]:
    return [float(v) for v in values if isinstance(v, (int, float))]


def herd_panels(fits: Mapping[str, Mapping[str, Any]], runs: Sequence[Mapping[str, Any]]
                ) -> str | None:
    """Left: requests per event against N, log-log, each series with its fitted slope.
    Right: seconds from the event to stable against N. One point per run."""
    series = {k: v for k, v in fits.items() if v.get("points")}
    stable: dict[str, list[tuple[int, float]]] = {}
    for r in runs:
        value = (r.get("metrics") or {}).get("time_to_stable_s")
        if r.get("status", "ok") == "ok" and isinstance(value, (int, float)):
            stable.setdefault(f"{r['protocol']}/{r['event']}", []).append(
                (int(r["members"]), float(value)))
    if not series and not stable:
        return None
    from matplotlib.ticker import ScalarFormatter

    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(WIDTH_IN, 4.4))
    for name, fit in series.items():
        pts = sorted(fit["points"])
        left.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                  label=f"{name}: slope {fit.get('slope', float('nan')):.2f}")
    left.set_xscale("log")
    left.set_yscale("log")
    left.yaxis.set_major_formatter(ScalarFormatter())
    left.yaxis.set_minor_formatter(ScalarFormatter())
    _sizes(left, sorted({p[0] for f in series.values() for p in f["points"]}))
    left.set_ylabel("coordination requests per event")
    left.set_title("requests (log-log)", fontsize=TITLE_PT, loc="left")
    for name, pts in stable.items():
        pts.sort()
        right.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
    right.set_xscale("log")
    _sizes(right, sorted({p[0] for pts in stable.values() for p in pts}))
    right.set_ylim(bottom=0)
    right.set_ylabel("seconds from the event to stable")
    right.set_title("time to stable", fontsize=TITLE_PT, loc="left")
    for ax in (left, right):
        ax.set_xlabel("members before the event (N)")
        if ax.get_legend_handles_labels()[1]:
            ax.legend(fontsize=MIN_FONT_PT)
        style_axes(ax)
    fig.tight_layout()
    return svg_text(fig)


def _sizes(ax: Any, sizes: Sequence[int]) -> None:
    """The sizes run as the only ticks of a log axis."""
    from matplotlib.ticker import NullLocator

    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticks(list(sizes), [str(s) for s in sizes])
