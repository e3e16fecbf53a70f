"""Which protocols the simulator knows: each one's family and whether any broker here runs it.

Plain data, below every model (a model reads its settings from :class:`~.config.SimConfig`,
which validates the protocol against this table). The model that simulates each protocol is
:data:`zkconsumer.sim.models.MODELS`, a test keeps the two tables' names equal. Adding a
protocol is one line here and one there, e.g. ``"zk-leader-range": ProtocolInfo("zookeeper")``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProtocolInfo:
    """What kind of protocol a simulated one is."""

    family: str  # "zookeeper" (members coordinate through ZooKeeper) or "broker"
    simulated_only: bool = False  # no broker available here implements it


PROTOCOL_INFO: dict[str, ProtocolInfo] = {
    "zk-range": ProtocolInfo("zookeeper"),
    "zk-roundrobin": ProtocolInfo("zookeeper"),
    "eager-range": ProtocolInfo("broker"),
    "cooperative-sticky": ProtocolInfo("broker"),
    "kip848": ProtocolInfo("broker", simulated_only=True),
    # Apache Kafka 2.4's coordinator from its source rules (modelled until validated)
    **{name: ProtocolInfo("broker")
       for name in ("kafka-eager-range", "kafka-cooperative-sticky", "kafka-static-range")},
    **{name: ProtocolInfo("zookeeper")
       for name in ("zk-leader-range", "zk-leader-sticky", "zk-leader-cooperative-sticky")},
}
