"""The report's own plots, drawn from raw results: time to stable per protocol, and requests
against group size on log-log axes with the fitted slope. Returned as SVG text to inline."""

from __future__ import annotations

import io
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from zkconsumer.results.plotting import pyplot


def _svg(fig: Any) -> str:
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


def time_to_stable(runs: Sequence[Mapping[str, Any]]) -> str | None:
    """Grouped bars: median seconds to stable per protocol, one group per event."""
    cells: dict[tuple[str, str], list[float]] = {}
    for r in runs:
        value = (r.get("metrics") or {}).get("time_to_stable_s")
        if r.get("status", "ok") == "ok" and isinstance(value, (int, float)):
            cells.setdefault((r["event"], r["protocol"]), []).append(float(value))
    if not cells:
        return None
    events = list(dict.fromkeys(e for e, _ in cells))
    protocols = list(dict.fromkeys(p for _, p in cells))
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    width = 0.8 / len(protocols)
    for j, proto in enumerate(protocols):
        xs, ys = [], []
        for i, event in enumerate(events):
            if (event, proto) in cells:
                xs.append(i + j * width)
                ys.append(statistics.median(cells[(event, proto)]))
        ax.bar(xs, ys, width, label=proto)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(events))], events)
    ax.set_ylabel("seconds to stable (median)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _svg(fig)


def requests_vs_n(fits: Mapping[str, Mapping[str, Any]]) -> str | None:
    """Requests per event against N, log-log, each series labelled with its fitted slope."""
    series = {k: v for k, v in fits.items() if v.get("points")}
    if not series:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for name, fit in series.items():
        xs = [p[0] for p in fit["points"]]
        ys = [p[1] for p in fit["points"]]
        ax.plot(xs, ys, marker="o", label=f"{name}: slope {fit.get('slope', float('nan')):.2f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("members before the event (N)")
    ax.set_ylabel("requests per event")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _svg(fig)
