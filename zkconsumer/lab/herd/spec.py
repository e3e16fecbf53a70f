"""What a herd sweep asks for (HerdSpec), what it found (HerdResult) and the log-log fits.

Plain data, shared by the sweep (``lab/herd/run.py``), its report (``lab/herd/report.py``), the CLI
and the Spark jobs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from zkconsumer.lab.drivers import DRIVERS
from zkconsumer.lab.drivers.broker import STATS_INTERVAL_MS
from zkconsumer.lab.herd.fits import loglog_fit
from zkconsumer.lab.metrics import ZOOKEEPER_FAMILY
from zkconsumer.lab.runs import RunResult, RunStatus
from zkconsumer.scenarios.timing import Timing

log = logging.getLogger(__name__)

SCENARIO = "herd"
HERD_EVENTS = ("join", "leave")
DEFAULT_SIZES = (4, 8, 16, 32, 64)
# A long ZooKeeper session makes idle clients ping rarely (every timeout/3): the server-side
# count then needs only a tiny correction. Formation and events do not wait on the timeout.
HERD_TIMING = Timing(session_timeout_ms=30000, rebalance_backoff_ms=1000,
                     rebalance_max_retries=10, quiet_s=2.0, formation_deadline_s=180.0,
                     event_deadline_s=120.0, produce_rate=0.0, request_sample_interval_s=0.25)
class HerdError(Exception):
    """The growing group could not be formed or measured (the rest of the sweep is skipped)."""


@dataclass(frozen=True)
class HerdSpec:
    """One herd sweep.

    ``members``: the stable group sizes N at which the events are measured. ``zk_connect`` /
    ``bootstrap`` name running servers; ``dedicated_zookeeper`` (default) runs the sweep on a
    ZooKeeper of its own (the broker registered in it), so that no other client's traffic is in
    the server-side counts; without it and without ``zk_connect``, embedded servers are started.
    ``settle_margin_s``: waited after the group settled and before each snapshot, so every
    member has sampled its counters since its last request (None: twice the sampling interval
    plus a little; ZooKeeper members sample every ``timing.request_sample_interval_s``, broker
    members every librdkafka statistics interval).
    ``ping_window_s``: the quiet window the ping rate is measured over, just before each event
    (at least ``settle_margin_s``: it is also the margin before the first snapshot).
    """

    protocols: tuple[str, ...] = ("zk-range",)
    members: tuple[int, ...] = DEFAULT_SIZES
    partitions: int = 8
    events: tuple[str, ...] = HERD_EVENTS
    timing: Timing = field(default_factory=lambda: HERD_TIMING)
    zk_connect: str | None = None
    bootstrap: str | None = None
    dedicated_zookeeper: bool = True
    out_dir: str | None = None
    settle_margin_s: float | None = None
    ping_window_s: float = 2.0
    progress: bool = False
    broker: str | None = None  # the broker started when none is named (tansu, kafka, kafka:DIR)

    def validate(self) -> None:
        hb = self.timing.consumer_heartbeat_interval_ms
        if hb is not None and not 0 < hb < self.timing.session_timeout_ms:
            raise ValueError(f"--consumer-heartbeat-ms must be between 0 and the session "
                             f"timeout ({self.timing.session_timeout_ms} ms), got {hb}")
        unknown = [p for p in self.protocols if p not in DRIVERS]
        if unknown or not self.protocols:
            raise ValueError(f"unknown protocol(s) {unknown}; choose from {sorted(DRIVERS)}")
        bad = [e for e in self.events if e not in HERD_EVENTS]
        if bad or not self.events:
            raise ValueError(f"unknown herd event(s) {bad}; choose from {list(HERD_EVENTS)}")
        if not self.members or min(self.members) < 1:
            raise ValueError(f"--members needs group sizes >= 1, got {list(self.members)}")
        if len(set(self.members)) != len(self.members):
            raise ValueError(f"--members lists a size twice: {list(self.members)}")
        if self.partitions < 1:
            raise ValueError(f"--partitions must be >= 1, got {self.partitions}")
        if self.bootstrap is None and self.zk_connect is not None and not self.dedicated_zookeeper:
            raise ValueError("a ZooKeeper was named without a broker (--bootstrap)")

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(sorted(self.members))

    def margin_s(self, family: str) -> float:
        if self.settle_margin_s is not None:
            return self.settle_margin_s
        interval = (self.timing.request_sample_interval_s if family == ZOOKEEPER_FAMILY
                    else STATS_INTERVAL_MS / 1000.0)
        return 2 * interval + 0.2

    def points(self) -> int:
        return len(self.protocols) * len(self.members) * len(self.events)

    def to_json(self) -> dict[str, Any]:
        return {"protocols": list(self.protocols), "members": list(self.sizes),
                "partitions": self.partitions, "events": list(self.events),
                "timing": vars(self.timing), "dedicated_zookeeper": self.dedicated_zookeeper,
                "settle_margin_s": self.settle_margin_s, "ping_window_s": self.ping_window_s}


@dataclass
class HerdResult:
    """Every measured point (one RunResult per protocol x N x event) and the fits."""

    spec: HerdSpec
    runs: list[RunResult]
    fits: dict[str, dict[str, Any]]

    def fit(self, protocol: str, event: str) -> dict[str, Any] | None:
        return self.fits.get(f"{protocol}/{event}")


def fit_runs(runs: list[RunResult]) -> dict[str, dict[str, Any]]:
    """``"<protocol>/<event>" -> {"slope", "intercept", "r2", "points": [[N, requests], ...]}``
    from the measured runs (requests = the clients' count); the ZooKeeper server's count gets
    its own ``server_slope`` where it was measured. Members that count nothing (the original's
    JVMs) are fitted on the server's count alone (``"basis": "server"``: slope and points are
    the server's)."""
    out: dict[str, dict[str, Any]] = {}
    keys = dict.fromkeys((r.protocol, r.event) for r in runs if r.scenario == SCENARIO)
    for protocol, event in keys:
        ok = [r for r in runs if r.protocol == protocol and r.event == event
              and r.scenario == SCENARIO and r.status == RunStatus.OK.value]
        fit = loglog_fit([(r.members, r.metrics.get("coordination_requests")) for r in ok])
        server = loglog_fit([(r.members, r.metrics.get("zk_requests_server")) for r in ok])
        if fit is None and server is None:
            continue
        doc = fit.to_json() if fit is not None else {**server.to_json(),  # type: ignore[union-attr]
                                                     "basis": "server"}
        doc["server_slope"] = None if server is None else round(server.slope, 4)
        out[f"{protocol}/{event}"] = doc
    return out


def failed_point(spec: HerdSpec, protocol: str, n: int, event: str, reason: str,
            tb: str | None = None) -> RunResult:
    return RunResult(protocol=protocol, members=n, partitions=spec.partitions, event=event,
                     repeat=0, status=RunStatus.FAILED.value, reason=reason,
                     details={"traceback": tb} if tb else {}, scenario=SCENARIO,
                     params={"n": n})
