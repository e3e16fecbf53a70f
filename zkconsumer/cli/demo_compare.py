"""The demo's comparison: one join and one crash for the two ZooKeeper designs and two
broker-side protocols, on a small group, all cells at once so it fits in the demo.

Running the cells side by side makes the timings a quick look (they share two cores);
``zkconsumer experiment compare`` without ``--parallel`` gives the figures docs/comparison.md
publishes. The run writes its usual outputs (results.json, summary.md, Gantt plots) and meta.json.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from zkconsumer.cli.console import show
from zkconsumer.lab.output import write_outputs
from zkconsumer.lab.report import summary_table
from zkconsumer.lab.runner import run_experiment
from zkconsumer.lab.spec import ExperimentSpec, RunResult, RunStatus, Timing
from zkconsumer.results import capture, write_provenance

PROTOCOLS = ("zk-range", "zk-leader-range", "eager-range", "cooperative-sticky")
EVENTS = ("join", "crash")
MEMBERS = 3
PARTITIONS = 6
SESSION_TIMEOUT_MS = 4000


def compare_command(out_dir: Path) -> str:
    return shlex.join(["zkconsumer", "experiment", "compare", "--members", str(MEMBERS),
                       "--partitions", str(PARTITIONS), "--events", ",".join(EVENTS),
                       "--protocols", ",".join(PROTOCOLS), "--session-timeout-ms",
                       str(SESSION_TIMEOUT_MS), "--parallel", str(len(PROTOCOLS) * len(EVENTS)),
                       "--out", str(out_dir)])


def run_compare_demo(zk_connect: str, bootstrap: str, broker: str, out_dir: Path
                     ) -> list[RunResult]:
    spec = ExperimentSpec(protocols=PROTOCOLS, events=EVENTS, members=MEMBERS,
                          partitions=PARTITIONS, out_dir=str(out_dir), zk_connect=zk_connect,
                          bootstrap=bootstrap, timing=Timing(session_timeout_ms=SESSION_TIMEOUT_MS),
                          parallel=len(PROTOCOLS) * len(EVENTS))
    command = compare_command(out_dir)
    prov = capture(command, broker=broker)
    results = run_experiment(spec)
    write_outputs(results, spec, out_dir, command)
    write_provenance(out_dir, prov)
    return results


def print_comparison(results: list[RunResult], out_dir: Path) -> bool:
    show(summary_table(results))
    print("Read: zk-range makes every member stop for any change (paused = the group); the "
          "fenced leader mode moves only what must move; the broker protocols trade ZooKeeper "
          "traffic for the coordinator's rounds. The cells ran side by side: timings here are a "
          "quick look, docs/comparison.md has the measured figures.")
    print(f"(outputs in {out_dir})")
    return all(r.status == RunStatus.OK.value for r in results)
