"""What every Spark job writes into ``--out``: the sweep table, ``summary.md`` and its plots.

The jobs differ in what they aggregate and plot (:mod:`.herd.summary`, :mod:`.splitbrain.table`:
different columns, statistics and outcomes), not in how a sweep's files are laid out. Here is
the layout both follow: ``sweep.parquet`` (Spark's directory) and a single-file ``sweep.csv`` in
the table's column order; a summary that opens with the title, the command to reproduce it
(portable: no machine's folders), the job's notes and a legend, then one Markdown table and
whatever the job lists after it; the plots written last, as a view that may fail without
losing the files already written.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from zkconsumer.results.portable import portable_command

log = logging.getLogger(__name__)


def write_tables(df: Any, out_dir: Path, columns: Sequence[str], order: Sequence[str]
                 ) -> list[Path]:
    """``sweep.parquet`` (Spark's directory layout) and a single-file ``sweep.csv``: ``columns``
    of ``df``, rows sorted by ``order``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    parquet = out_dir / "sweep.parquet"
    ordered = df.select(*columns).orderBy(*order)
    ordered.write.mode("overwrite").parquet(str(parquet))
    csv_dir = out_dir / "_sweep_csv"
    ordered.coalesce(1).write.mode("overwrite").option("header", True).csv(str(csv_dir))
    csv = out_dir / "sweep.csv"
    shutil.move(str(next(csv_dir.glob("part-*.csv"))), csv)
    shutil.rmtree(csv_dir, ignore_errors=True)
    return [parquet, csv]


def summary_text(title: str, command: str | None, notes: Sequence[str], legend: str,
                 header: Sequence[str], rows: Iterable[Sequence[str]],
                 after: Sequence[str] = ()) -> str:
    """The summary: title, the command to reproduce it (when there is one), the notes, the
    legend, a Markdown table of ``header`` and ``rows`` (cells already formatted), then the
    lines ``after`` the table."""
    lines = [f"# {title}", ""]
    if command:
        lines += ["Reproduce:", "", "```", portable_command(command), "```", ""]
    lines += list(notes) + ([""] if notes else [])
    lines += [legend, ""]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    lines += after
    return "\n".join(lines) + "\n"


def write_summary(out_dir: Path, text: str, plots: Callable[[], list[Path]]) -> list[Path]:
    """``summary.md`` holding ``text``, then the plots ``plots`` writes; returns the paths
    written. A plot that fails is logged: the tables and the summary are on disk already."""
    path = out_dir / "summary.md"
    path.write_text(text)
    written = [path]
    try:
        written += plots()
    except Exception:  # the plots are a view; the tables and summary are on disk already
        log.exception("plotting failed; sweep.parquet, sweep.csv and summary.md are complete")
    return written
