"""The rebalance lab: one harness, ZooKeeper-coordinated vs broker-coordinated groups.

>>> from zkconsumer.lab import ExperimentSpec, run_experiment            # doctest: +SKIP
>>> results = run_experiment(ExperimentSpec(protocols=("zk-range", "eager-range"),
...                                         events=("join",), members=4, partitions=8))
"""

from zkconsumer.extras import require

require("lab", "zkconsumer.lab")  # before anything that needs it


from zkconsumer.lab.runner import run_experiment
from zkconsumer.lab.spec import (
    METRIC_NAMES,
    PROTOCOLS,
    ExperimentSpec,
    RunResult,
    RunSpec,
    RunStatus,
    Timing,
)
from zkconsumer.scenarios.protocols import EVENTS, Event

__all__ = [
    "EVENTS", "METRIC_NAMES", "PROTOCOLS", "Event", "ExperimentSpec", "RunResult", "RunSpec",
    "RunStatus", "Timing", "run_experiment",
]
