"""The demo's comparison: one join and one crash for the two ZooKeeper designs and two
broker-side protocols, on a small group, all cells at once so it fits in the demo.

Broker-side protocols are only as good as the coordinator they run on, so the comparison runs on
Apache Kafka whenever a Kafka directory is at hand (``ZKCONSUMER_KAFKA_HOME``, else the 2.4.1
build beside the checkout), on a ZooKeeper and broker of its own; the rest of the demo stays on
its servers. On the embedded Tansu, whose coordinator holds every round about half a session
timeout, the console says so and sets the Kafka 2.4.1 figures of docs/comparison.md beside the
demo's. Running the cells side by side makes the timings a quick look (they share the cores);
``zkconsumer experiment compare`` without ``--parallel`` gives the figures docs/comparison.md
publishes. The run writes its usual outputs (results.json, summary.md, Gantt plots) and meta.json.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from zkconsumer.cli.console import show
from zkconsumer.lab.broker_option import broker_name
from zkconsumer.lab.compare.output import write_outputs
from zkconsumer.lab.compare.report import summary_table
from zkconsumer.lab.compare.runner import run_experiment
from zkconsumer.lab.compare.spec import ExperimentSpec
from zkconsumer.lab.runs import RunResult, RunStatus
from zkconsumer.report.reference import (
    Reference,
    broker_caveat,
    is_tansu,
    kafka_reference,
    where_reference_is,
)
from zkconsumer.results import capture, write_provenance
from zkconsumer.scenarios.protocols import DEMO
from zkconsumer.scenarios.timing import Timing
from zkconsumer.tables import fmt

PROTOCOLS = DEMO
EVENTS = ("join", "crash")
MEMBERS = 3
PARTITIONS = 6
SESSION_TIMEOUT_MS = 4000
REFERENCE_KAFKA = "2.4.1"
SERVER_ENVS = ("ZKCONSUMER_ZK", "ZKCONSUMER_BOOTSTRAP")


def compare_broker(broker_option: str | None, env: Mapping[str, str],
                   kafka_home: Path | None) -> str | None:
    """The ``--broker`` spec the comparison starts for itself, or None for the demo's broker.

    A broker the user chose (``--broker``, ``ZKCONSUMER_BOOTSTRAP``) or servers the user runs
    (``ZKCONSUMER_ZK``) are kept; otherwise a Kafka directory, when there is one, replaces the
    embedded Tansu for the comparison.
    """
    if broker_option or any(env.get(k) for k in SERVER_ENVS) or kafka_home is None:
        return None
    return f"kafka:{kafka_home}"


def compare_command(out_dir: Path, broker: str | None = None) -> str:
    words = ["zkconsumer", "experiment", "compare", "--members", str(MEMBERS),
             "--partitions", str(PARTITIONS), "--events", ",".join(EVENTS),
             "--protocols", ",".join(PROTOCOLS), "--session-timeout-ms",
             str(SESSION_TIMEOUT_MS), "--parallel", str(len(PROTOCOLS) * len(EVENTS))]
    if broker:
        words += ["--broker", broker]
    return shlex.join([*words, "--out", str(out_dir)])


def run_compare_demo(zk_connect: str, bootstrap: str, broker: str, out_dir: Path,
                     versions: Mapping[str, str], own_broker: str | None = None
                     ) -> tuple[list[RunResult], str]:
    """The runs and the name of the broker they measured. ``own_broker``: a ``--broker`` spec
    to start for the comparison instead of the demo's servers (``zk_connect``, ``bootstrap``,
    the broker named ``broker``)."""
    spec = ExperimentSpec(protocols=PROTOCOLS, events=EVENTS, members=MEMBERS,
                          partitions=PARTITIONS, out_dir=str(out_dir),
                          zk_connect=None if own_broker else zk_connect,
                          bootstrap=None if own_broker else bootstrap, broker=own_broker,
                          timing=Timing(session_timeout_ms=SESSION_TIMEOUT_MS),
                          parallel=len(PROTOCOLS) * len(EVENTS))
    command = compare_command(out_dir, own_broker)
    prov = capture(command, versions=dict(versions))
    results = run_experiment(spec)
    write_outputs(results, spec, out_dir, command)
    measured = broker_name(own_broker) if own_broker else broker
    write_provenance(out_dir, replace(prov, broker=measured))
    return results, measured


def reference_rows(results: list[RunResult], reference: Reference) -> list[str]:
    """A markdown table: the demo's time to stable beside docs/comparison.md's Kafka 2.4.1."""
    lines = ["| protocol | event | stable s here (one run) | stable s, Apache Kafka 2.4.1 "
             f"(docs/comparison.md, median of {reference.repeats}) |", "|---|---|---|---|"]
    for r in results:
        here = r.metrics.get("time_to_stable_s") if r.status == RunStatus.OK.value else None
        there = reference.stable_s.get((r.protocol, r.event))
        lines.append(f"| {r.protocol} | {r.event} | {fmt(here, missing=r.status)} | "
                     f"{fmt(there)} |")
    return lines


def print_comparison(results: list[RunResult], out_dir: Path, broker: str) -> bool:
    show(summary_table(results))
    print("Read: zk-range makes every member stop for any change (paused = the group); the "
          "fenced leader mode moves only what must move; the broker protocols trade ZooKeeper "
          "traffic for the coordinator's rounds. The cells ran side by side: timings here are a "
          "quick look, docs/comparison.md has the measured figures.")
    caveat = broker_caveat(broker, SESSION_TIMEOUT_MS)
    reference = kafka_reference()
    if caveat:
        print(f"Broker: {broker}. Caution: {caveat}.")
    elif broker:
        print(f"Broker: {broker}.")
    if reference is None:
        print(f"(For comparison, {where_reference_is()}.)")
    else:
        print(f"Beside them, {reference.describe()}:" if is_tansu(broker) else
              f"For comparison, {reference.describe()}:")
        show("\n".join(reference_rows(results, reference)) + "\n")
        print(f"(the demo's cells: {MEMBERS} members, {PARTITIONS} partitions, session timeout "
              f"{SESSION_TIMEOUT_MS} ms; a crash waits for the victim's session to expire, so "
              "its times scale with the session timeout)")
    print(f"(outputs in {out_dir})")
    return all(r.status == RunStatus.OK.value for r in results)
