"""The chaos members: each a process behind its own fault proxies to the ZooKeeper ensemble.

One :class:`~zkconsumer.faults.proxy.FaultProxy` per ensemble server per member, and the member's
connect string lists its proxies: holding all of them cuts that member (and only it) off from
the whole ensemble, which is a pause or, held past the session timeout, a session expiry. The
broker is reached directly. Killing a ZooKeeper server needs nothing here: the proxy in front
of it refuses to connect upstream, so the member's client moves on to another server.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

from zkconsumer.faults.proxy import FaultProxy
from zkconsumer.lab.chaos.consumer import ChaosMemberSpec
from zkconsumer.orphans import die_with_parent

log = logging.getLogger(__name__)

# A chaos member's last commit blocks while ZooKeeper is unreachable (it retries until it
# succeeds, as the original did); a leave that cannot finish ends as a crash instead of hanging.
LEAVE_DEADLINE_S = 25.0


class MemberLink:
    """A member's private path to every ensemble server."""

    def __init__(self, name: str, servers: list[str]) -> None:
        self.proxies = [FaultProxy.for_address(s, name=f"{name}-zk{i}")
                        for i, s in enumerate(servers, 1)]

    def start(self) -> MemberLink:
        for p in self.proxies:
            p.start()
        return self

    @property
    def connect_string(self) -> str:
        return ",".join(p.address for p in self.proxies)

    def hold(self) -> None:
        for p in self.proxies:
            p.pause()

    def release(self) -> None:
        for p in self.proxies:
            p.heal()

    @property
    def held(self) -> bool:
        return any(p.mode.value != "pass" for p in self.proxies)

    def stop(self) -> None:
        for p in self.proxies:
            try:
                p.stop()
            except Exception:
                log.debug("stopping proxy %s failed", p.name, exc_info=True)


class ChaosMember:
    """A member process and its link; SIGTERM is a clean leave, SIGKILL a crash."""

    kind = "zkconsumer"

    def __init__(self, spec: ChaosMemberSpec, link: MemberLink, log_path: Path) -> None:
        self.spec = spec
        self.link = link
        self._log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    def start(self) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with open(self._log_path, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "zkconsumer.lab.member", "--chaos",
                 "--leave-deadline", str(LEAVE_DEADLINE_S), self.spec.to_json()],
                stdout=out, stderr=subprocess.STDOUT, env=env,
                preexec_fn=die_with_parent if sys.platform.startswith("linux") else None)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def terminate(self) -> None:
        """Ask for a clean leave; does not wait (see :meth:`wait`)."""
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def wait(self, timeout: float) -> int | None:
        """The exit code, or None if it is still running after ``timeout`` seconds."""
        if self.proc is None:
            return None
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
