"""The formation sweep: kinds x budgets x sizes x seeds on one ZooKeeper and one 0.10.2 broker.

Runs are ordered seed by seed (then size, budget, kind), so a sweep cut short still holds every
cell's first repetitions. ``runs.json`` is rewritten after every run.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from zkconsumer.lab.formation.run import FormationParams, run_once
from zkconsumer.lab.formation.verdict import KINDS

log = logging.getLogger(__name__)

RUNS_FILE = "runs.json"


@dataclass(frozen=True)
class SweepSpec:
    kinds: tuple[str, ...] = KINDS
    budgets: tuple[int, ...] = (1, 2, 4)
    members: tuple[int, ...] = (2, 5, 10)
    seeds: int = 5
    first_seed: int = 1
    params: FormationParams = field(default_factory=FormationParams)
    kafka_home: str | None = None

    def validate(self) -> None:
        bad = [k for k in self.kinds if k not in KINDS]
        if bad:
            raise ValueError(f"unknown member kind {bad[0]!r}: choose from {', '.join(KINDS)}")
        if not self.kafka_home:
            raise ValueError("the formation sweep runs on a Kafka 0.10.2 broker: give "
                             "--broker kafka:DIR")
        for b in self.budgets:
            if b < 1:
                raise ValueError(f"a retry budget must be >= 1, got {b}")
        for n in self.members:
            if n < 2:
                raise ValueError(f"a group needs at least 2 members here, got {n}")
        if self.seeds < 1:
            raise ValueError(f"seeds must be >= 1, got {self.seeds}")

    def cells(self) -> list[tuple[int, int, int, str]]:
        """(seed, N, budget, kind) in run order."""
        return [(s, n, b, k) for s in range(self.first_seed, self.first_seed + self.seeds)
                for n in self.members for b in self.budgets for k in self.kinds]


def run_sweep(spec: SweepSpec, out_dir: Path, say: Callable[[str], None] = print
              ) -> list[dict[str, Any]]:
    spec.validate()
    from zkconsumer.testing.kafka import KafkaBroker
    from zkconsumer.testing.zookeeper import EmbeddedZooKeeper

    out_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    assert spec.kafka_home is not None
    home = Path(spec.kafka_home)
    with EmbeddedZooKeeper() as zk, KafkaBroker(zk.connect_string, home) as broker:
        topic = f"formation-{uuid.uuid4().hex[:6]}"
        _create_topic(zk.connect_string, topic, spec.params.partitions, broker.bootstrap)
        cells = spec.cells()
        for i, (seed, n, budget, kind) in enumerate(cells, 1):
            row = run_once(kind, budget, n, seed, zk.connect_string, topic, spec.params,
                           home if kind == "original" else None)
            row["broker"] = broker.name
            row["loadavg"] = round(os.getloadavg()[0], 2)
            rows.append(row)
            write_runs(out_dir, spec, rows)
            say(f"{i}/{len(cells)} {kind} budget {budget} N {n} seed {seed}: {said(row)}")
    return rows


def _create_topic(zk_connect: str, topic: str, partitions: int, bootstrap: str,
                  tries: int = 5) -> None:
    """Create the topic, again if the broker timed out (a loaded machine's first request)."""
    from zkconsumer.admin import create_topic

    for attempt in range(1, tries + 1):
        try:   # exist_ok: a timed-out request may have created it (the name is fresh)
            create_topic(zk_connect, topic, partitions, bootstrap=bootstrap, exist_ok=True)
            return
        except Exception as exc:
            if attempt == tries:
                raise
            log.warning("creating %s failed (%r), trying again", topic, exc)
            time.sleep(2.0 * attempt)   # a broker still starting its controller


def said(row: dict[str, Any]) -> str:
    if row["formed"] is None:
        return str(row["reason"])
    if not row["formed"]:
        return "did not form"
    return (f"formed, {row['rebalances_given_up']} give-ups, verify "
            f"{row['verify_ok'] or 'not run'}")


def write_runs(out_dir: Path, spec: SweepSpec, rows: Sequence[dict[str, Any]]) -> Path:
    path = out_dir / RUNS_FILE
    data = {"spec": {**asdict(spec), "kafka_home": None}, "runs": list(rows)}
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return path


def read_runs(folder: Path) -> list[dict[str, Any]]:
    return list(json.loads((folder / RUNS_FILE).read_text())["runs"])
