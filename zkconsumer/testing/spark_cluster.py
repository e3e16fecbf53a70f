"""A Spark standalone cluster on 127.0.0.1 from the pyspark wheel's own jars: one master and
its workers, each a process of its own, so that a job submitted with ``spark-submit --master
spark://...`` runs the way it would on a real cluster: separate executor JVMs, launched by the
workers, each with its own Python workers, reached over the network from a separate driver.

>>> with SparkCluster(workers=2) as cluster:
...     subprocess.run(cluster.submit_argv("job.py", ["--out", "DIR"]), env=cluster.submit_env())

The daemons are started through the wheel's ``bin/spark-class`` (the launcher Spark's own
scripts use, which adds the JVM options Java 17 needs), with ``SPARK_HOME`` the wheel, a
configuration folder of its own (nothing from the machine's Spark leaks in; Spark logs at WARN
but for the cluster's lifecycle) and everything bound to 127.0.0.1. They are managed like the
project's other servers (:mod:`._process`): own session, parent-death signal, stopped at exit.
A worker's executors and their Python workers are its children, in its process group, so
stopping the worker stops them too. Readiness is read from the master's JSON status page
(``http://127.0.0.1:UI/json/``): the master answering ALIVE, then every worker registered
ALIVE. Spark's event log of a job (``spark.eventLog.compress=false``) says where its tasks ran
(:func:`read_event_log`).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from zkconsumer.errors import ServerError
from zkconsumer.testing._process import ManagedProcess, free_port
from zkconsumer.testing.zookeeper import find_java, pyspark_jars_dir

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
START_TIMEOUT_S = 180.0  # three JVMs on a loaded two-core machine
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
# The daemons only schedule: a small heap and the cheapest collector and JIT.
DAEMON_MEMORY = "256m"
DAEMON_JAVA_OPTS = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
# Spark refuses executors under 450 MiB; a job's tasks host members, not data.
EXECUTOR_MEMORY = "512m"
# Spark's own log configuration: warnings, and the cluster's lifecycle (executors granted,
# workers registered, applications finished) from org.apache.spark.deploy at INFO; for the
# daemons, the drivers submitted with submit_env() and their executors alike.
LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.deploy.name = org.apache.spark.deploy
logger.deploy.level = info
"""
# Environment the cluster must not inherit: another Spark's or the caller's Python settings.
_INHERITED_OFF = ("SPARK_", "PYSPARK_", "PYTHONPATH")


def spark_home() -> Path:
    """The installed pyspark wheel, which is a Spark home: ``jars/``, ``bin/spark-class``,
    ``bin/spark-submit``."""
    home = pyspark_jars_dir().parent
    if not (home / "bin" / "spark-class").is_file():
        raise ServerError(f"no bin/spark-class in {home}; reinstall pyspark")
    return home


@dataclass(frozen=True)
class WorkerInfo:
    """A worker as the master lists it."""

    worker_id: str
    ui: str        # its web UI, where the master and the executors' log links point
    cores: int
    state: str


def parse_master_status(status: Mapping[str, Any]) -> list[WorkerInfo]:
    """The workers of a master's ``/json/`` answer."""
    return [WorkerInfo(w["id"], w["webuiaddress"], int(w["cores"]), w["state"])
            for w in status.get("workers", [])]


