"""Which protocols the simulator knows: each one's family and whether any broker here runs it.

Plain data, below every model (a model reads its settings from :class:`~.config.SimConfig`,
which validates the protocol against this table), derived from the project's one protocol table
(:mod:`zkconsumer.scenarios.protocols`, the entries marked ``simulated``). The model that
simulates each protocol is :data:`zkconsumer.sim.models.MODELS`, a test keeps the two tables'
names equal. Adding a protocol is one entry there and one model.
"""

from __future__ import annotations

from dataclasses import dataclass

from zkconsumer.scenarios.protocols import PROTOCOL_TABLE, SIMULATED


@dataclass(frozen=True)
class ProtocolInfo:
    """What kind of protocol a simulated one is."""

    family: str  # "zookeeper" (members coordinate through ZooKeeper) or "broker"
    simulated_only: bool = False  # a model with no real run under its name


PROTOCOL_INFO: dict[str, ProtocolInfo] = {
    name: ProtocolInfo(PROTOCOL_TABLE[name].family, PROTOCOL_TABLE[name].simulated_only)
    for name in SIMULATED}
