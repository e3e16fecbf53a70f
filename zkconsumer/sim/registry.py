"""Which protocols the simulator knows, and the group model that simulates each.

One entry per protocol name: the module and class of its model (imported lazily, so a model
module may import the rest of the simulator freely), its family and whether any broker here
implements it. Adding a protocol is one line in :data:`MODELS`, e.g.::

    "zk-leader-range": ModelEntry("zkconsumer.sim.leader", "LeaderGroup", "zookeeper"),

A model class (or a function choosing one) is built as ``Cls(config, engine, rng, tally,
ledger)`` and must provide
``setup(ids)``, ``join(mid)``, ``leave(mid)``, ``crash(mid, expiry_s)`` and optionally
``finish(end_s)`` (see :class:`zkconsumer.sim.simulate.GroupModel`).
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelEntry:
    """Where a protocol's model lives and what kind of protocol it is."""

    module: str
    cls: str
    family: str  # "zookeeper" (members coordinate through ZooKeeper) or "broker"
    simulated_only: bool = False  # no broker available here implements it

    def load(self) -> Any:
        return getattr(importlib.import_module(self.module), self.cls)


MODELS: dict[str, ModelEntry] = {
    "zk-range": ModelEntry("zkconsumer.sim.legacy", "LegacyGroup", "zookeeper"),
    "zk-roundrobin": ModelEntry("zkconsumer.sim.legacy", "LegacyGroup", "zookeeper"),
    "eager-range": ModelEntry("zkconsumer.sim.broker", "BrokerGroup", "broker"),
    # the barrier model of zkconsumer.sim.broker, or Tansu's coordinator (calibration)
    "cooperative-sticky": ModelEntry("zkconsumer.sim.tansu", "cooperative_group", "broker"),
    "kip848": ModelEntry("zkconsumer.sim.kip848", "Kip848Group", "broker", simulated_only=True),
    # Apache Kafka 2.4's coordinator from its source rules (modelled until validated)
    **{name: ModelEntry("zkconsumer.sim.kafka_coordinator", "KafkaCoordinatorGroup", "broker")
       for name in ("kafka-eager-range", "kafka-cooperative-sticky", "kafka-static-range")},
    **{name: ModelEntry("zkconsumer.sim.leader", "LeaderGroup", "zookeeper") for name in (
        "zk-leader-range", "zk-leader-sticky", "zk-leader-cooperative-sticky")},
}


def entry(protocol: str) -> ModelEntry:
    try:
        return MODELS[protocol]
    except KeyError:
        raise ValueError(f"protocol must be one of {', '.join(MODELS)}, "
                         f"got {protocol!r}") from None
