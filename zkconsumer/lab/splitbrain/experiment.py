"""Run one split-brain scenario over several protocols (what the CLI verb does).

Every (protocol, repeat) is one run on a fresh topic and group. A run that raises is recorded
as ``failed`` with its error and the next one starts; a protocol a scenario does not apply to is
``unsupported`` with the reason. Every result names the broker it ran against.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from zkconsumer.lab.drivers import get_driver
from zkconsumer.lab.probe import broker_identity
from zkconsumer.lab.progress import Progress
from zkconsumer.lab.runner import Servers, servers_for
from zkconsumer.lab.spec import ExperimentSpec, RunResult, RunStatus
from zkconsumer.lab.splitbrain.failover import FailoverCluster, failover_events, run_failover
from zkconsumer.lab.splitbrain.spec import SCENARIO, SplitBrainSpec
from zkconsumer.lab.splitbrain.stale_view import run_stale_view
from zkconsumer.lab.splitbrain.zombie import run_zombie

log = logging.getLogger(__name__)


def _runs(spec: SplitBrainSpec) -> list[tuple[str, str, int]]:
    """``(protocol, event, repeat)`` in the order they run."""
    events = failover_events() if spec.scenario == "failover" else (spec.scenario,)
    return [(p, e, r) for r in range(spec.repeat) for e in events for p in spec.protocols]


@contextlib.contextmanager
def _servers(spec: SplitBrainSpec) -> Iterator[Servers]:
    with servers_for(ExperimentSpec(zk_connect=spec.zk_connect, bootstrap=spec.bootstrap,
                                    broker=spec.broker)) as s:
        yield s


def run_split_brain(spec: SplitBrainSpec,
                    on_result: Callable[[list[RunResult]], None] | None = None,
                    progress_stream: TextIO | None = None) -> list[RunResult]:
    """Every run of the scenario; failures are results, never raised."""
    spec.validate()
    out_dir = Path(spec.out_dir) if spec.out_dir else Path(tempfile.mkdtemp(prefix="zksplit-"))
    runs = _runs(spec)
    progress = Progress(len(runs), enabled=spec.progress, stream=progress_stream)
    results: list[RunResult] = []
    progress.update("starting servers")
    with _servers(spec) as servers, contextlib.ExitStack() as stack:
        broker = servers.broker_name or broker_identity(servers.bootstrap)
        cluster: FailoverCluster | None = None
        for i, (protocol, event, repeat) in enumerate(runs):
            label = f"{protocol}/{event}/r{repeat}"
            progress.update(f"{label}: running", done=i)
            records_dir = out_dir / "runs" / f"{protocol}-{event}-r{repeat}"
            try:
                if spec.scenario == "failover" and get_driver(protocol).family != "zookeeper":
                    result = _unsupported(spec, protocol, event, repeat,
                                          "a broker-coordinated group does not use ZooKeeper: "
                                          "the ensemble's leader can die without it noticing")
                elif spec.scenario == "failover":
                    if cluster is None:
                        progress.update("starting a 3-server ZooKeeper ensemble", done=i)
                        cluster = stack.enter_context(FailoverCluster(servers.bootstrap))
                    result = run_failover(spec, protocol, event, repeat, cluster, records_dir)
                elif spec.scenario == "zombie":
                    result = run_zombie(spec, protocol, repeat, servers, records_dir)
                else:
                    result = run_stale_view(spec, protocol, repeat, servers, records_dir)
            except Exception as exc:
                log.exception("run %s failed", label)
                progress.note(f"run {label} FAILED: {exc!r} (the other runs go on)")
                result = RunResult(protocol=protocol, members=spec.members,
                                   partitions=spec.partitions, event=event, repeat=repeat,
                                   status=RunStatus.FAILED.value, reason=repr(exc),
                                   details={"traceback": traceback.format_exc()},
                                   scenario=SCENARIO, params=spec.params())
            result.details.setdefault("broker", broker)
            results.append(result)
            if on_result is not None:
                on_result(list(results))
        progress.update("done", done=len(runs))
    progress.close()
    return results


def _unsupported(spec: SplitBrainSpec, protocol: str, event: str, repeat: int,
                 reason: str) -> RunResult:
    return RunResult(protocol=protocol, members=spec.members, partitions=spec.partitions,
                     event=event, repeat=repeat, status=RunStatus.UNSUPPORTED.value,
                     reason=reason, scenario=SCENARIO, params=spec.params())
