"""The group model that simulates each protocol (:mod:`.protocols` lists the protocols).

A model class (or a function choosing one) is built as ``Model(config, engine, rng, tally,
ledger)`` and provides ``setup(ids)``, ``join(mid)``, ``leave(mid)``, ``crash(mid, expiry_s)``
and optionally ``finish(end_s)`` (:class:`GroupModel`). The models are imported here by name,
so which code simulates a protocol is one import away.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from zkconsumer.sim.broker import BrokerGroup
from zkconsumer.sim.config import SimConfig
from zkconsumer.sim.engine import Engine
from zkconsumer.sim.group import FormedTicks
from zkconsumer.sim.kafka_coordinator import KafkaCoordinatorGroup
from zkconsumer.sim.kip848 import Kip848Group
from zkconsumer.sim.leader import LeaderGroup
from zkconsumer.sim.legacy import LegacyGroup
from zkconsumer.sim.tally import OwnershipLedger, Tally
from zkconsumer.sim.tansu import cooperative_group
from zkconsumer.sim.tansu_eager import TansuEagerGroup


class GroupModel(Protocol):
    event_lag_s: float | None
    formed_stragglers: int
    ATTEMPTS_IN_WINDOW: bool

    def formed_ticks(self) -> FormedTicks | None: ...
    def setup(self, ids: list[str]) -> None: ...
    def join(self, mid: str) -> None: ...
    def leave(self, mid: str) -> None: ...
    def crash(self, mid: str, expiry_s: float) -> None: ...


ModelFactory = Callable[[SimConfig, Engine, random.Random, Tally, OwnershipLedger], GroupModel]

MODELS: dict[str, ModelFactory] = {
    "zk-range": LegacyGroup,
    "zk-roundrobin": LegacyGroup,
    "eager-range": BrokerGroup,
    # the barrier model of zkconsumer.sim.broker, or Tansu's coordinator (calibration)
    "cooperative-sticky": cooperative_group,
    "kip848": Kip848Group,
    "kip848-range": Kip848Group,
    "kip848-static": Kip848Group,
    # Apache Kafka 2.4's coordinator from its source rules (modelled until validated)
    **{name: KafkaCoordinatorGroup
       for name in ("kafka-eager-range", "kafka-cooperative-sticky", "kafka-static-range")},
    # Tansu 0.6.0's classic coordinator from its source rules (modelled until validated)
    "tansu-eager-range": TansuEagerGroup,
    **{name: LeaderGroup
       for name in ("zk-leader-range", "zk-leader-sticky", "zk-leader-cooperative-sticky")},
}


def model_for(protocol: str) -> ModelFactory:
    try:
        return MODELS[protocol]
    except KeyError:
        raise ValueError(f"protocol must be one of {', '.join(MODELS)}, "
                         f"got {protocol!r}") from None
