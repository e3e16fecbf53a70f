"""``spark cluster start``: a Spark standalone cluster on this machine until Ctrl-C.

    zkconsumer spark cluster start [--workers 2] [--cores 1] [--memory-mb 1024]

A master and its workers from the pyspark wheel's own jars (no Spark download), on 127.0.0.1,
for trying the Spark jobs under ``spark-submit --master spark://...`` the way a cluster runs
them (docs/spark-cluster.md); the integration suite starts the same cluster.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(verbs: Any) -> None:
    cluster = verbs.add_parser(
        "cluster", help="a Spark standalone cluster (master + workers) on this machine")
    cverbs = cluster.add_subparsers(dest="cluster_verb", metavar="SUBVERB")
    cverbs.required = True
    start = cverbs.add_parser(
        "start", help="start a master and its workers until Ctrl-C",
        description="A Spark standalone master and --workers workers on 127.0.0.1, from the "
                    "pyspark wheel's jars; prints the master URL and the spark-submit to use.")
    start.add_argument("--workers", type=int, default=2, help="workers (default: 2)")
    start.add_argument("--cores", type=int, default=1,
                       help="cores each worker offers executors (default: 1)")
    start.add_argument("--memory-mb", type=int, default=1024,
                       help="memory each worker offers executors, MiB (default: 1024)")
    start.set_defaults(func=cluster_start)


def cluster_start(args: argparse.Namespace) -> int:
    from zkconsumer.cli.servers import wait_for_ctrl_c
    from zkconsumer.testing.spark_cluster import SparkCluster

    try:
        cluster = SparkCluster(workers=args.workers, cores=args.cores,
                               memory_mb=args.memory_mb)
    except ValueError as exc:
        print(f"zkconsumer: error: {exc}", file=sys.stderr)
        return 2
    with cluster:
        print(f"Spark master {cluster.master_url} (UI {cluster.master_ui}), {args.workers} "
              f"workers x {args.cores} cores; logs in {cluster.logs}; Ctrl-C to stop",
              flush=True)
        print(f"submit with: SPARK_HOME={cluster.home} {cluster.home}/bin/spark-submit "
              f"--master {cluster.master_url} --conf spark.pyspark.python={sys.executable} "
              "APP.py ARGS", flush=True)
        wait_for_ctrl_c()
    return 0
