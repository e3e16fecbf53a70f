"""What a broker's coordinator is known to distort, and the Apache Kafka 2.4.1 figures to set
beside a run measured elsewhere.

The embedded Tansu 0.6.0 holds every group round for about half the session timeout however
fast the members rejoin (docs/comparison.md), so its eager-range and cooperative-sticky times
are Tansu's, not Kafka's. The reference figures are read from the committed runs behind
docs/comparison.md (``results/comparison/compare-apache-kafka-2.4.1-*``), never typed in; a
package installed without the repository's ``results/`` says where to find them instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zkconsumer.results.comparison_data import RESULTS_FILE, load_runs
from zkconsumer.results.provenance import read_provenance
from zkconsumer.tables import median

REFERENCE_BROKER = "apache-kafka-2.4.1"
REFERENCE_PREFIX = f"compare-{REFERENCE_BROKER}-"
REFERENCE_DOC = "docs/comparison.md"
REFERENCE_DATA = f"results/comparison/{REFERENCE_PREFIX}*"
TANSU_ROUND_SHARE = 0.5  # Tansu holds a round about half the session timeout


@dataclass(frozen=True)
class Reference:
    """Medians per (protocol, event) of the committed Kafka 2.4.1 comparison runs."""

    broker: str
    members: int
    partitions: int
    session_timeout_ms: int
    repeats: int
    stable_s: Mapping[tuple[str, str], float]  # (protocol, event) -> median seconds

    def describe(self) -> str:
        return (f"Apache Kafka 2.4.1 in {REFERENCE_DOC}: {self.members} members, "
                f"{self.partitions} partitions, session timeout {self.session_timeout_ms} ms, "
                f"medians of {self.repeats} runs")


def repository_results() -> Path | None:
    """The repository's ``results/`` when this package runs from a checkout, else None."""
    candidate = Path(__file__).resolve().parents[2] / "results"
    return candidate if candidate.is_dir() else None


def repository_docs() -> Path | None:
    """The repository's ``docs/`` when this package runs from a checkout, else None."""
    candidate = Path(__file__).resolve().parents[2] / "docs"
    return candidate if candidate.is_dir() else None


def reference_from_runs(runs: Sequence[Mapping[str, Any]], broker: str) -> Reference | None:
    """Medians of the measured runs (pure); None when no run was measured."""
    ok = [r for r in runs if r.get("status") == "ok"]
    if not ok:
        return None
    cells: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in ok:
        cells.setdefault((str(r["protocol"]), str(r["event"])), []).append(r)

    stable: dict[tuple[str, str], float] = {}
    for cell, rs in cells.items():
        value = median([float(v) for v in ((r.get("metrics") or {}).get("time_to_stable_s")
                                           for r in rs) if isinstance(v, (int, float))])
        if value is not None:
            stable[cell] = value

    first = ok[0]
    timeout = (first.get("details") or {}).get("session_timeout_ms") or 0
    repeats = max(int(r.get("repeat") or 0) for r in ok) + 1
    return Reference(broker=broker, members=int(first.get("members") or 0),
                     partitions=int(first.get("partitions") or 0),
                     session_timeout_ms=int(timeout), repeats=repeats,
                     stable_s=stable)


def kafka_reference(results: Path | None = None) -> Reference | None:
    """The committed Kafka 2.4.1 comparison, or None when ``results/`` is not available."""
    root = results if results is not None else repository_results()
    if root is None:
        return None
    runs: list[dict[str, Any]] = []
    for folder in sorted((root / "comparison").glob(f"{REFERENCE_PREFIX}*")):
        if (folder / RESULTS_FILE).is_file() and \
                read_provenance(folder).broker == REFERENCE_BROKER:
            runs.extend(load_runs(folder))
    return reference_from_runs(runs, REFERENCE_BROKER)


def where_reference_is() -> str:
    """Where a reader finds the Kafka 2.4.1 figures when this install has no ``results/``."""
    return (f"the Apache Kafka 2.4.1 figures are in {REFERENCE_DOC} of the zkconsumer "
            f"repository (data: {REFERENCE_DATA}); this install has no results/ folder")


def is_tansu(broker: str) -> bool:
    return broker.lower().startswith("tansu")


def broker_caveat(broker: str, session_timeout_ms: int | None) -> str | None:
    """What the broker's coordinator is known to distort in broker-protocol timings."""
    if not is_tansu(broker):
        return None
    hold = (f" (about {session_timeout_ms * TANSU_ROUND_SHARE / 1000:.1f} s of the "
            f"{session_timeout_ms} ms here)" if session_timeout_ms else "")
    return (f"broker timings are Tansu's: its coordinator holds every group round about half "
            f"a session timeout{hold} however fast the members rejoin, so eager-range and "
            f"cooperative-sticky settle slower than on Apache Kafka")