class SparkCluster:
    """A master and ``workers`` workers, each offering ``cores`` cores and ``memory_mb`` MiB to
    executors; logs, configuration and the workers' work folders (the executors' stdout and
    stderr, per application) under one scratch folder, removed on close."""

    host = HOST

    def __init__(self, workers: int = 2, cores: int = 1, memory_mb: int = 1024) -> None:
        if workers < 1:
            raise ValueError(f"a cluster needs at least one worker, got workers={workers}")
        if cores < 1:
            raise ValueError(f"each worker needs at least one core, got cores={cores}")
        if memory_mb < 512:
            raise ValueError(f"each worker needs memory_mb >= 512 (one executor of "
                             f"{EXECUTOR_MEMORY}), got {memory_mb}")
        self.workers = workers
        self.cores = cores
        self.memory_mb = memory_mb
        self.root = Path(tempfile.mkdtemp(prefix="zkconsumer-spark-"))
        self.home = spark_home()
        self.port = free_port()
        self.ui_port = free_port()
        self._master: ManagedProcess | None = None
        self._workers: list[ManagedProcess] = []

    @property
    def master_url(self) -> str:
        return f"spark://{self.host}:{self.port}"

    @property
    def master_ui(self) -> str:
        return f"http://{self.host}:{self.ui_port}"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def work_dir(self, worker: int) -> Path:
        """Worker ``worker``'s work folder: ``<app id>/<executor id>/{stdout,stderr}``."""
        return self.root / f"worker-{worker}"

    def daemon_env(self) -> dict[str, str]:
        """The daemons' environment: this Spark home, a configuration of its own (nothing but the
    log settings), loopback only."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(_INHERITED_OFF)}
        conf = self.root / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        (conf / "log4j2.properties").write_text(LOG4J2)
        env.update(SPARK_HOME=str(self.home), SPARK_CONF_DIR=str(conf),
                   SPARK_LOCAL_IP=self.host, SPARK_DAEMON_MEMORY=DAEMON_MEMORY,
                   SPARK_DAEMON_JAVA_OPTS=DAEMON_JAVA_OPTS)
        return env

    def submit_env(self) -> dict[str, str]:
        """The environment for ``spark-submit`` against this cluster (the same Spark home and
        configuration; the driver on loopback, where the executors reach it)."""
        env = self.daemon_env()
        for key in ("SPARK_DAEMON_MEMORY", "SPARK_DAEMON_JAVA_OPTS"):
            env.pop(key)
        return env

    def submit_argv(self, app: str | Path, app_args: Sequence[str] = (),
                    conf: Mapping[str, str] | None = None) -> list[str]:
        """``spark-submit --master spark://... --conf k=v ... APP ARGS``: executors of
        ``EXECUTOR_MEMORY`` and one core, so that a job's tasks spread over the workers."""
        settings = {"spark.executor.memory": EXECUTOR_MEMORY, "spark.executor.cores": "1",
                    "spark.driver.memory": EXECUTOR_MEMORY, **(conf or {})}
        confs = [x for k, v in settings.items() for x in ("--conf", f"{k}={v}")]
        return [str(self.home / "bin" / "spark-submit"), "--master", self.master_url, *confs,
                str(app), *app_args]

    def submit(self, app: str | Path, app_args: Sequence[str], log_path: Path,
               conf: Mapping[str, str] | None = None, cwd: Path | None = None
               ) -> ManagedProcess:
        """Start ``spark-submit`` of ``app`` onto this cluster, managed like a server (stopped
        with the test run); the driver's output, the job's own included, goes to
        ``log_path``. The caller waits for it (``wait``) and stops it."""
        proc = ManagedProcess(f"spark-submit-{Path(app).stem}",
                              self.submit_argv(app, app_args, conf), log_path,
                              env=self.submit_env(), cwd=cwd or self.root)
        proc.start()
        return proc

    def status(self) -> dict[str, Any]:
        """The master's ``/json/`` answer (workers, running and completed applications)."""
        with urllib.request.urlopen(f"{self.master_ui}/json/", timeout=5) as resp:
            return json.loads(resp.read().decode())  # type: ignore[no-any-return]

    def worker_infos(self) -> list[WorkerInfo]:
        return parse_master_status(self.status())

    def _answer(self) -> dict[str, Any] | None:
        try:
            return self.status()
        except (OSError, urllib.error.URLError, ValueError):
            return None

    def _class_argv(self, main_class: str, *args: str) -> list[str]:
        find_java()  # a clear error before bash says "JAVA_HOME is not set"
        return [str(self.home / "bin" / "spark-class"), main_class, *args]

    def start(self) -> SparkCluster:
        started = time.monotonic()
        env = self.daemon_env()
        self._master = ManagedProcess(
            f"spark-master-{self.port}",
            self._class_argv(MASTER_CLASS, "--host", self.host, "--port", str(self.port),
                             "--webui-port", str(self.ui_port)),
            self.logs / "master.log", env=env, cwd=self.root)
        self._master.start()
        self._master.wait_until(lambda: (self._answer() or {}).get("status") == "ALIVE",
                                START_TIMEOUT_S, f"Spark master on {self.master_url}")
        for k in range(self.workers):
            self.work_dir(k).mkdir(parents=True, exist_ok=True)
            proc = ManagedProcess(
                f"spark-worker-{self.port}-{k}",
                self._class_argv(WORKER_CLASS, "--host", self.host, "--cores", str(self.cores),
                                 "--memory", f"{self.memory_mb}m", "--work-dir",
                                 str(self.work_dir(k)), "--webui-port", str(free_port()),
                                 self.master_url),
                self.logs / f"worker-{k}.log", env=env, cwd=self.root)
            proc.start()
            self._workers.append(proc)
        self._master.wait_until(self._all_registered, START_TIMEOUT_S,
                                f"{self.workers} Spark workers registered with "
                                f"{self.master_url}")
        log.info("Spark standalone cluster at %s: %d workers x %d cores (%.1f s)",
                 self.master_url, self.workers, self.cores, time.monotonic() - started)
        return self

    def _all_registered(self) -> bool:
        for k, proc in enumerate(self._workers):
            if not proc.alive():
                raise ServerError(f"Spark worker {k} exited with code {proc.returncode()}; "
                                  f"see {proc.log_path}")
        answer = self._answer()
        if answer is None:
            return False
        alive = [w for w in parse_master_status(answer) if w.state == "ALIVE"]
        return len(alive) >= self.workers

    def alive(self) -> bool:
        procs = [self._master, *self._workers]
        return all(p is not None and p.alive() for p in procs)

    def stop(self) -> None:
        """Workers first (each takes its executors and their Python workers with it), then the
        master. Idempotent."""
        for proc in self._workers:
            proc.stop()
        self._workers = []
        if self._master is not None:
            self._master.stop()
            self._master = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> SparkCluster:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


