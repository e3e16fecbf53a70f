"""Where a result came from: the command, the revision, the date, the machine and the broker.

Written as ``meta.json`` beside the raw data of every committed result, so a figure can always be
traced to the run that produced it and reproduced with the same command.
"""

from __future__ import annotations

import csv
import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from zkconsumer.results.portable import (
    CHECKOUT,
    current_command,
    portable_command,
    portable_path,
    relocated_command,
)

META_FILE = "meta.json"


@dataclass(frozen=True)
class Provenance:
    """What produced one result set; ``broker`` names the broker whose behaviour it measured
    (``tansu-0.6.0``, ``apache-kafka-2.4.1``, ...) or is empty when no broker was involved."""

    command: str
    revision: str
    date: str
    machine: dict[str, object]
    broker: str = ""
    extra: dict[str, object] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    @property
    def short_revision(self) -> str:
        """The commit's first 12 hex digits, keeping ``-dirty`` (uncommitted changes)."""
        return short_revision(self.revision)

    def load_text(self, key: str = "loadavg") -> str:
        """A load average as ``1-min / 5-min / 15-min``, or ``?`` when none was recorded;
        ``key`` is ``loadavg`` (start) or ``loadavg_end``."""
        load = self.machine.get(key)
        return " / ".join(map(str, load)) if isinstance(load, list) and load else "?"

    def conditions(self) -> str:
        """The facts that decide whether two measurements compare, as one phrase for a doc:
        date, revision, cores, Python, load at the start and the end, broker."""
        m = self.machine
        return (f"{self.date}, revision `{self.short_revision}`, {m.get('cores', '?')} cores, "
                f"Python {m.get('python', '?')}, load average (1/5/15 min) {self.load_text()} at "
                f"the start and {self.load_text('loadavg_end')} at the end, broker "
                f"{self.broker or 'none'}")


def short_revision(revision: str) -> str:
    """``revision`` cut to 12 hex digits for a doc; a ``-dirty`` suffix stays visible."""
    return revision[:12] + ("-dirty" if revision.endswith("-dirty") else "")


def git_revision(cwd: Path | None = None) -> str:
    """The checkout's commit, with ``-dirty`` when tracked files differ from it."""
    where = cwd or Path(__file__).resolve().parents[2]
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True,
                             text=True, check=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=where, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return rev + ("-dirty" if dirty.strip() else "")


def machine_facts() -> dict[str, object]:
    """Cores, load and versions: the facts that decide whether two timings can be compared."""
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = []
    return {"cores": os.cpu_count() or 0, "loadavg": load, "platform": platform.platform(),
            "python": sys.version.split()[0]}


def capture(command: str, broker: str = "", **extra: object) -> Provenance:
    """Provenance of a run starting now (load is read again by :func:`finish`); the command is
    kept without this machine's folders (:func:`~zkconsumer.results.portable.portable_command`)."""
    return Provenance(command=portable_command(command), revision=git_revision(),
                      date=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                      machine=machine_facts(), broker=broker, extra=dict(extra))


def write_rows_csv(path: Path, columns: Sequence[str], rows: Iterable[Mapping[str, Any]],
                   prov: Provenance) -> Path:
    """A table of rows as CSV at ``path`` and, beside it, the provenance that made it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, list(columns), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    write_provenance(path.parent, prov)
    return path


def write_provenance(folder: Path, prov: Provenance) -> Path:
    """Write ``meta.json``; the load average at the end of the run is added beside the start's.
    The command goes through :func:`~zkconsumer.results.portable.portable_command` here too, for
    a :class:`Provenance` built without :func:`capture`."""
    folder.mkdir(parents=True, exist_ok=True)
    data = prov.to_json()
    data["command"] = portable_command(prov.command)
    machine = dict(prov.machine)
    machine["loadavg_end"] = machine_facts()["loadavg"]
    data["machine"] = machine
    path = folder / META_FILE
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return path


def copy_provenance(src: Path, dest: Path, root: Path = CHECKOUT) -> Path:
    """Copy ``src/meta.json`` to ``dest/meta.json`` for data moved from ``src`` into ``dest``:
    the command's paths into ``src`` (its ``--out``) name ``dest`` (relative to the checkout when
    inside it), so the committed command writes where the committed data is; the rest as is."""
    data = json.loads((src / META_FILE).read_text())
    data["command"] = relocated_command(str(data.get("command", "")), str(src.resolve()),
                                        portable_path(str(dest.resolve()), root), root)
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / META_FILE
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return path


def recorded_heartbeat_ms(folder: Path) -> int | None:
    """The KIP-848 groups' heartbeat interval the broker of the run in ``folder`` gave its
    members, as its ``meta.json`` recorded it (None: no such file, or not a KIP-848 broker)."""
    if not (folder / META_FILE).is_file():
        return None
    hb = read_provenance(folder).extra.get("consumer_heartbeat_interval_ms")
    return None if hb is None else int(str(hb))


def recorded_settle(folder: Path) -> str:
    """The rule the herd runs in ``folder`` ended their event windows by, as their
    ``meta.json`` recorded it (``spark.task_control.SETTLE_REBALANCES_ENDED``); "" for a folder
    without one, made before the rule was recorded (the plain rule)."""
    if not (folder / META_FILE).is_file():
        return ""
    return str(read_provenance(folder).extra.get("settle", ""))


def read_provenance(folder: Path) -> Provenance:
    """``folder``'s ``meta.json``, its command spelled as it runs today
    (:func:`~zkconsumer.results.portable.current_command`); the file keeps what was run."""
    data = json.loads((folder / META_FILE).read_text())
    return Provenance(command=current_command(data["command"]), revision=data["revision"],
                      date=data["date"], machine=data["machine"], broker=data.get("broker", ""),
                      extra=data.get("extra", {}))
