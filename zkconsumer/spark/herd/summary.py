"""The herd sweep's summary table and plots, from Spark aggregates (never the raw rows).

The table is grouped by (mode, protocol, partitions, event, members) in Spark; only the
aggregate, one line per group, comes back to the driver to be printed and plotted. Plots: per
event, requests per event, time to stable and conflicts against N, one line per protocol (and
partition count), log-log.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zkconsumer.results.plotting import pyplot
from zkconsumer.spark.summary import summary_text
from zkconsumer.tables import fmt

log = logging.getLogger(__name__)

PLOTS = (
    ("requests", "coordination requests per event", "requests_vs_n.png"),
    ("time_to_stable_s", "time to stable (s)", "time_to_stable_vs_n.png"),
    ("conflicts", "owner-znode conflicts per event", "conflicts_vs_n.png"),
)


def aggregate(df: Any) -> list[dict[str, Any]]:
    """Medians over seeds (and maxima where a worst case matters), one dict per group."""
    from pyspark.sql import functions as F

    keys = ["mode", "protocol", "partitions", "event", "members"]
    agg = (df.groupBy(*keys).agg(
        F.count(F.lit(1)).alias("runs"),
        F.percentile_approx("coordination_requests", 0.5).alias("requests"),
        F.max("rebalance_attempts").alias("max_attempts"),
        F.percentile_approx("rebalance_attempts", 0.5).alias("attempts"),
        F.avg("conflicts").alias("conflicts"),
        F.percentile_approx("time_to_stable_s", 0.5).alias("time_to_stable_s"),
        F.max("time_to_stable_s").alias("max_time_to_stable_s"),
        F.percentile_approx("members_paused", 0.5).alias("members_paused"),
        F.sum("failed_rebalances").alias("failed_rebalances"),
        F.sum("lost").alias("lost"),
        F.sum(F.when(F.col("drained") == F.lit(False), 1).otherwise(0)).alias("undrained"),
        F.sum(F.when(F.col("time_to_stable_s").isNull(), 1).otherwise(0)).alias("unstable"),
        F.max(F.col("simulated_only").cast("int")).alias("simulated_only"),
    ).orderBy(*keys))
    return [r.asDict() for r in agg.collect()]


LEGEND = ("Medians over seeds; `max att.` is the worst seed; `lost` and `failed` are sums; "
          "`not drained`: real runs whose members had not caught up with the producer by the "
          "drain deadline (their `lost` counts records still in flight, not proven lost). "
          "Rows marked * are simulated only (a model with no real run under its name).")
HEADER = ("mode", "protocol", "P", "event", "N", "runs", "requests/event", "attempts", "max att.",
          "conflicts", "time to stable (s)", "paused", "failed", "lost", "not drained", "unstable")
# the aggregates after the cell's key, in table order
FIGURES = ("requests", "attempts", "max_attempts", "conflicts", "time_to_stable_s",
           "members_paused", "failed_rebalances", "lost", "undrained", "unstable")


def summary_markdown(aggregates: Sequence[dict[str, Any]], title: str,
                     command: str | None = None, notes: Sequence[str] = ()) -> str:
    """The summary (:func:`zkconsumer.spark.summary.summary_text`): one table row per group."""
    rows = []
    for a in aggregates:
        star = "*" if a.get("simulated_only") else ""
        rows.append([a["mode"], f"{a['protocol']}{star}", str(a["partitions"]), a["event"],
                     f"{a['members']:,}", str(a["runs"]),
                     *(fmt(a[k], 1 if k == "conflicts" else 2, thousands=True) for k in FIGURES)])
    return summary_text(title, command, notes, LEGEND, HEADER, rows)


def write_plots(aggregates: Sequence[dict[str, Any]], out_dir: Path, prefix: str = ""
                ) -> list[Path]:
    """One PNG per metric: a panel per event, a line per (protocol, P), log-log axes."""
    plt = pyplot()

    events = sorted({a["event"] for a in aggregates})
    written = []
    for metric, label, name in PLOTS:
        fig, axes = plt.subplots(1, max(1, len(events)), figsize=(5 * max(1, len(events)), 4),
                                 squeeze=False)
        for ax, event in zip(axes[0], events, strict=False):
            lines = sorted({(a["mode"], a["protocol"], a["partitions"]) for a in aggregates
                            if a["event"] == event})
            only = {a["protocol"] for a in aggregates if a.get("simulated_only")}
            for mode, protocol, parts in lines:
                pts = sorted((a["members"], a[metric]) for a in aggregates
                             if (a["mode"], a["protocol"], a["partitions"], a["event"])
                             == (mode, protocol, parts, event)
                             and a[metric] is not None and a[metric] > 0)
                if not pts:
                    continue
                style = "-o" if mode == "sim" else "--s"
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, markersize=3,
                        label=f"{protocol}{' (simulated only)' if protocol in only else ''} "
                              f"P={parts}" + (" (real)" if mode == "real" else ""))
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(event)
            ax.set_xlabel("members N (before the event)")
            ax.set_ylabel(label)
            ax.grid(True, which="both", alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=6)
        fig.tight_layout()
        path = out_dir / f"{prefix}{name}"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written