@dataclass
class AppLog:
    """What Spark's event log says about one application."""

    name: str = ""
    executors: dict[str, str] = field(default_factory=dict)  # executor id -> its worker's UI
    barrier_tasks: list[str] = field(default_factory=list)   # executor id of each such task
    properties: dict[str, str] = field(default_factory=dict)


def read_event_log(folder: Path) -> AppLog:
    """The application whose (uncompressed: ``spark.eventLog.compress=false``) event log files
    are under ``folder``: its executors, with the worker whose UI serves their logs, and the
    executor of every successful task of a barrier stage (the stages that host a real run's
    members). Where the tasks ran is what a user checks on a cluster. Hidden files (the
    local file system's ``.crc`` checksums) and the ``appstatus`` marker are not events."""
    return app_log(json.loads(line) for path in sorted(folder.rglob("*"))
                   if path.is_file() and not path.name.startswith(("appstatus", "."))
                   for line in path.read_text().splitlines() if line.strip())


def app_log(events: Iterable[Mapping[str, Any]]) -> AppLog:
    """:func:`read_event_log` over the parsed events, in order."""
    app = AppLog()
    barrier_stages: set[int] = set()
    for e in events:
        kind = e["Event"]
        if kind == "SparkListenerApplicationStart":
            app.name = e["App Name"]
        elif kind == "SparkListenerEnvironmentUpdate":
            app.properties = dict(e["Spark Properties"])
        elif kind == "SparkListenerExecutorAdded":
            url = e["Executor Info"]["Log Urls"]["stdout"]
            app.executors[e["Executor ID"]] = url.split("/logPage/")[0]
        elif kind == "SparkListenerStageSubmitted":
            info = e["Stage Info"]
            if any(rdd.get("Barrier") for rdd in info["RDD Info"]):
                barrier_stages.add(info["Stage ID"])
        elif kind == "SparkListenerTaskEnd" and e["Stage ID"] in barrier_stages:
            task = e["Task Info"]
            if not (task["Failed"] or task["Killed"]):
                app.barrier_tasks.append(task["Executor ID"])
    return app
