"""Runs the experiment matrix: one run = a fresh topic and group, N members, one event, metrics.

A run, step by step (the same for every protocol):

1. create a topic with P partitions (ZooKeeper metadata + broker) and start a steady producer;
2. start N members (the crash victim in its own process) and wait until the group has settled;
3. snapshot the ZooKeeper server's ``mntr``; apply the event; wait until settled again;
4. snapshot ``mntr``; stop the producer; wait until everything acknowledged was delivered;
5. stop every member and compute the metrics from the records.

A run that raises is recorded as ``failed`` with its error, and the next run starts.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from zkconsumer.admin import create_topic
from zkconsumer.lab.compare.scenario import apply_event, victim
from zkconsumer.lab.compare.spec import ExperimentSpec, RunSpec
from zkconsumer.lab.drivers import get_driver
from zkconsumer.lab.drivers.original import ensure_compiled, unobserved
from zkconsumer.lab.group import LabGroup, member_name
from zkconsumer.lab.matrix import run_matrix
from zkconsumer.lab.metrics import EventWindow, event_metrics, metric_notes
from zkconsumer.lab.original_build import original_home
from zkconsumer.lab.probe import (
    StaticSupport,
    broker_identity,
    kip848_refusal,
    probe_static_membership,
)
from zkconsumer.lab.producer import SteadyProducer
from zkconsumer.lab.progress import Progress
from zkconsumer.lab.runs import RunResult, RunStatus
from zkconsumer.lab.servers import RunError, Servers, servers_for
from zkconsumer.scenarios.protocols import PROTOCOL_TABLE
from zkconsumer.scenarios.timing import Timing

log = logging.getLogger(__name__)


def run_experiment(spec: ExperimentSpec,
                   on_result: Callable[[list[RunResult]], None] | None = None,
                   progress_stream: TextIO | None = None) -> list[RunResult]:
    """Every (protocol, event, repeat) of ``spec``; failed runs are results too, never raised.

    ``on_result`` sees the results so far after every run (the CLI rewrites results.json, so a
    long experiment that is interrupted still leaves what it measured).
    """
    spec.validate()
    kafka_home = original_home(spec.protocols, spec.broker,
                               bool(spec.zk_connect and spec.bootstrap))
    if kafka_home:
        ensure_compiled(kafka_home)  # once, before any member starts
    out_dir = Path(spec.out_dir) if spec.out_dir else Path(tempfile.mkdtemp(prefix="zklab-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = spec.runs()
    progress = Progress(len(runs), enabled=spec.progress, stream=progress_stream)
    progress.update("starting servers")
    with servers_for(spec) as servers:
        static: list[StaticSupport] = []  # probed once, at the first static-range run
        kip848: list[str | None] = []     # asked once, at the first KIP-848 run
        probe_lock = threading.Lock()

        def run(i: int, cell: RunSpec) -> RunResult:
            if PROTOCOL_TABLE[cell.protocol].kip848:
                broker = servers.broker_name or broker_identity(servers.bootstrap)
                with probe_lock:
                    if not kip848:
                        kip848.append(kip848_refusal(broker, servers.bootstrap))
                        if kip848[0] is not None:
                            progress.note(f"KIP-848 protocols unsupported: {kip848[0]}")
                if kip848[0] is not None:
                    return _result(spec, cell, RunStatus.UNSUPPORTED, kip848[0],
                                   details={"broker": broker})
            if cell.protocol == "static-range":
                with probe_lock:
                    if not static:
                        progress.update("static-range: probing the broker for static "
                                        "membership", i)
                        static.append(_probe(spec, servers, out_dir))
                        if not static[0].supported:
                            progress.note(f"static-range unsupported: {static[0].reason}")
                if not static[0].supported:
                    return _result(spec, cell, RunStatus.UNSUPPORTED, static[0].reason,
                                   details={"broker": static[0].broker})
            return run_one(spec, cell, servers, out_dir / "runs" / cell.slug, kafka_home)

        results = run_matrix(
            runs, label=lambda r: r.label, run=run,
            failed=lambda r, reason, tb: _result(spec, r, RunStatus.FAILED, reason,
                                                 details={"traceback": tb}),
            broker=servers.broker_name or broker_identity(servers.bootstrap), progress=progress,
            on_result=on_result, parallel=spec.parallel)
    progress.close()
    return results


def _probe(spec: ExperimentSpec, servers: Servers, out_dir: Path) -> StaticSupport:
    topic = f"lab-probe-{uuid.uuid4().hex[:8]}"
    try:
        create_topic(servers.zk_connect, topic, 2, bootstrap=servers.bootstrap)
        return probe_static_membership(zk_connect=servers.zk_connect,
                                       bootstrap=servers.bootstrap, timing=spec.timing,
                                       topic=topic, workdir=out_dir / "runs" / "static-probe",
                                       broker=servers.broker_name)
    except Exception as exc:
        log.exception("static membership probe failed")
        return StaticSupport(False, servers.bootstrap, f"the static membership probe failed: "
                             f"{exc!r}")


def _result(spec: ExperimentSpec, run: RunSpec, status: RunStatus, reason: str | None = None,
            **kw: Any) -> RunResult:
    return RunResult(protocol=run.protocol, members=spec.members, partitions=spec.partitions,
                     event=run.event, repeat=run.repeat, status=status.value, reason=reason,
                     scenario="compare", params={"members": spec.members,
                                                 "partitions": spec.partitions}, **kw)


def run_one(spec: ExperimentSpec, run: RunSpec, servers: Servers, records_dir: Path,
            kafka_home: str = "") -> RunResult:
    driver = get_driver(run.protocol)
    timing = spec.timing
    uniq = uuid.uuid4().hex[:6]
    topic = f"lab-{run.slug}-{uniq}"
    create_topic(servers.zk_connect, topic, spec.partitions, bootstrap=servers.bootstrap)
    if records_dir.exists():  # a previous experiment in the same --out: its records would mix
        shutil.rmtree(records_dir)
    group = LabGroup(protocol=run.protocol, topic=topic, group=f"lab-{run.slug}-{uniq}",
                     partitions=spec.partitions, zk_connect=servers.zk_connect,
                     bootstrap=servers.bootstrap, timing=timing, records_dir=records_dir,
                     processes=spec.processes, kafka_home=kafka_home)
    producer = SteadyProducer(servers.bootstrap, topic, spec.partitions, timing.produce_rate)
    producer.start()
    phases: dict[str, float] = {}
    try:
        crash_victim = victim(run.event, spec.members)
        phases["formation_start"] = time.time()
        for i in range(spec.members):
            name = member_name(i)
            group.spawn(name, own_process=name == crash_victim)
        if group.wait_settled(timing.formation_deadline_s) is None:
            raise RunError(f"{run.label}: {spec.members} members did not form a stable group "
                           f"within {timing.formation_deadline_s:.0f} s")
        mntr_before = servers.mntr()
        event_ts = apply_event(run.event, group, spec.members, timing.event_deadline_s)
        phases["event"] = event_ts
        settled = group.wait_settled(timing.event_deadline_s)
        end_ts = settled if settled is not None else time.time()
        phases["settled" if settled is not None else "gave_up"] = end_ts
        mntr_after = servers.mntr()
        required = tuple(group.required())
        producer.stop()
        drained = _drain(group, producer, timing.drain_deadline_s)
        phases["drained"] = time.time()
    finally:
        producer.stop()
        group.stop_all()
    produced = producer.produced
    # What the broker acknowledged, kept next to the members' records: the metrics can be
    # recomputed (and audited) from the run directory alone.
    (records_dir / "produced.json").write_text(
        json.dumps([[p.partition, p.offset, p.seq] for p in produced]))
    window = EventWindow(event_ts, end_ts, required)
    metrics = event_metrics(group.records, produced, spec.partitions, window,
                            attempt_counter=driver.attempt_counter,
                            duplicates_until=phases["drained"], family=driver.family)
    details = {
        "session_timeout_ms": timing.session_timeout_ms,
        "settled": settled is not None,
        "drained": drained,
        "producer_errors": producer.errors[:10],
        "phases": {k: round(v - phases["formation_start"], 3) for k, v in phases.items()},
        "event_ts": event_ts,
        "end_ts": end_ts,
        "drained_ts": phases["drained"],
        "processes": spec.processes,
        "crash_victim": crash_victim,
        "topic": topic,
        **_zk_details(driver.family, mntr_before, mntr_after),
        "metric_notes": metric_notes(driver.family, metrics,
                                     driver.option("group.protocol", "classic")),
        **_kip848_details(run.protocol, timing),
    }
    if PROTOCOL_TABLE[run.protocol].original:
        details["metric_notes"].update(unobserved(metrics))
    extras = {k: metrics.pop(k) for k in list(metrics) if k not in _SUMMARY_KEYS}
    details["extra_metrics"] = extras
    return _result(spec, run, RunStatus.OK, None if settled is not None else
                   f"not stable {timing.event_deadline_s:.0f} s after the event",
                   metrics=metrics, details=details, records_dir=str(records_dir))


_SUMMARY_KEYS = {
    "time_to_stable_s", "members_paused", "partition_seconds_unavailable",
    "coordination_requests", "rebalance_attempts", "conflicts", "duplicates", "lost",
    "double_owned_intervals", "failed_rebalances", "members_idle", "rollbacks",
    "group_rebalances", "watch_notifications", "conflicting_decisions",
    "requests_by_type",
}


def _kip848_details(protocol: str, timing: Timing) -> dict[str, Any]:
    """A KIP-848 run's group settings, which the broker (not the member) holds."""
    if not PROTOCOL_TABLE[protocol].kip848:
        return {}
    from zkconsumer.testing.kraft import DEFAULT_CONSUMER_HEARTBEAT_MS

    hb = timing.consumer_heartbeat_interval_ms
    return {"group_protocol": PROTOCOL_TABLE[protocol].group_protocol,
            "consumer_heartbeat_interval_ms": DEFAULT_CONSUMER_HEARTBEAT_MS if hb is None else hb}


def _drain(group: LabGroup, producer: SteadyProducer, deadline_s: float) -> bool:
    """Wait until every acknowledged record has been delivered (or the deadline passes)."""
    give_up = time.monotonic() + deadline_s
    want = {(p.partition, p.offset) for p in producer.produced}
    while time.monotonic() < give_up:
        if want <= group.delivered():
            return True
        time.sleep(0.25)
    return False


def _zk_details(family: str, before: dict[str, float], after: dict[str, float]
                ) -> dict[str, Any]:
    """Server-side counters over the event window; meaningful for ZooKeeper protocols only
    (broker-side groups do not talk to ZooKeeper: the deltas show the server was quiet)."""
    keys = ("zk_packets_received", "zk_packets_sent")
    deltas = {k: int(after[k] - before[k]) for k in keys if k in before and k in after}
    return {"zk_mntr_delta": deltas, "family": family}


