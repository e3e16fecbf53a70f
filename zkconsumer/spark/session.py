"""One SparkSession for a job: ``local[*]`` unless a master is given, quiet, small shuffles.

Executors must run the same Python as the driver (the one with zkconsumer installed), so the
session sets ``PYSPARK_PYTHON`` to ``sys.executable`` unless the environment already chose one,
which is what a cluster with its own Python layout does (``spark-submit --conf
spark.pyspark.python=...`` sets it for the driver).

Under ``spark-submit`` the session's settings are defaults only, so that the submitter keeps
control of its cluster: the UI and the console progress bar stay Spark's (the UI on), and
``spark.sql.shuffle.partitions`` is set only when no ``--conf`` gave it. Speculation is off
whoever starts the job: a real-mode task hosts consumers for minutes, and a speculative copy
would host them twice.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_MASTER = "local[*]"
REQUIRED = {"spark.speculation": "false"}
QUIET = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"


def spark_session(master: str | None = None, app: str = "zkconsumer",
                  shuffle_partitions: int = 8, extra: dict[str, str] | None = None) -> Any:
    """Get (or create) the session; ``master=None`` keeps what spark-submit configured.
    ``extra`` settings are applied as given."""
    from pyspark.sql import SparkSession

    submitted = _submitted()
    builder = SparkSession.builder.appName(app)
    if master:
        builder = builder.master(master)
    elif not submitted:
        builder = builder.master(DEFAULT_MASTER)
    conf = {**REQUIRED, **(extra or {})}
    if not submitted:
        conf = {**QUIET, SHUFFLE_PARTITIONS: str(shuffle_partitions), **conf}
    if "PYSPARK_PYTHON" not in os.environ:
        # PySpark takes the workers' interpreter from the environment of the driver process.
        os.environ["PYSPARK_PYTHON"] = sys.executable
    for key, value in conf.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    if submitted and not session.sparkContext.getConf().contains(SHUFFLE_PARTITIONS):
        session.conf.set(SHUFFLE_PARTITIONS, str(shuffle_partitions))
    session.sparkContext.setLogLevel("ERROR")
    log.info("spark session on %s (parallelism %d)", session.sparkContext.master,
             session.sparkContext.defaultParallelism)
    return session


@contextlib.contextmanager
def session_for(spark: Any, master: str | None, app: str) -> Iterator[Any]:
    """The job's session: ``spark`` as given (a caller's, e.g. a test's, left running), or one
    created by :func:`spark_session` and stopped when the job ends."""
    if spark is not None:
        yield spark
        return
    own = spark_session(master, app=app)
    try:
        yield own
    finally:
        own.stop()


def _submitted() -> bool:
    """Whether spark-submit started this process (it sets the master for us)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ
