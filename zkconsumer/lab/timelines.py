"""Each run's assignment timeline: who fetched (and was assigned) which partition when,
relative to the event, for the plots and for ``timeline.json`` beside the run's records.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zkconsumer.lab.intervals import build_intervals
from zkconsumer.lab.records import RecordTail, Timeline
from zkconsumer.lab.runs import RunResult


def run_intervals(result: RunResult) -> dict[str, Any] | None:
    """The run's fetching and assigned intervals, relative to the event, for plots and JSON."""
    if not result.records_dir or not Path(result.records_dir).is_dir():
        return None
    tail = RecordTail(result.records_dir)
    tail.poll()
    event = float(result.details.get("event_ts", 0.0))
    end = float(result.details.get("drained_ts") or result.details.get("end_ts") or event)

    def rel(kind: Timeline) -> list[dict[str, Any]]:
        return [{"member": i.member, "incarnation": i.incarnation, "partition": i.partition,
                 "start": round(i.start - event, 3), "end": round(i.end - event, 3)}
                for i in build_intervals(tail.records, end, kind)]

    stable = result.metrics.get("time_to_stable_s")
    return {"event_s": 0.0, "stable_s": stable, "end_s": round(end - event, 3),
            "fetching": rel(Timeline.FETCHING), "assigned": rel(Timeline.ASSIGNED)}


def write_timelines(results: Sequence[RunResult]) -> None:
    """``timeline.json`` next to each run's records: the per-member assignment timeline."""
    for r in results:
        data = run_intervals(r)
        if data is not None and r.records_dir:
            (Path(r.records_dir) / "timeline.json").write_text(json.dumps(data, indent=1))
