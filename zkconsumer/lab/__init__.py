"""The rebalance lab: one harness, ZooKeeper-coordinated vs broker-coordinated groups.

Each experiment is a package (``compare/``, ``herd/``, ``splitbrain/``, ``chaos/``,
``migration/``); beside them, what they share: the drivers (one per protocol of the table in
:mod:`zkconsumer.scenarios.protocols`), the member process and its properties, the group and
its handles, records, metrics, the producer, the servers, the run rows and their timelines.

>>> from zkconsumer.lab import ExperimentSpec, run_experiment            # doctest: +SKIP
>>> results = run_experiment(ExperimentSpec(protocols=("zk-range", "eager-range"),
...                                         events=("join",), members=4, partitions=8))
"""

from zkconsumer.extras import require

require("lab", "zkconsumer.lab")  # before anything that needs it


from zkconsumer.lab.compare.runner import run_experiment
from zkconsumer.lab.compare.spec import PROTOCOLS, ExperimentSpec, RunSpec
from zkconsumer.lab.runs import METRIC_NAMES, RunResult, RunStatus
from zkconsumer.scenarios.protocols import EVENTS, Event
from zkconsumer.scenarios.timing import Timing

__all__ = [
    "EVENTS", "METRIC_NAMES", "PROTOCOLS", "Event", "ExperimentSpec", "RunResult", "RunSpec",
    "RunStatus", "Timing", "run_experiment",
]
