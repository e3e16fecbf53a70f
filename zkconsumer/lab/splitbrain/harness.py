"""The steps every split-brain run shares: topic, producer, proxied members, formation, and the
metrics at the end. A scenario only applies its fault between :meth:`SplitRun.form` and
:meth:`SplitRun.finish`.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

from zkconsumer.admin import create_topic
from zkconsumer.lab.drivers import get_driver
from zkconsumer.lab.group import member_name
from zkconsumer.lab.intervals import build_intervals, fetchers_at
from zkconsumer.lab.metrics import EventWindow, event_metrics
from zkconsumer.lab.producer import SteadyProducer
from zkconsumer.lab.records import Timeline
from zkconsumer.lab.runs import RunResult, RunStatus
from zkconsumer.lab.servers import RunError, Servers
from zkconsumer.lab.splitbrain.proxies import MemberProxies, ProxiedGroup
from zkconsumer.lab.splitbrain.spec import SCENARIO, SplitBrainSpec

log = logging.getLogger(__name__)

POLL_S = 0.1


class SplitRun:
    """One protocol's run of one scenario; use as a context manager so members, producer and
    proxies stop whatever happens."""

    def __init__(self, spec: SplitBrainSpec, protocol: str, repeat: int, servers: Servers,
                 records_dir: Path, event: str, proxied: bool = True,
                 kafka_home: str = "") -> None:
        self.spec = spec
        self.protocol = protocol
        self.repeat = repeat
        self.event = event
        self.servers = servers
        self.driver = get_driver(protocol)
        self.records_dir = records_dir
        uniq = uuid.uuid4().hex[:6]
        self.topic = f"sb-{event}-{protocol}-{uniq}"
        if records_dir.exists():  # an earlier experiment in the same --out
            shutil.rmtree(records_dir)
        create_topic(servers.zk_connect, self.topic, spec.partitions,
                     bootstrap=servers.bootstrap)
        self.proxies = (MemberProxies(self.driver.family, servers.zk_connect, servers.bootstrap)
                        if proxied else None)
        self.group = ProxiedGroup(
            self.proxies, protocol=protocol, topic=self.topic, group=f"sb-{event}-{uniq}",
            partitions=spec.partitions, zk_connect=servers.zk_connect,
            bootstrap=servers.bootstrap, timing=spec.timing, records_dir=records_dir,
            processes=False, kafka_home=kafka_home)
        self.producer = SteadyProducer(servers.bootstrap, self.topic, spec.partitions,
                                       spec.timing.produce_rate)
        self.started = time.time()
        self.phases: dict[str, float] = {}
        self._stopped = False

    # --- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> SplitRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop_everything()

    def _stop_everything(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self.producer.stop()
        if self.proxies is not None:
            for proxy in self.proxies.by_member.values():
                proxy.heal()  # a paused member must be able to leave cleanly
        self.group.stop_all()
        if self.proxies is not None:
            self.proxies.stop_all()

    def form(self) -> None:
        """Start the producer and ``members`` members; wait until they share the partitions."""
        self.producer.start()
        self.phases["formation_start"] = time.time()
        for i in range(self.spec.members):
            self.group.spawn(member_name(i))
        deadline = self.spec.timing.formation_deadline_s
        if self.group.wait_settled(deadline) is None:
            raise RunError(f"{self.protocol}: {self.spec.members} members did not form a stable "
                           f"group within {deadline:.0f} s")
        self.phases["formed"] = time.time()

    # --- observations --------------------------------------------------------------------------

    def fetching_now(self) -> list[set[str]]:
        """Per partition, the members fetching it according to the records read so far."""
        self.group.tail.poll()
        now = time.time()
        intervals = build_intervals(self.group.records, now + 3600.0, Timeline.FETCHING)
        return fetchers_at(intervals, self.spec.partitions, now)

    def partitions_of(self, member: str) -> list[int]:
        return [p for p, who in enumerate(self.fetching_now()) if member in who]

    def wait_for(self, predicate: Any, deadline_s: float) -> bool:
        give_up = time.monotonic() + deadline_s
        while time.monotonic() < give_up:
            self.group.tail.poll()
            if predicate():
                return True
            time.sleep(POLL_S)
        return False

    # --- the end ---------------------------------------------------------------------------------

    def finish(self, event_ts: float, settled: float | None, details: dict[str, Any],
               extra_metrics: dict[str, Any] | None = None) -> RunResult:
        """Stop the fault, drain, stop everybody and measure the window [event, settled]."""
        end_ts = settled if settled is not None else time.time()
        self.phases["settled" if settled is not None else "gave_up"] = end_ts
        required = tuple(self.group.required())  # before anybody is stopped
        exited = sorted(m for m in self.group.members if not self.group.handles[m].alive())
        if self.proxies is not None:
            for proxy in self.proxies.by_member.values():
                proxy.heal()
        self.producer.stop()
        drained = self._drain(self.spec.timing.drain_deadline_s)
        self.phases["drained"] = time.time()
        self._stop_everything()
        produced = self.producer.produced
        (self.records_dir / "produced.json").write_text(
            json.dumps([[p.partition, p.offset, p.seq] for p in produced]))
        window = EventWindow(event_ts, end_ts, required)
        metrics = event_metrics(self.group.records, produced, self.spec.partitions, window,
                                attempt_counter=self.driver.attempt_counter,
                                duplicates_until=self.phases["drained"],
                                family=self.driver.family)
        metrics.update(extra_metrics or {})
        t0 = self.phases.get("formation_start", self.started)
        full = {
            "settled": settled is not None,
            "drained": drained,
            "family": self.driver.family,
            "topic": self.topic,
            "group": self.group.group,
            "event_ts": event_ts,
            "end_ts": end_ts,
            "drained_ts": self.phases["drained"],
            "phases": {k: round(v - t0, 3) for k, v in sorted(self.phases.items(),
                                                                key=lambda kv: kv[1])},
            "producer_errors": self.producer.errors[:10],
            "required_members": list(required),
            "exited_members": exited,
            **details,
        }
        reason = None if settled is not None else (
            f"not stable {self.spec.timing.event_deadline_s:.0f} s after the fault ended")
        return RunResult(protocol=self.protocol, members=self.spec.members,
                         partitions=self.spec.partitions, event=self.event, repeat=self.repeat,
                         status=RunStatus.OK.value, reason=reason, metrics=metrics,
                         details=full, records_dir=str(self.records_dir), scenario=SCENARIO,
                         params=self.spec.params())

    def _drain(self, deadline_s: float) -> bool:
        give_up = time.monotonic() + deadline_s
        want = {(p.partition, p.offset) for p in self.producer.produced}
        while time.monotonic() < give_up:
            if want <= self.group.delivered():
                return True
            time.sleep(0.25)
        return False
