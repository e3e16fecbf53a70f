"""One SparkSession for a job: ``local[*]`` unless a master is given, quiet, small shuffles.

Executors must run the same Python as the driver (the one with zkconsumer installed), so the
session sets ``PYSPARK_PYTHON`` to ``sys.executable`` unless the environment already chose one,
which is what a cluster with its own Python layout does (``spark-submit --conf
spark.pyspark.python=...`` sets it for the driver).

Under ``spark-submit`` the session's settings are defaults only: a key given with ``--conf``
(``spark.ui.enabled=true`` to watch a job on a cluster, ``spark.sql.shuffle.partitions``...)
keeps the submitted value.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_MASTER = "local[*]"
# Settings a submitted configuration cannot change: a real-mode task hosts consumers for
# minutes, and a speculative copy would host them twice.
REQUIRED = ("spark.speculation",)


def spark_session(master: str | None = None, app: str = "zkconsumer",
                  shuffle_partitions: int = 8, extra: dict[str, str] | None = None) -> Any:
    """Get (or create) the session; ``master=None`` keeps what spark-submit configured."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app)
    if master:
        builder = builder.master(master)
    elif not _submitted():
        builder = builder.master(DEFAULT_MASTER)
    conf = {
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": str(shuffle_partitions),
        "spark.ui.showConsoleProgress": "false",
        "spark.speculation": "false",
        **(extra or {}),
    }
    if _submitted():
        conf = {k: v for k, v in conf.items()
                if k in REQUIRED or k not in _submitted_keys(conf)}
    if "PYSPARK_PYTHON" not in os.environ:
        # PySpark takes the workers' interpreter from the environment of the driver process.
        os.environ["PYSPARK_PYTHON"] = sys.executable
    for key, value in conf.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    log.info("spark session on %s (parallelism %d)", session.sparkContext.master,
             session.sparkContext.defaultParallelism)
    return session


def _submitted() -> bool:
    """Whether spark-submit started this process (it sets the master for us)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def _submitted_keys(keys: Any) -> set[str]:
    """Which of ``keys`` spark-submit's configuration already sets (``--conf``,
    ``spark-defaults.conf``)."""
    from pyspark import SparkConf

    submitted = SparkConf()  # loads spark-submit's settings from the driver's JVM
    return {k for k in keys if submitted.contains(k)}
