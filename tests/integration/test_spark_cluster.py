"""Both Spark jobs through ``spark-submit --master spark://...`` onto a standalone cluster.

The cluster (:class:`zkconsumer.testing.spark_cluster.SparkCluster`) is a master and two
workers from the pyspark wheel's jars; each job gets one executor on each worker (two cores
at most, one per executor) and runs the way docs/spark-cluster.md tells a user to: the application
file of the installed package, the executors' Python an environment where zkconsumer is
installed (``spark.pyspark.python``), ZooKeeper and the broker named with ``--zk`` and
``--bootstrap`` (the suite's servers, on this host), ``--out`` a folder every node sees. The
two jobs are submitted at once (the cluster holds both) and checked as a user would: the exit
status, the output tables, and Spark's own event log for where the tasks ran.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import zkconsumer.spark.herd.job as herd_job
import zkconsumer.spark.splitbrain.job as split_job
from zkconsumer.spark.herd.tables import TABLE_COLUMNS as HERD_COLUMNS
from zkconsumer.spark.splitbrain.table import TABLE_COLUMNS as SPLIT_COLUMNS
from zkconsumer.testing._process import ManagedProcess, tail
from zkconsumer.testing.spark_cluster import SparkCluster, read_event_log

# Safety nets for a hung job, not speed bounds: on a quiet two-core machine both jobs end
# within a few minutes, under load much later.
JOB_LIMIT_S = 1200.0
pytestmark = pytest.mark.timeout(1500)
SHUFFLE_PARTITIONS = "2"  # a submitted setting the jobs must keep (their default is 8)


@dataclass
class Submitted:
    """One job submitted: its output folder, event log folder, driver log and exit status."""

    out: Path
    events: Path
    log: Path
    code: int | None = None


@dataclass
class Runs:
    herd: Submitted
    split: Submitted
    workers: set[str]  # the workers' UIs, as the master lists them


def _submit(cluster: SparkCluster, job: object, name: str, root: Path,
            argv: list[str]) -> tuple[ManagedProcess, Submitted]:
    sub = Submitted(out=root / name, events=root / f"{name}-events", log=root / f"{name}.log")
    sub.events.mkdir(parents=True)
    conf = {
        # the executors run this environment's Python, where zkconsumer is installed
        "spark.pyspark.python": sys.executable,
        "spark.cores.max": "2",  # one executor on each worker
        "spark.scheduler.minRegisteredResourcesRatio": "1.0",  # both, before the first stage
        "spark.sql.shuffle.partitions": SHUFFLE_PARTITIONS,
        "spark.eventLog.enabled": "true",
        "spark.eventLog.compress": "false",
        "spark.eventLog.dir": sub.events.as_uri(),
    }
    app = Path(job.__file__)  # type: ignore[attr-defined]  # the installed package's file
    proc = cluster.submit(app, [*argv, "--out", str(sub.out)], sub.log, conf, cwd=root)
    return proc, sub


@pytest.fixture(scope="module")
def runs(zk_connect: str, broker: object, tmp_path_factory: pytest.TempPathFactory
         ) -> Iterator[Runs]:
    """One cluster; both jobs submitted at once, each waited for until it exits."""
    root = tmp_path_factory.mktemp("spark-cluster")
    servers = ["--zk", zk_connect, "--bootstrap", broker.bootstrap]  # type: ignore[attr-defined]
    fast = ["--partitions", "6", "--tasks", "2", "--session-timeout-ms", "2000",
            "--quiet-s", "1"]
    # two cores per worker: each job's executors take one on each
    with SparkCluster(workers=2, cores=2, memory_mb=1024) as cluster:
        herd = _submit(cluster, herd_job, "herd", root, [
            "--mode", "real", "--members", "4", "--protocols", "zk-range", "--events", "join",
            "--seeds", "1", *fast, *servers])
        split = _submit(cluster, split_job, "split", root, [
            "--mode", "real", "--members", "6", "--protocols", "zk-range",
            "--scenarios", "stale-view", "--idle-s", "2", "--rate", "30", *fast, *servers])
        try:
            for proc, sub in (herd, split):
                sub.code = proc.wait(JOB_LIMIT_S)
        finally:
            for proc, _ in (herd, split):
                proc.stop()
        yield Runs(herd[1], split[1], {w.ui for w in cluster.worker_infos()})


def _ran(sub: Submitted) -> None:
    assert sub.code == 0, f"spark-submit exited with {sub.code}:\n{tail(sub.log, 60)}"


def _rows(out: Path, columns: tuple[str, ...]) -> list[dict[str, str]]:
    with open(out / "sweep.csv", newline="") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames or ()) == columns
        return list(reader)


def _ran_on_both_workers(sub: Submitted, workers: set[str], app_name: str) -> None:
    assert len(workers) == 2
    app = read_event_log(sub.events)
    assert app.name == app_name
    # the job kept the submitted setting instead of its own default
    assert app.properties["spark.sql.shuffle.partitions"] == SHUFFLE_PARTITIONS
    # one executor on each worker, and the run's two barrier tasks one on each executor
    assert sorted(app.executors.values()) == sorted(workers)
    assert sorted(app.barrier_tasks) == sorted(app.executors)


def test_spark_submit_runs_the_herd_job_on_the_cluster(runs):
    sub = runs.herd
    _ran(sub)
    [row] = _rows(sub.out, HERD_COLUMNS)
    assert (row["mode"], row["protocol"], row["members"], row["partitions"], row["event"]) == \
        ("real", "zk-range", "4", "6", "join")
    # the group formed over both tasks, the join was applied and the group settled again
    assert row["tasks"] == "2" and row["settled"] == "true"
    # nothing lost; every delivery past the produced count is a counted duplicate
    assert int(row["produced"]) > 0 and row["lost"] == "0"
    assert int(row["delivered"]) == int(row["produced"]) + int(row["duplicates"])
    assert int(row["coordination_requests"]) > 0
    summary = (sub.out / "summary.md").read_text()
    assert "| real | zk-range | 6 | join | 4 | 1 |" in summary
    _ran_on_both_workers(sub, runs.workers, "zkconsumer-herd-real")


def test_spark_submit_runs_the_split_brain_job_on_the_cluster(runs):
    sub = runs.split
    _ran(sub)
    [row] = _rows(sub.out, SPLIT_COLUMNS)
    assert (row["mode"], row["protocol"], row["scenario"], row["members"]) == \
        ("real", "zk-range", "stale-view", "6")
    # applicable, formed (no reason given), observed to the end and drained: nothing lost
    assert row["applicable"] == "true" and row["reason"] == ""
    assert row["tasks"] == "2" and row["settled"] == "true" and row["drained"] == "true"
    # at least once: nothing lost, and a message consumed but not yet committed when its
    # partition was claimed again (by the same member: not in delivered_twice) may come twice
    assert int(row["produced"]) > 0 and int(row["delivered"]) >= int(row["produced"])
    assert row["lost"] == "0" and row["lost_for_good"] == "0" and row["verify_ok"] == "true"
    meta = json.loads((sub.out / "meta.json").read_text())["extra"]
    assert (meta["runs"], meta["failed_runs"], meta["lost_runs"]) == (1, 0, 0)
    _ran_on_both_workers(sub, runs.workers, "zkconsumer-split-brain-real")
