"""Run one split-brain scenario over several protocols (what the CLI verb does).

Every (protocol, repeat) is one run on a fresh topic and group. A run that raises is recorded
as ``failed`` with its error and the next one starts; a protocol a scenario does not apply to is
``unsupported`` with the reason. Every result names the broker it ran against.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from zkconsumer.lab.compare.spec import ExperimentSpec
from zkconsumer.lab.drivers import get_driver
from zkconsumer.lab.drivers.original import SPLIT_UNOBSERVED, ensure_compiled, unobserved
from zkconsumer.lab.matrix import run_matrix
from zkconsumer.lab.original_build import original_home
from zkconsumer.lab.probe import broker_identity
from zkconsumer.lab.progress import Progress
from zkconsumer.lab.runs import RunResult, RunStatus
from zkconsumer.lab.servers import Servers, servers_for
from zkconsumer.lab.splitbrain.failover import FailoverCluster, failover_events, run_failover
from zkconsumer.lab.splitbrain.spec import SCENARIO, SplitBrainSpec
from zkconsumer.lab.splitbrain.stale_view import run_stale_view
from zkconsumer.lab.splitbrain.zombie import run_zombie
from zkconsumer.scenarios.protocols import PROTOCOL_TABLE

log = logging.getLogger(__name__)


def _runs(spec: SplitBrainSpec) -> list[tuple[str, str, int]]:
    """``(protocol, event, repeat)`` in the order they run."""
    events = failover_events() if spec.scenario == "failover" else (spec.scenario,)
    return [(p, e, r) for r in range(spec.repeat) for e in events for p in spec.protocols]


@contextlib.contextmanager
def _servers(spec: SplitBrainSpec) -> Iterator[Servers]:
    # The run's timing reaches the servers: an Apache Kafka 4 broker gives the KIP-848 groups
    # the scenario's session timeout and the chosen heartbeat interval.
    with servers_for(ExperimentSpec(zk_connect=spec.zk_connect, bootstrap=spec.bootstrap,
                                    broker=spec.broker, timing=spec.timing)) as s:
        yield s


def run_split_brain(spec: SplitBrainSpec,
                    on_result: Callable[[list[RunResult]], None] | None = None,
                    progress_stream: TextIO | None = None) -> list[RunResult]:
    """Every run of the scenario; failures are results, never raised."""
    spec.validate()
    kafka_home = original_home(spec.protocols, spec.broker,
                               bool(spec.zk_connect and spec.bootstrap))
    if kafka_home:
        ensure_compiled(kafka_home)  # once, before any member starts
    out_dir = Path(spec.out_dir) if spec.out_dir else Path(tempfile.mkdtemp(prefix="zksplit-"))
    runs = _runs(spec)
    progress = Progress(len(runs), enabled=spec.progress, stream=progress_stream)
    progress.update("starting servers")
    with _servers(spec) as servers, contextlib.ExitStack() as stack:
        clusters: list[FailoverCluster] = []  # one ensemble, started for the first failover

        def run(i: int, cell: tuple[str, str, int]) -> RunResult:
            protocol, event, repeat = cell
            records_dir = out_dir / "runs" / f"{protocol}-{event}-r{repeat}"
            if spec.scenario == "failover" and get_driver(protocol).family != "zookeeper":
                return _unsupported(spec, protocol, event, repeat,
                                    "a broker-coordinated group does not use ZooKeeper: "
                                    "the ensemble's leader can die without it noticing")
            original = PROTOCOL_TABLE[protocol].original
            if spec.scenario == "failover" and original:
                return _unsupported(spec, protocol, event, repeat,
                                    "original members are run by the zombie and stale-view "
                                    "scenarios only")
            if spec.scenario == "failover":
                if not clusters:
                    progress.update("starting a 3-server ZooKeeper ensemble", done=i)
                    clusters.append(stack.enter_context(FailoverCluster(servers.bootstrap)))
                return run_failover(spec, protocol, event, repeat, clusters[0], records_dir)
            scenario = run_zombie if spec.scenario == "zombie" else run_stale_view
            result = scenario(spec, protocol, repeat, servers, records_dir,
                              kafka_home if original else "")
            if original:
                result.details.setdefault("metric_notes", {}).update(
                    unobserved(result.metrics, SPLIT_UNOBSERVED))
            return result

        def failed(cell: tuple[str, str, int], reason: str, tb: str) -> RunResult:
            protocol, event, repeat = cell
            return RunResult(protocol=protocol, members=spec.members,
                             partitions=spec.partitions, event=event, repeat=repeat,
                             status=RunStatus.FAILED.value, reason=reason,
                             details={"traceback": tb}, scenario=SCENARIO, params=spec.params())

        results = run_matrix(runs, label=lambda c: f"{c[0]}/{c[1]}/r{c[2]}", run=run,
                             failed=failed,
                             broker=servers.broker_name or broker_identity(servers.bootstrap),
                             progress=progress, on_result=on_result)
    progress.close()
    return results


def _unsupported(spec: SplitBrainSpec, protocol: str, event: str, repeat: int,
                 reason: str) -> RunResult:
    return RunResult(protocol=protocol, members=spec.members, partitions=spec.partitions,
                     event=event, repeat=repeat, status=RunStatus.UNSUPPORTED.value,
                     reason=reason, scenario=SCENARIO, params=spec.params())
