"""A result folder's provenance as the page shows it: revision, date, the versions of
zkconsumer, ZooKeeper, the broker and Python, the machine and the command.

Read from the folder's ``meta.json`` (written by :func:`zkconsumer.results.write_provenance`);
what a folder did not record says so, so a reader never takes a missing fact for a known one.
Host:port pairs are cut to the host: the ports were ephemeral and mean nothing in a report.
"""

from __future__ import annotations

import json
import logging
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zkconsumer.results.provenance import META_FILE, short_revision

log = logging.getLogger(__name__)

NOT_RECORDED = "not recorded"
# An address with a port: dotted quad, localhost or a bracketed IPv6 literal.
_ADDRESS = re.compile(r"\b((?:\d{1,3}\.){3}\d{1,3}|localhost|\[[0-9A-Fa-f:]+\]):\d{1,5}\b")


def drop_ports(text: str) -> str:
    """``127.0.0.1:54691`` -> ``127.0.0.1``: ports of servers that no longer exist."""
    return _ADDRESS.sub(r"\1", text)


@dataclass(frozen=True)
class RunMeta:
    """What a folder's meta.json says (empty strings and None where it says nothing)."""

    command: str = ""
    revision: str = ""
    date: str = ""
    broker: str = ""
    python: str = ""
    cores: int | None = None
    load: str = ""
    zkconsumer: str = ""
    zookeeper: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def parallel(self) -> int:
        """How many runs the command ran side by side (``--parallel N``), 1 when none."""
        try:
            words = shlex.split(self.command)
        except ValueError:
            return 1
        for i, word in enumerate(words[:-1]):
            if word == "--parallel" and words[i + 1].isdigit():
                return int(words[i + 1])
        return 1

    def rows(self) -> list[tuple[str, str]]:
        """The provenance table: every row present, ``not recorded`` where unknown."""
        machine = (f"{self.cores} cores, load (1 min) {self.load}" if self.cores else "")
        values = [("revision", short_revision(self.revision) if self.revision else ""),
                  ("date", self.date), ("zkconsumer", self.zkconsumer),
                  ("ZooKeeper", self.zookeeper), ("broker", self.broker),
                  ("Python", self.python), ("machine", machine), ("command", self.command)]
        return [(k, drop_ports(v) if v else NOT_RECORDED) for k, v in values]


def _load(machine: dict[str, Any]) -> str:
    start, end = machine.get("loadavg"), machine.get("loadavg_end")
    first = [x[0] for x in (start, end) if isinstance(x, list) and x]
    return " -> ".join(str(x) for x in first)


def read_meta(folder: Path) -> RunMeta | None:
    """The folder's meta.json, or None when it has none (or an unreadable one, logged)."""
    path = folder / META_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        log.warning("unreadable %s: %s", path, exc)
        return None
    machine = data.get("machine") or {}
    extra = data.get("extra") or {}
    versions = extra.get("versions") or {}
    return RunMeta(command=str(data.get("command", "")), revision=str(data.get("revision", "")),
                   date=str(data.get("date", "")), broker=str(data.get("broker", "")),
                   python=str(machine.get("python", "")), cores=machine.get("cores") or None,
                   load=_load(machine), zkconsumer=str(versions.get("zkconsumer", "")),
                   zookeeper=str(versions.get("zookeeper", "")), extra=dict(extra))


def summary_command(folder: Path) -> str:
    """The reproduce line of an older output's summary.md, when it has no meta.json."""
    summary = folder / "summary.md"
    if not summary.is_file():
        return ""
    lines = summary.read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("    zkconsumer ") and i and "eproduce" in " ".join(lines[:i]):
            return line.strip()
    return ""
