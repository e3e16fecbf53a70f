"""What a lab run found (RunResult, RunStatus) and the metrics every measured run carries.

Every experiment of the lab (compare, herd, split brain) writes these rows, so runs of different
experiments share one ``results.json`` shape and one report; a result round-trips through
``results.json`` unchanged.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field, fields
from typing import Any


class RunStatus(str, enum.Enum):
    """``ok``: measured. ``unsupported``: the broker cannot run this protocol (said why).
    ``failed``: the run crashed; the error is recorded and the other runs go on."""

    OK = "ok"
    UNSUPPORTED = "unsupported"
    FAILED = "failed"


# The metric names every measured run carries, in the order the summary shows them.
METRIC_NAMES = (
    "time_to_stable_s", "members_paused", "partition_seconds_unavailable",
    "coordination_requests", "rebalance_attempts", "conflicts", "duplicates", "lost",
    "double_owned_intervals", "failed_rebalances", "watch_notifications",
    "conflicting_decisions",
)


@dataclass
class RunResult:
    """One row of ``results.json``; ``metrics`` is empty unless ``status`` is ``ok``.

    ``scenario`` names what produced the run (``compare``, ``herd``, ``split-brain`` ...) and
    ``params`` holds that scenario's own knobs (e.g. the herd's group size before the event), so
    runs of different scenarios can share one file and one report. Both default to what
    ``experiment compare`` wrote before they existed, so older ``results.json`` files load.
    """

    protocol: str
    members: int
    partitions: int
    event: str
    repeat: int
    status: str = RunStatus.OK.value
    reason: str | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    records_dir: str | None = None
    scenario: str = "compare"
    params: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunResult:
        """Unknown keys (written by a newer version) are ignored rather than fatal."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})
