"""The protocols the lab compares: one table, from which the drivers and the CLI choices come.

Each entry says how a member of that protocol is built: the family (members coordinating through
ZooKeeper, or a broker-side group), the ``partition.assignment.strategy``, the ZooKeeper
``coordination.mode``, whether members are static (KIP-345) and, for broker-side groups, the
rebalance protocol: ``classic`` (JoinGroup/SyncGroup, the client-side assignor named by
``strategy``) or KIP-848's ``consumer`` (Apache Kafka 4: the coordinator assigns with the
server-side assignor named by ``strategy``, ``uniform`` or ``range``, and moves partitions one
by one through each member's heartbeat, with no group-wide barrier). Adding a protocol is one line
here; the driver for it is derived (``zkconsumer.lab.drivers``), as the simulator derives its
list from its own registry (``zkconsumer.sim.registry``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LabProtocol:
    name: str
    family: str  # "zookeeper" (our connector) or "broker" (confluent-kafka's group)
    strategy: str
    mode: str = "legacy"  # coordination.mode of the ZooKeeper family
    static: bool = False  # group.instance.id set (broker family)
    offsets_storage: str = "zookeeper"  # offsets.storage of the ZooKeeper family
    dual_commit: bool = False  # dual.commit.enabled (with offsets.storage=kafka)
    group_protocol: str = "classic"  # group.protocol of the broker family (KIP-848: "consumer")

    @property
    def kip848(self) -> bool:
        """A KIP-848 group: the coordinator assigns (``strategy`` is group.remote.assignor)."""
        return self.group_protocol == CONSUMER_GROUP_PROTOCOL


CONSUMER_GROUP_PROTOCOL = "consumer"


PROTOCOL_TABLE: dict[str, LabProtocol] = {p.name: p for p in (
    LabProtocol("zk-range", "zookeeper", "range"),
    LabProtocol("zk-roundrobin", "zookeeper", "roundrobin"),
    LabProtocol("eager-range", "broker", "range"),
    LabProtocol("eager-roundrobin", "broker", "roundrobin"),
    LabProtocol("cooperative-sticky", "broker", "cooperative-sticky"),
    LabProtocol("static-range", "broker", "range", static=True),
    LabProtocol("zk-leader-range", "zookeeper", "range", mode="leader"),
    LabProtocol("zk-leader-sticky", "zookeeper", "sticky", mode="leader"),
    LabProtocol("zk-leader-cooperative-sticky", "zookeeper", "cooperative-sticky",
                mode="leader"),
    # The steps of the migration to broker coordination (docs/migration.md).
    LabProtocol("zk-range-kafka-dual", "zookeeper", "range", offsets_storage="kafka",
                dual_commit=True),
    LabProtocol("zk-range-kafka", "zookeeper", "range", offsets_storage="kafka"),
    # KIP-848 (Apache Kafka 4): what replaced JoinGroup/SyncGroup.
    LabProtocol("consumer-uniform", "broker", "uniform", group_protocol=CONSUMER_GROUP_PROTOCOL),
    LabProtocol("consumer-range", "broker", "range", group_protocol=CONSUMER_GROUP_PROTOCOL),
    LabProtocol("static-consumer-uniform", "broker", "uniform", static=True,
                group_protocol=CONSUMER_GROUP_PROTOCOL),
    LabProtocol("static-consumer-range", "broker", "range", static=True,
                group_protocol=CONSUMER_GROUP_PROTOCOL),
)}

PROTOCOLS = tuple(PROTOCOL_TABLE)
