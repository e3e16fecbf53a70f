"""Handles the runner holds on member incarnations: start, clean stop, and (processes) kill."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Protocol

from zkconsumer.lab.drivers import MemberSpec
from zkconsumer.lab.member import run_member
from zkconsumer.lab.records import Lifecycle, RecordWriter

log = logging.getLogger(__name__)

STOP_TIMEOUT_S = 30.0


class MemberHandle(Protocol):
    spec: MemberSpec

    def start(self) -> None: ...
    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None: ...
    def alive(self) -> bool: ...


class ThreadMember:
    """A member in a thread of the runner's process (the default: cheap, N of them on 2 cores)."""

    def __init__(self, spec: MemberSpec) -> None:
        self.spec = spec
        self._stop = threading.Event()
        self._thread = threading.Thread(target=run_member, args=(spec, self._stop),
                                        name=f"lab-{spec.member}.{spec.incarnation}",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        self._stop.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.error("member %s.%d did not stop within %.0f s", self.spec.member,
                      self.spec.incarnation, timeout)

    def alive(self) -> bool:
        return self._thread.is_alive()


class ProcessMember:
    """A member in its own OS process: SIGTERM leaves cleanly, SIGKILL is a crash."""

    def __init__(self, spec: MemberSpec, log_dir: Path) -> None:
        self.spec = spec
        self._log_path = log_dir / f"{spec.member}.{spec.incarnation}.log"
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with open(self._log_path, "ab") as out:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "zkconsumer.lab.member", self.spec.to_json()],
                stdout=out, stderr=subprocess.STDOUT, env=env)
        log.debug("member %s.%d started as pid %d", self.spec.member, self.spec.incarnation,
                  self._proc.pid)

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            log.error("member %s.%d ignored SIGTERM for %.0f s; killing it", self.spec.member,
                      self.spec.incarnation, timeout)
            self.kill()

    def kill(self) -> float:
        """SIGKILL, then record the kill time on the member's behalf (it cannot)."""
        proc = self._proc
        if proc is None:
            raise RuntimeError(f"member {self.spec.member} was never started")
        killed_at = time.time()
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        runner_file = Path(self.spec.records_path).with_suffix(".killed.jsonl")
        writer = RecordWriter(runner_file, self.spec.member, self.spec.incarnation)
        writer.write("lc", ts=killed_at, w=Lifecycle.KILLED.value, detail="SIGKILL")
        writer.close()
        return killed_at

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None
