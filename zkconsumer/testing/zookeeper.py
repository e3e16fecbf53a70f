"""Real ZooKeeper servers from the jars inside the installed ``pyspark`` wheel.

``EmbeddedZooKeeper`` runs one standalone server, ``EmbeddedEnsemble`` a real quorum of
``QuorumPeerMain`` processes on 127.0.0.1. Both need only a Java 17+ runtime: the pyspark wheel
already carries ZooKeeper 3.9 and every jar it needs, so no download and no Docker are involved.

SASL: ``EmbeddedZooKeeper(sasl_users={"alice": "secret"})`` serves SASL DIGEST-MD5 clients
(``zookeeper.auth=sasl:alice:secret``): a JAAS file with a ``Server`` section listing the users
(``DigestLoginModule``), ``-Djava.security.auth.login.config`` pointing at it, and
``authProvider.sasl=...SASLAuthenticationProvider`` in ``zoo.cfg`` (ZooKeeper turns every unknown
``zoo.cfg`` key into a ``zookeeper.``-prefixed system property, which is where it looks for
authentication providers). The JAAS file is readable by its owner only; no password is logged.

Session timeouts: ZooKeeper clamps a client's requested timeout into
[minSessionTimeout, maxSessionTimeout], by default [2, 20] ticks. Experiments ask for anything
from 1 s to 60 s and must get exactly that, so both bounds are configured explicitly.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

from zkconsumer.errors import JavaNotFound, ServerError
from zkconsumer.testing._process import ManagedProcess, ensure_port_free, free_port

log = logging.getLogger(__name__)

MIN_SESSION_TIMEOUT_MS = 1000
MAX_SESSION_TIMEOUT_MS = 60000
START_TIMEOUT_S = 60.0

# The jars ZooKeeper's server needs. Without snappy-java the server starts but never serves.
_JAR_PREFIXES = (
    "zookeeper-", "zookeeper-jute-", "slf4j-api-", "log4j-slf4j2-impl-", "log4j-api-",
    "log4j-core-", "netty-", "metrics-core-", "snappy-java-", "commons-io-", "commons-cli-",
    "audience-annotations-", "jline-",
)

_LOG4J2 = """\
status = error
appender.file.type = Console
appender.file.name = out
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{ISO8601} %-5p [%t] %c{1}: %m%n
rootLogger.level = {level}
rootLogger.appenderRef.out.ref = out
"""

SASL_PROVIDER = "org.apache.zookeeper.server.auth.SASLAuthenticationProvider"
_DIGEST_LOGIN_MODULE = "org.apache.zookeeper.server.auth.DigestLoginModule"
# JAAS option names are bare tokens: a user name outside this set would break the file.
_JAAS_USER = re.compile(r"[A-Za-z0-9_.-]+")


def find_java() -> str:
    """The ``java`` executable, or a one-line JavaNotFound naming what to install."""
    java = shutil.which("java")
    if java is None:
        raise JavaNotFound(
            "java not found on PATH: the embedded ZooKeeper needs a Java 17+ runtime "
            "(e.g. 'apt-get install openjdk-17-jre-headless'), or point zookeeper.connect / "
            "ZKCONSUMER_ZK at an existing ZooKeeper"
        )
    return java


def pyspark_jars_dir() -> Path:
    """``pyspark/jars`` of the installed pyspark wheel, found without importing pyspark.

    Under ``spark-submit`` the driver imports pyspark from ``$SPARK_HOME/python/lib/
    pyspark.zip``, which holds no jars: there the jars are ``$SPARK_HOME/jars``.
    """
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise ServerError("the pyspark package is not installed; it ships the ZooKeeper jars")
    jars = Path(next(iter(spec.submodule_search_locations))) / "jars"
    submitted = Path(os.environ.get("SPARK_HOME", "")) / "jars"
    if not jars.is_dir() and os.environ.get("SPARK_HOME") and submitted.is_dir():
        jars = submitted
    if not any(jars.glob("zookeeper-*.jar")):
        raise ServerError(f"no zookeeper-*.jar in {jars}; reinstall pyspark")
    return jars


def classpath() -> str:
    """A trimmed class path (starts ~2x faster than ``jars/*``); falls back to all jars."""
    jars = pyspark_jars_dir()
    picked = sorted(
        str(j) for j in jars.glob("*.jar") if j.name.startswith(_JAR_PREFIXES)
    )
    names = " ".join(picked)
    if "snappy-java" in names and "metrics-core" in names and "netty-handler" in names:
        return ":".join(picked)
    return str(jars / "*")


def four_letter(host: str, port: int, cmd: str, timeout: float = 2.0) -> str:
    """Send one of ZooKeeper's four-letter commands (``ruok``, ``srvr``, ``mntr``, ...)."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(cmd.encode("ascii"))
        chunks = []
        while True:
            data = sock.recv(65536)
            if not data:
                break
            chunks.append(data)
    return b"".join(chunks).decode("utf-8", errors="replace")


def release_from_mntr(mntr: str) -> str:
    """The server's release from a ``mntr`` answer (``zk_version<TAB>3.9.2-<sha>, built on
    ...``); empty when the answer has none."""
    for line in mntr.splitlines():
        key, _, value = line.partition("\t")
        if key.strip() == "zk_version":
            return value.split(",")[0].split("-")[0].strip()
    return ""


def embedded_release() -> str:
    """The release of the ZooKeeper jar the embedded server runs (``zookeeper-3.9.5.jar``),
    read from the file name so that no server has to be asked; empty without the jars."""
    try:
        jars = pyspark_jars_dir()
    except ServerError:
        return ""
    for jar in sorted(jars.glob("zookeeper-*.jar")):
        release = jar.stem.removeprefix("zookeeper-")
        if release[:1].isdigit():
            return release
    return ""


def server_release(zk_connect: str) -> str:
    """The release the first server of ``zk_connect`` reports in ``mntr``; empty when it does
    not answer or refuses ``mntr`` (a 4lw whitelist without it), so that provenance never stops
    a run."""
    first = zk_connect.split(",")[0].split("/")[0]
    host, _, port = first.rpartition(":")
    try:
        return release_from_mntr(four_letter(host, int(port), "mntr"))
    except (OSError, ValueError) as exc:
        log.warning("mntr on %s failed, the ZooKeeper version is recorded as unknown: %s",
                    first, exc)
        return ""


def _serving(host: str, port: int) -> bool:
    # ``ruok`` answers before the database is loaded; ``srvr`` only once the server serves.
    try:
        return "Mode:" in four_letter(host, port, "srvr", timeout=1.0)
    except OSError:
        return False


def _java_argv(main_class: str, cfg: Path, log_cfg: Path,
               jaas: Path | None = None) -> list[str]:
    extra = [f"-Djava.security.auth.login.config={jaas}"] if jaas is not None else []
    return [
        find_java(), "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        "-Dzookeeper.jmx.log4j.disable=true", "-Dzookeeper.admin.enableServer=false",
        f"-Dlog4j2.configurationFile={log_cfg}", *extra, "-cp", classpath(), main_class,
        str(cfg),
    ]


def _check_sasl_users(users: Mapping[str, str]) -> dict[str, str]:
    """The SASL users as a plain dict; a clear error for a name or password JAAS cannot hold."""
    if not users:
        raise ValueError("sasl_users must name at least one user (or be None for no SASL)")
    for user, password in users.items():
        if not isinstance(user, str) or not _JAAS_USER.fullmatch(user):
            raise ValueError(f"SASL user name {user!r} must match {_JAAS_USER.pattern}")
        if not isinstance(password, str) or not password or "\n" in password:
            raise ValueError(f"the password of SASL user {user!r} must be a non-empty "
                             "single-line string")
    return dict(users)


def jaas_server_section(users: Mapping[str, str]) -> str:
    """A JAAS ``Server`` section that lets ``users`` in by SASL DIGEST-MD5.

    ZooKeeper's ``DigestLoginModule`` reads one ``user_<name>="<password>"`` option per user;
    quotes and backslashes in a password are escaped because JAAS parses quoted strings.
    """
    def quoted(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    options = "".join(f"\n    user_{user}={quoted(password)}"
                      for user, password in _check_sasl_users(users).items())
    return f"Server {{\n    {_DIGEST_LOGIN_MODULE} required{options};\n}};\n"


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` readable by its owner only (the JAAS file holds passwords)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)


def _base_config(tick_ms: int, data_dir: Path) -> list[str]:
    return [
        f"tickTime={tick_ms}",
        f"dataDir={data_dir}",
        "maxClientCnxns=0",
        "admin.enableServer=false",
        "4lw.commands.whitelist=*",
        f"minSessionTimeout={MIN_SESSION_TIMEOUT_MS}",
        f"maxSessionTimeout={MAX_SESSION_TIMEOUT_MS}",
        "autopurge.purgeInterval=0",
    ]


class EmbeddedZooKeeper:
    """A standalone ZooKeeper server on 127.0.0.1.

    >>> with EmbeddedZooKeeper() as zk:
    ...     client = KazooClient(zk.connect_string)

    ``restart()`` keeps the data (persistent znodes survive; sessions expire as usual).
    ``sasl_users`` (user name → password) also accepts SASL DIGEST-MD5 clients (see the module
    docstring); without it the server knows no SASL, as before.
    """

    host = "127.0.0.1"

    def __init__(self, port: int | None = None, data_dir: str | Path | None = None,
                 tick_ms: int = 500, log_level: str = "warn",
                 sasl_users: Mapping[str, str] | None = None) -> None:
        self._sasl_users = _check_sasl_users(sasl_users) if sasl_users is not None else None
        if port is not None:
            ensure_port_free(port, "ZooKeeper")
        self.port = port or free_port()
        self.tick_ms = tick_ms
        self._own_dir = data_dir is None
        self._root = Path(tempfile.mkdtemp(prefix="zkconsumer-zk-")) if data_dir is None \
            else Path(data_dir)
        self.data_dir = self._root / "data" if self._own_dir else self._root
        self.log_path = self._root / "zookeeper.log" if self._own_dir \
            else Path(tempfile.mkdtemp(prefix="zkconsumer-zklog-")) / "zookeeper.log"
        self._log_level = log_level
        self._proc: ManagedProcess | None = None

    @property
    def connect_string(self) -> str:
        return f"{self.host}:{self.port}"

    def _write_sasl_files(self) -> tuple[list[str], Path | None]:
        """The extra ``zoo.cfg`` lines and the JAAS file for SASL; nothing without SASL."""
        if self._sasl_users is None:
            return [], None
        jaas = self.log_path.parent / "jaas.conf"
        _write_private(jaas, jaas_server_section(self._sasl_users))
        return [f"authProvider.sasl={SASL_PROVIDER}"], jaas

    def start(self) -> EmbeddedZooKeeper:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        sasl_lines, jaas = self._write_sasl_files()
        cfg = self.log_path.parent / "zoo.cfg"
        cfg.write_text("\n".join(
            [*_base_config(self.tick_ms, self.data_dir), f"clientPort={self.port}",
             f"clientPortAddress={self.host}", *sasl_lines]) + "\n")
        log_cfg = self.log_path.parent / "log4j2.properties"
        log_cfg.write_text(_LOG4J2.replace("{level}", self._log_level))
        argv = _java_argv("org.apache.zookeeper.server.ZooKeeperServerMain", cfg, log_cfg, jaas)
        self._proc = ManagedProcess(f"zookeeper-{self.port}", argv, self.log_path)
        started = time.monotonic()
        self._proc.start()
        self._proc.wait_until(lambda: _serving(self.host, self.port), START_TIMEOUT_S,
                              f"ZooKeeper on {self.connect_string}")
        log.info("ZooKeeper serving on %s%s (%.1f s)", self.connect_string,
                 " with SASL" if jaas is not None else "", time.monotonic() - started)
        return self

    def four_letter(self, cmd: str) -> str:
        return four_letter(self.host, self.port, cmd)

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs (its CPU time is read from ``/proc``)."""
        return self._proc.pid if self._proc is not None else None

    def alive(self) -> bool:
        return self._proc is not None and self._proc.alive()

    def stop(self) -> None:
        """Stop the server; its data stays until the context exits. Idempotent."""
        if self._proc is not None:
            self._proc.stop()
            self._proc = None

    def kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def close(self) -> None:
        self.stop()
        if self._own_dir:
            shutil.rmtree(self._root, ignore_errors=True)

    def __enter__(self) -> EmbeddedZooKeeper:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class EmbeddedEnsemble:
    """A real ZooKeeper quorum of ``size`` servers (ids 1..size) on 127.0.0.1."""

    host = "127.0.0.1"

    def __init__(self, size: int = 3, tick_ms: int = 500, log_level: str = "warn") -> None:
        if size < 1:
            raise ValueError(f"ensemble size must be >= 1, got {size}")
        self.size = size
        self.tick_ms = tick_ms
        self._log_level = log_level
        self._root = Path(tempfile.mkdtemp(prefix="zkconsumer-ensemble-"))
        self.client_ports = {sid: free_port() for sid in range(1, size + 1)}
        self._peer_ports = {sid: (free_port(), free_port()) for sid in range(1, size + 1)}
        self._procs: dict[int, ManagedProcess] = {}

    @property
    def connect_string(self) -> str:
        return ",".join(f"{self.host}:{p}" for p in self.client_ports.values())

    def server_connect_string(self, server_id: int) -> str:
        return f"{self.host}:{self.client_ports[server_id]}"

    def _write_config(self, sid: int) -> Path:
        sdir = self._root / f"server{sid}"
        data = sdir / "data"
        data.mkdir(parents=True, exist_ok=True)
        (data / "myid").write_text(f"{sid}\n")
        lines = [*_base_config(self.tick_ms, data), f"clientPort={self.client_ports[sid]}",
                 f"clientPortAddress={self.host}", "initLimit=20", "syncLimit=10"]
        for other, (quorum, election) in self._peer_ports.items():
            lines.append(f"server.{other}={self.host}:{quorum}:{election}")
        cfg = sdir / "zoo.cfg"
        cfg.write_text("\n".join(lines) + "\n")
        (sdir / "log4j2.properties").write_text(_LOG4J2.replace("{level}", self._log_level))
        return cfg

    def _launch(self, sid: int) -> ManagedProcess:
        cfg = self._write_config(sid)
        argv = _java_argv("org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg,
                          cfg.parent / "log4j2.properties")
        proc = ManagedProcess(f"zookeeper-{sid}", argv, cfg.parent / "zookeeper.log")
        proc.start()
        self._procs[sid] = proc
        return proc

    def start(self, server_id: int | None = None) -> EmbeddedEnsemble:
        """Start every server (no argument) or one previously killed server."""
        ids = [server_id] if server_id is not None else list(self.client_ports)
        for sid in ids:
            if sid not in self.client_ports:
                raise ValueError(f"no server {sid} in this ensemble (ids 1..{self.size})")
            self._launch(sid)
        for sid in ids:
            self._procs[sid].wait_until(
                lambda s=sid: _serving(self.host, self.client_ports[s]), START_TIMEOUT_S,
                f"ZooKeeper server {sid} on {self.server_connect_string(sid)}")
        return self

    def mode(self, server_id: int) -> str | None:
        """``leader``, ``follower``, ``standalone``, or None when the server does not answer."""
        try:
            out = four_letter(self.host, self.client_ports[server_id], "srvr", timeout=1.0)
        except OSError:
            return None
        for line in out.splitlines():
            if line.startswith("Mode:"):
                return line.split(":", 1)[1].strip()
        return None

    def leader_id(self, timeout: float = 30.0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for sid, proc in self._procs.items():
                if proc.alive() and self.mode(sid) == "leader":
                    return sid
            time.sleep(0.1)
        raise ServerError(f"no ZooKeeper leader elected within {timeout:.0f} s")

    def kill(self, server_id: int) -> None:
        """SIGKILL one server (a crash, not a clean shutdown)."""
        proc = self._procs.pop(server_id, None)
        if proc is None:
            raise ValueError(f"server {server_id} is not running")
        proc.kill()

    def four_letter(self, server_id: int, cmd: str) -> str:
        return four_letter(self.host, self.client_ports[server_id], cmd)

    def stop(self) -> None:
        for proc in self._procs.values():
            proc.stop()
        self._procs.clear()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self._root, ignore_errors=True)

    def __enter__(self) -> EmbeddedEnsemble:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
