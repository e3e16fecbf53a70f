"""Lab records particular to ``coordination.mode=leader`` members (the ``zk-leader-*`` drivers).

Only the leader decides, and it says so with an ``assignment_decided`` connector event; that
event becomes the same ``dc`` decision record the legacy members write from their assignor, so
``conflicting_decisions`` is measured the same way for both families. Everything else (timeline,
coordination and request records) is the ZooKeeper driver's, unchanged.
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


class LeaderDecisionRecorder:
    """Connector listener: each published generation is one decision by this member."""

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
            log.exception("could not record a leader decision")
