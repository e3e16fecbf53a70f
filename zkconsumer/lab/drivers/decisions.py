"""Decision records of the ZooKeeper-coordinated members, from ``assignment_decided`` events.

Both coordination modes say what they decided with the same connector event: a legacy member
after running the assignor over the view one rebalance attempt read (every member decides), a
``coordination.mode=leader`` member when it publishes a generation (only the leader decides).
Each event becomes one ``dc`` decision record, so ``conflicting_decisions`` is measured the same
way for both, from events only.
"""

from __future__ import annotations

import logging
from typing import Any

from zkconsumer.lab.records import RecordWriter, decision_digest

log = logging.getLogger(__name__)

def decision_view(event: dict[str, Any]) -> tuple[dict[str, list[int]], dict[str, list[str]],
                                                  dict[tuple[str, int], str]]:
    """(partitions per topic, thread ids per topic, partition -> member) of one decision."""
    counts: dict[str, int] = event.get("partition_counts") or {}
    partitions = {t: list(range(int(n))) for t, n in counts.items()}
    threads: dict[str, list[str]] = {}
    for per_topic in (event.get("threads") or {}).values():
        for topic, tids in per_topic.items():
            threads.setdefault(topic, []).extend(tids)
    assignment = {(t, int(p)): member
                  for member, per_topic in (event.get("assignment") or {}).items()
                  for t, parts in per_topic.items() for p in parts}
    return partitions, threads, assignment


class DecisionRecorder:
    """Connector listener: each ``assignment_decided`` event is one decision by this member."""

    def __init__(self, writer: RecordWriter) -> None:
        self._writer = writer

    def __call__(self, event: dict[str, Any]) -> None:
        if event.get("type") != "assignment_decided":
            return
        try:
            partitions, threads, assignment = decision_view(event)
            self._writer.decision(decision_digest(partitions, threads, assignment),
                                  sorted(event.get("members") or ()),
                                  {t: len(ps) for t, ps in partitions.items()})
        except Exception:  # an observation must never break the member
            log.exception("could not record a decision")
