"""Start, watch and stop the server processes the project runs itself.

Every child is started in its own session (so a terminal's Ctrl-C reaches only Python, which then
stops it in order) and, on Linux, with a parent-death signal, so that no JVM or broker outlives the
Python process that started it, even after SIGKILL. A module-level registry stops whatever is
still running at interpreter exit.
"""

from __future__ import annotations

import atexit
import errno
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, TypeVar

from zkconsumer.errors import ServerError
from zkconsumer.orphans import die_with_parent

log = logging.getLogger(__name__)

_LIVE: weakref.WeakSet[ManagedProcess] = weakref.WeakSet()


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def ensure_port_free(port: int, what: str, host: str = "127.0.0.1") -> None:
    """Fail early, and clearly, when a requested port is already taken."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                raise ServerError(
                    f"cannot start {what}: port {port} on {host} is already in use "
                    f"({exc.strerror}); choose another port or stop the process holding it"
                ) from None
            raise


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def tail(path: Path, lines: int = 30) -> str:
    """The last lines of a log file, for error messages about servers that did not come up."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log written)"
    return "\n".join(text.splitlines()[-lines:]) or "(log is empty)"


class ManagedProcess:
    """One child process with its output in a log file; stopped on ``stop()`` or at exit."""

    def __init__(self, name: str, argv: Sequence[str], log_path: Path,
                 env: dict[str, str] | None = None, cwd: Path | None = None,
                 stderr_path: Path | None = None) -> None:
        self.name = name
        self.stderr_path = stderr_path
        self.argv = list(argv)
        self.log_path = log_path
        self.env = env
        self.cwd = cwd
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_file: IO[bytes] | None = None
        self._err_file: IO[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log_file = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        # A separate stderr keeps a child's machine-readable stdout lines whole.
        if self.stderr_path is not None:
            self._err_file = open(self.stderr_path, "ab")  # noqa: SIM115 - closed in stop()
        log.debug("starting %s: %s", self.name, " ".join(self.argv))
        self._proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=self._log_file,
            stderr=self._err_file if self._err_file is not None else subprocess.STDOUT,
            env=self.env,
            cwd=self.cwd,
            start_new_session=True,
            preexec_fn=die_with_parent if sys.platform.startswith("linux") else None,
        )
        _LIVE.add(self)

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def returncode(self) -> int | None:
        return self._proc.poll() if self._proc else None

    def wait_until(self, ready: Callable[[], bool], timeout: float, what: str) -> None:
        """Poll ``ready`` until it holds; raise with the log tail if the process dies or stalls."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise ServerError(
                    f"{what} exited with code {self.returncode()} before it was ready; "
                    f"last lines of {self.log_path}:\n{tail(self.log_path)}"
                )
            if ready():
                return
            time.sleep(0.05)
        self.stop()
        raise ServerError(
            f"{what} did not become ready within {timeout:.0f} s; "
            f"last lines of {self.log_path}:\n{tail(self.log_path)}"
        )

    def wait(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` seconds for the process to exit by itself: its exit code, or
        None while it still runs (a job, not a server)."""
        if self._proc is None:
            return None
        try:
            return self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        """SIGKILL, the way a crash looks to its peers."""
        self._signal_and_wait(signal.SIGKILL, 10.0)

    def stop(self, grace: float = 5.0) -> None:
        """SIGTERM, then SIGKILL after ``grace`` seconds. Idempotent."""
        self._signal_and_wait(signal.SIGTERM, grace)
        if self.alive():
            self._signal_and_wait(signal.SIGKILL, 10.0)

    def _signal_and_wait(self, sig: int, timeout: float) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                return
        for handle in (self._log_file, self._err_file):
            if handle is not None:
                handle.close()
        self._log_file = self._err_file = None
        _LIVE.discard(self)


def _stop_all() -> None:
    for proc in list(_LIVE):
        proc.stop(grace=2.0)


atexit.register(_stop_all)


Server = TypeVar("Server", bound="ManagedServer")


class ManagedServer:
    """What every server the project starts shares: one process, one scratch folder, and a
    lifecycle a ``with`` block drives (``start`` on entry; ``stop`` and the folder's removal on
    exit). Subclasses define ``start`` and ``stop``."""

    _proc: ManagedProcess | None
    _root: Path

    def start(self: Server) -> Server:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def kill(self) -> None:
        """SIGKILL, the way a crash looks to its peers (its ZooKeeper session then expires)."""
        if self._proc is not None:
            self._proc.kill()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self._root, ignore_errors=True)

    def __enter__(self: Server) -> Server:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class Watchdog(threading.Thread):
    """Calls ``on_exit`` once when the watched process exits (drops a dead broker's znode)."""

    def __init__(self, proc: ManagedProcess, on_exit: Callable[[], None]) -> None:
        super().__init__(name=f"watchdog-{proc.name}", daemon=True)
        self._proc = proc
        self._on_exit = on_exit
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.wait(0.2):
            if not self._proc.alive():
                self._on_exit()
                return

    def cancel(self) -> None:
        self._halt.set()
