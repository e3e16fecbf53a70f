"""Does the placement model reproduce the real runs' slowdown? Checked on development runs only.

The legacy zombie at N = 100 and 200 first failed its scoring because the real rebalances ran
two to three times slower than the model: 50 to 100 members shared one Python process (one
GIL) and the processes shared two cores with ZooKeeper and the broker. The placement model
(:mod:`zkconsumer.sim.placement`) puts that into the model instead of a constant. This check
simulates each ``zk-range`` zombie row of the given real folders three ways, with the same
calibration and draws:

* ``tasks``: the split-brain model as it was, ``--tasks`` processes with a core each;
* ``here``: this machine's placement as the run had it (its tasks, the cores its
  ``meta.json`` recorded, the servers on them);
* ``per-member``: one host per member, the placement the extrapolation uses;
* ``here-lone-cpu``: this machine's placement with a lone client's CPU per request (the
  calibration's crowded-process table left out), to tell what the queueing on processes and
  cores explains by itself from what the measured extra CPU of a crowded process adds.

The slowdown is the time to stable over the per-member one; the check reports the real one
and the model's. It reads only the folders it is given: it is meant for the runs the model was
developed on (``docs/validation-split-brain.md`` names them), never for held-out runs.

    zkconsumer sim placement-check --real results/splitbrain/real-n100 \\
        --real results/splitbrain/real-n200-legacy \\
        --calibration results/scale/calibration/calibration.json \\
        --out results/splitbrain/placement-check
"""

from __future__ import annotations

import csv
import dataclasses
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zkconsumer.scenarios.splitbrain import ScenarioParams
from zkconsumer.scenarios.timing import Timing
from zkconsumer.sim.calibration import Calibration
from zkconsumer.sim.placement import HERE_CORES
from zkconsumer.sim.splitbrain.simulate import SplitSimSettings, simulate_cell
from zkconsumer.spark.splitbrain.real import SplitCellKey
from zkconsumer.tables import median

log = logging.getLogger(__name__)

PLACEMENTS = ("tasks", "here", "per-member", "here-lone-cpu")
DRAWS = 5


def zombie_rows(folder: Path) -> list[dict[str, str]]:
    """The measured ``zk-range`` zombie rows of a real sweep folder."""
    path = folder / "sweep.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no sweep.csv (a `spark split-brain --mode real` "
                                "output folder is needed)")
    with open(path, newline="", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh)
                if r["mode"] == "real" and r["protocol"] == "zk-range"
                and r["scenario"] == "zombie" and r["time_to_stable_s"]]


def recorded_cores(folder: Path) -> int:
    """The cores the run's machine had (its ``meta.json``), else the reference machine's."""
    meta = folder / "meta.json"
    if meta.is_file():
        cores = json.loads(meta.read_text()).get("machine", {}).get("cores")
        if isinstance(cores, int) and cores > 0:
            return cores
    return HERE_CORES


def check_row(row: dict[str, str], cores: int, cal: Calibration, draws: int = DRAWS
              ) -> dict[str, Any]:
    """One real row against the model under each placement (medians over ``draws``)."""
    session_ms = int(row["session_timeout_ms"])
    timing = Timing(session_timeout_ms=session_ms,
                    rebalance_backoff_ms=int(row["rebalance_backoff_ms"]),
                    rebalance_max_retries=int(row["rebalance_max_retries"]), quiet_s=2.5)
    params = ScenarioParams(zombie_fraction=float(row["zombie_fraction"]),
                            cut_factor=float(row["cut_s"]) * 1000.0 / session_ms, max_retries=1)
    tasks = int(row["tasks"] or 2)
    key = SplitCellKey("zk-range", "zombie", int(row["members"]), int(row["partitions"]),
                       int(row["seed"]))
    here = f"{tasks}x{cores}"
    options = {"tasks": "", "here": here, "per-member": "per-member", "here-lone-cpu": here}
    lone = dataclasses.replace(cal, client_cpu_scale_by_clients=())
    simulated: dict[str, float | None] = {}
    for name in PLACEMENTS:
        settings = SplitSimSettings(calibration=lone if name == "here-lone-cpu" else cal,
                                    timing=timing, params=params, tasks=tasks,
                                    placement=options[name])
        times = [simulate_cell(key, settings, d).get("time_to_stable_s") for d in range(draws)]
        simulated[name] = median([t for t in times if t is not None])
    real = float(row["time_to_stable_s"])
    alone = simulated["per-member"]
    return {"members": key.members, "partitions": key.partitions, "seed": key.seed,
            "tasks": tasks, "cores": cores, "real_s": real, "sim_s": simulated,
            "here_over_real": _ratio(simulated["here"], real),
            "tasks_over_real": _ratio(simulated["tasks"], real),
            "lone_cpu_over_real": _ratio(simulated["here-lone-cpu"], real),
            "slowdown_real": _ratio(real, alone), "slowdown_here": _ratio(simulated["here"], alone)}


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a is not None and b else None


def check(folders: Sequence[Path], cal: Calibration, draws: int = DRAWS) -> list[dict[str, Any]]:
    """Every measured zk-range zombie row of ``folders``, each with its folder's name."""
    out = []
    for folder in folders:
        cores = recorded_cores(folder)
        for row in zombie_rows(folder):
            out.append({"run": folder.name, **check_row(row, cores, cal, draws)})
    return out
