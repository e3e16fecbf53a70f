"""Everything ``experiment split-brain`` leaves in ``--out``."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from zkconsumer.lab.runs import RunResult
from zkconsumer.lab.splitbrain.plot import zombie_timeline
from zkconsumer.lab.splitbrain.report import write_results, write_summary
from zkconsumer.lab.splitbrain.spec import SplitBrainSpec
from zkconsumer.lab.timelines import write_timelines

log = logging.getLogger(__name__)

TIMELINE_PNG = "zombie-timeline.png"


def write_outputs(results: Sequence[RunResult], spec: SplitBrainSpec, out_dir: Path,
                  command: str | None = None) -> list[Path]:
    """``results.json``, ``summary.md``, per-run ``timeline.json`` and (zombie) the timeline."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [out_dir / "results.json", out_dir / "summary.md"]
    write_results(results, written[0], spec)
    write_summary(results, written[1], spec, command)
    write_timelines(results)
    if spec.scenario == "zombie":
        try:
            png = zombie_timeline(results, out_dir / TIMELINE_PNG)
            if png is not None:
                written.append(png)
        except Exception:  # a plot is a view; the numbers are already on disk
            log.exception("the zombie timeline could not be drawn")
    return written
