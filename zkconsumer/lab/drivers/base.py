"""What every driver shares: the member's orders (MemberSpec) and how a driver is described.

A driver is one protocol's member body: a function that joins the group, consumes until told to
stop and reports what it observes through a :class:`RecordWriter`. The harness (group, events,
metrics, report) knows nothing else about the protocol.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from zkconsumer.lab.records import RecordWriter
from zkconsumer.scenarios.timing import Timing


@dataclass(frozen=True)
class MemberSpec:
    """Everything one member incarnation needs; JSON so it can cross into a process."""

    protocol: str
    member: str
    incarnation: int
    topic: str
    group: str
    partitions: int
    zk_connect: str
    bootstrap: str
    records_path: str
    timing: Timing
    kafka_home: str = ""  # the 0.10.2 build an original member runs from ("" for the others)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> MemberSpec:
        data: dict[str, Any] = json.loads(text)
        data["timing"] = Timing(**data["timing"])
        return cls(**data)


MemberBody = Callable[[MemberSpec, RecordWriter, threading.Event], None]


@dataclass(frozen=True)
class Driver:
    """A protocol: its member body and how its counters map onto the common metrics.

    ``attempt_counter``: the request counted as one member's rebalance attempt (None: the
    member writes ``attempt`` coordination records itself).
    """

    name: str
    family: str               # "zookeeper" or "broker"
    body: MemberBody
    attempt_counter: str | None
    options: tuple[tuple[str, str], ...] = ()

    def option(self, key: str, default: str = "") -> str:
        return dict(self.options).get(key, default)


def parse_seq(value: bytes | None) -> int | None:
    """The producer writes the sequence number as the value; anything else is not ours."""
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None
