"""The split-brain sweep's table (one row per mode, protocol, scenario, N, P, seed), its summary
table and plots; the files are written as every job's (:mod:`zkconsumer.spark.summary`).

Aggregation is Spark's (medians and sums per mode, protocol, scenario, N, P); only the aggregate
comes back to the driver, over the measured runs. A row with ``applicable = false`` is a cell the
scenario has no meaning for, with the reason; a run whose group did not form, or that failed,
carries its reason too (:mod:`.outcome`); their metrics are null.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from zkconsumer.spark.splitbrain.outcome import (
    KEYS,
    ORDER,
    Outcome,
    OutcomeRow,
    outcome_of,
    stuck_text,
)
from zkconsumer.spark.summary import summary_text
from zkconsumer.tables import fmt

log = logging.getLogger(__name__)

SCHEMA_FIELDS: tuple[tuple[str, str], ...] = (
    ("mode", "string"), ("protocol", "string"), ("scenario", "string"), ("members", "int"),
    ("partitions", "int"), ("seed", "int"), ("applicable", "boolean"), ("reason", "string"),
    ("double_owned_partition_s", "double"), ("zombie_deliveries", "long"),
    ("delivered_twice", "long"), ("offsets_went_back", "int"),
    ("zombie_commits_accepted", "int"), ("zombie_stop_s", "double"), ("zombies", "int"),
    ("conflicts", "int"), ("rollbacks", "int"), ("attempts_max", "int"),
    ("attempts_mean", "double"), ("stale_decisions", "int"), ("rebalances_given_up", "int"),
    ("gave_up_members", "int"), ("unowned_partition_s", "double"),
    ("time_to_stable_s", "double"), ("verify_ok", "boolean"), ("lost", "long"),
    ("produced", "long"), ("delivered", "long"), ("settled", "boolean"),
    ("stable_at_end", "boolean"), ("repaired", "boolean"), ("drained", "boolean"),
    ("tasks", "int"), ("broker", "string"), ("session_timeout_ms", "int"),
    ("rebalance_backoff_ms", "int"), ("rebalance_max_retries", "int"),
    ("zombie_fraction", "double"), ("cut_s", "double"), ("delay_ms_max", "double"),
    ("storm_changes", "int"), ("p_give_up", "double"), ("process_start_skew_ms", "double"),
    ("lost_for_good", "long"),
)
TABLE_COLUMNS = tuple(name for name, _ in SCHEMA_FIELDS)
# the order of the rows in sweep.parquet and sweep.csv
TABLE_ORDER = ("mode", "scenario", "protocol", "partitions", "members", "seed")
_CASTS = {"string": str, "int": int, "long": int, "double": float, "boolean": bool}


def schema_ddl() -> str:
    return ", ".join(f"{name} {kind}" for name, kind in SCHEMA_FIELDS)


def to_record(row: Mapping[str, Any]) -> tuple[Any, ...]:
    unknown = set(row) - set(TABLE_COLUMNS)
    if unknown:
        raise ValueError(f"columns not in the split-brain table: {sorted(unknown)}")
    return tuple(None if row.get(n) is None else _CASTS[k](row[n]) for n, k in SCHEMA_FIELDS)


def rows_to_df(spark: Any, rows: Iterable[Mapping[str, Any]]) -> Any:
    """The table's columns and each run's ``outcome`` (:func:`.outcome_of`), which the summary
    groups by and the written tables leave out."""
    return spark.createDataFrame([(*to_record(r), outcome_of(r).value) for r in rows],
                                 schema_ddl() + ", outcome string")


LEGEND = ("Medians over seeds (`given up`, `offsets back`, `verify failed`, `lost`: sums; "
          "`max attempts`, `zombies stopped s`: worst seed). `outcome`: measured, or what "
          "the runs came to instead (a group that did not form under its retry budget "
          "never reached the event; `budget`: rebalance.max.retries; a group that ended "
          "stuck left records undelivered after the committed offsets). — : no such "
          "figure.")
# (column, how it is aggregated over seeds, header)
SUMMARY = (
    ("double_owned_partition_s", "median", "double-owned part·s"),
    ("zombie_deliveries", "median", "zombie deliveries"),
    ("delivered_twice", "median", "delivered twice"),
    ("offsets_went_back", "sum", "offsets back"),
    ("zombie_stop_s", "max", "zombies stopped s"),
    ("conflicts", "median", "conflicts"),
    ("rollbacks", "median", "rollbacks"),
    ("attempts_max", "max", "max attempts"),
    ("stale_decisions", "median", "stale decisions"),
    ("rebalances_given_up", "sum", "given up"),
    ("p_give_up", "mean", "P(some member gives up)"),
    ("unowned_partition_s", "median", "unowned part·s"),
    ("time_to_stable_s", "median", "stable s"),
    ("verify_failed", "sum", "verify failed"),
    ("lost", "sum", "lost"),
)


def aggregate(df: Any, by_outcome: bool = True) -> list[dict[str, Any]]:
    """The measured runs' medians, sums and worst cases per cell, and per outcome (measured,
    ended stuck, lost records) unless ``by_outcome`` is False (the plots: every measured run
    of a cell is a point of its curve, the give-ups of a stuck group too)."""
    from pyspark.sql import functions as F

    fns = {"median": lambda c: F.percentile_approx(c, 0.5), "sum": F.sum, "max": F.max,
           "mean": F.avg}
    df = df.withColumn("verify_failed", F.when(F.col("verify_ok") == F.lit(False), 1)
                       .when(F.col("verify_ok"), 0))
    df = df.withColumn("p_give_up", F.coalesce(
        "p_give_up", F.when(F.col("rebalances_given_up") > 0, 1.0)
        .when(F.col("rebalances_given_up").isNotNull(), 0.0)))
    aggs = [fns[how](col).alias(col) for col, how, _ in SUMMARY]
    measured = df.filter(F.col("outcome").isin([o.value for o in Outcome if o.measured]))
    keys = (*KEYS, "outcome") if by_outcome else KEYS
    out = measured.groupBy(*keys).agg(F.count(F.lit(1)).alias("runs"), *aggs).orderBy(*keys)
    return [r.asDict() for r in out.collect()]


def _cell(v: Any) -> str:
    """Thousands grouped, two decimals for fractions, booleans as words."""
    return str(v) if isinstance(v, bool) else fmt(v, 2, thousands=True)


def summary_markdown(aggregates: Sequence[dict[str, Any]], outcomes: Sequence[OutcomeRow],
                     title: str, command: str, notes: Sequence[str]) -> str:
    """The summary: one table row per cell's measured runs (``aggregates``) and one per cell's
    runs that came to another outcome (``outcomes``: a group that did not form is a result and
    reads as one), then the failed runs' errors and the not-applicable cells' reasons."""
    header = ["mode", "scenario", "protocol", "P", "N", "runs", "outcome",
              *(h for _, _, h in SUMMARY)]
    table: list[tuple[tuple[Any, ...], list[Any]]] = []
    for a in aggregates:
        key = tuple(a[k] for k in KEYS)
        outcome = Outcome(a["outcome"])
        text = stuck_text(a["lost"]) if outcome is Outcome.ENDED_STUCK else outcome.value
        table.append(((*key, ORDER[outcome]), [*key, a["runs"], text,
                                               *(a[c] for c, _, _ in SUMMARY)]))
    for o in outcomes:
        if o.outcome is Outcome.NOT_APPLICABLE:
            continue
        table.append(((*o.key(), ORDER[o.outcome]), [*o.key(), o.runs, o.text,
                                                     *(None for _ in SUMMARY)]))
    rows = [[_cell(c) for c in cells] for _, cells in sorted(table, key=lambda kv: kv[0])]
    after: list[str] = []
    failed = [(o, r) for o in outcomes if o.outcome is Outcome.FAILED for r in o.reasons]
    if failed:
        after += ["", "Failed (harness errors):", ""]
        after += [f"- {o.protocol} / {o.scenario} N={o.members}: {r}" for o, r in failed]
    na = {(o.protocol, o.scenario): o.reasons[0] for o in outcomes
          if o.outcome is Outcome.NOT_APPLICABLE}
    if na:
        after += ["", "Not applicable:", ""]
        after += [f"- {p} / {s}: {why}" for (p, s), why in sorted(na.items())]
    return summary_text(title, command, notes, LEGEND, header, rows, after)


PLOTS = (
    ("double_owned_partition_s", "zombie", "double-owned partition·s", "double_owned_vs_n.png"),
    ("conflicts", "stale-view", "owner conflicts", "conflicts_vs_n.png"),
    ("p_give_up", "storm", "P(some member gives up)", "give_up_vs_n.png"),
    ("unowned_partition_s", "storm", "unowned partition·s", "unowned_vs_n.png"),
)


def write_plots(aggregates: Sequence[dict[str, Any]], out_dir: Path) -> list[Path]:
    """One PNG per metric: a line per (mode, protocol, P), N on a log axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for metric, scenario, label, name in PLOTS:
        rows = [a for a in aggregates if a["scenario"] == scenario and a[metric] is not None]
        if not rows:
            continue
        fig, ax = plt.subplots(figsize=(6, 4))
        for mode, protocol, parts in sorted({(a["mode"], a["protocol"], a["partitions"])
                                             for a in rows}):
            pts = sorted((a["members"], a[metric]) for a in rows
                         if (a["mode"], a["protocol"], a["partitions"]) == (mode, protocol, parts))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "-o" if mode == "sim" else "--s",
                    markersize=3, label=f"{protocol} P={parts} ({mode})")
        ax.set_xscale("log")
        if metric != "p_give_up":
            ax.set_yscale("symlog", linthresh=0.1)
        ax.set_title(scenario)
        ax.set_xlabel("members N")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6)
        fig.tight_layout()
        fig.savefig(out_dir / name, dpi=110)
        plt.close(fig)
        written.append(out_dir / name)
    return written

