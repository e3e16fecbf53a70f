"""Everything ``experiment compare`` leaves in ``--out``: results, summary, timelines, plots."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from zkconsumer.lab.compare.plots import write_plots
from zkconsumer.lab.compare.report import write_results, write_summary
from zkconsumer.lab.compare.spec import ExperimentSpec
from zkconsumer.lab.runs import RunResult
from zkconsumer.lab.timelines import write_timelines

log = logging.getLogger(__name__)


def write_outputs(results: Sequence[RunResult], spec: ExperimentSpec, out_dir: Path,
                  command: str | None = None, json_file: Path | None = None) -> list[Path]:
    """Write ``results.json``, ``summary.md``, per-run ``timeline.json`` and the PNG plots."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [out_dir / "results.json", out_dir / "summary.md"]
    write_results(results, written[0], spec)
    write_summary(results, written[1], spec, command)
    if json_file is not None:
        write_results(results, json_file, spec)
        written.append(json_file)
    write_timelines(results)
    try:
        written += write_plots(results, out_dir)
    except Exception:  # plots are a view; the numbers are already on disk
        log.exception("plotting failed; results.json and summary.md are complete")
    return written
