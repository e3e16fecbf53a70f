"""Every protocol the project names: one table the lab, the simulator, the Spark jobs, the
figures and the demo derive their lists from.

A protocol is a way a consumer group decides who owns which partition. The table says, per
protocol, who decides (every member over its own view, one leader member, or the broker's
coordinator), the family (members coordinating through ZooKeeper, or a broker-side group), the
assignor (``partition.assignment.strategy``, or KIP-848's server-side assignor), the ZooKeeper
``coordination.mode``, whether members are static (KIP-345), how the lab builds a member of it
(offsets storage, dual commit, ``group.protocol``), where it runs (the lab against real servers,
the simulator's models), which membership events and split-brain scenarios apply to it, and how
the figures show it (position, label and colour). Adding a protocol is one entry here; the lab's
drivers, the simulator's registry, the Spark jobs' choices and the figures' rows follow.

Plain data, below every user (``scenarios`` sits under the simulator, the lab, the Spark jobs
and the figures in docs/architecture.md).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class Event(str, enum.Enum):
    """Membership events the lab applies to a stable group."""

    JOIN = "join"
    LEAVE = "leave"
    CRASH = "crash"
    ROLLING_BOUNCE = "rolling-bounce"


EVENTS = tuple(e.value for e in Event)

# The split-brain scenarios at scale (scenarios/splitbrain.py plans them).
SPLIT_BRAIN_SCENARIOS = ("zombie", "stale-view", "storm")
# A broker-side group has no ZooKeeper session to lose: the zombie scenario does not apply.
BROKER_SPLIT_BRAIN = ("stale-view", "storm")

ZOOKEEPER, BROKER = "zookeeper", "broker"
# Who implements a protocol's members: this project's connector (or librdkafka for the broker
# family), or the original Scala ZookeeperConsumerConnector of Kafka 0.10.2 in a JVM per member.
ZKCONSUMER, ORIGINAL = "zkconsumer", "original"
ORIGINAL_RELEASE = "0.10.2"  # the Kafka build whose connector the original members run
CLASSIC_GROUP_PROTOCOL = "classic"
CONSUMER_GROUP_PROTOCOL = "consumer"  # KIP-848's group.protocol


class Decider(str, enum.Enum):
    """Who decides the assignment."""

    MEMBERS = "members"          # every member runs the assignor over the view it read (legacy)
    LEADER = "leader"            # one member decides for the group (leader mode; a classic
                                 # broker group's leader runs the client-side assignor)
    COORDINATOR = "coordinator"  # the broker's group coordinator (KIP-848)


@dataclass(frozen=True)
class Protocol:
    """One protocol. ``rank``: its place in the comparison's tables and figures (None: not
    shown there); its colour in every figure follows from it."""

    name: str
    family: str              # ZOOKEEPER (our connector) or BROKER (a broker-side group)
    decider: Decider
    strategy: str            # partition.assignment.strategy (KIP-848: group.remote.assignor)
    mode: str = "legacy"     # coordination.mode of the ZooKeeper family
    static: bool = False     # group.instance.id set (broker family)
    offsets_storage: str = "zookeeper"  # offsets.storage of the ZooKeeper family
    dual_commit: bool = False           # dual.commit.enabled (with offsets.storage=kafka)
    group_protocol: str = CLASSIC_GROUP_PROTOCOL  # group.protocol of the broker family
                                                  # (KIP-848: "consumer")
    lab: bool = True         # the lab runs it against real servers
    simulated: bool = False  # the simulator has a model of it
    simulated_only: bool = False  # a model with no real run under its name
    split_brain: tuple[str, ...] = ()  # the split-brain scenarios at scale that apply
    real_split_brain: tuple[str, ...] = ()  # those that apply to real members only (no model)
    demo: bool = False       # one of the demo's compared protocols
    rank: int | None = None
    label: str = ""          # what the figures' prose calls it
    implementation: str = ZKCONSUMER  # ORIGINAL: the members are 0.10.2 JVM processes

    @property
    def original(self) -> bool:
        """Its members run the original 0.10.2 connector (they need that Kafka build)."""
        return self.implementation == ORIGINAL

    @property
    def kip848(self) -> bool:
        """A KIP-848 group: the coordinator assigns (``strategy`` is group.remote.assignor)."""
        return self.group_protocol == CONSUMER_GROUP_PROTOCOL

    @property
    def events(self) -> tuple[str, ...]:
        """The membership events the lab applies to it (every one, to a protocol it runs)."""
        return EVENTS if self.lab else ()

    @property
    def colour(self) -> str | None:
        """Its matplotlib colour in the figures (the default cycle, in the comparison's order)."""
        return None if self.rank is None else f"C{self.rank}"


def _zk(name: str, strategy: str, **more: Any) -> Protocol:
    """A legacy ZooKeeper-coordinated group: every member decides."""
    return Protocol(name, ZOOKEEPER, Decider.MEMBERS, strategy, **more)


def _leader(name: str, strategy: str, **more: Any) -> Protocol:
    """The ZooKeeper leader mode: one elected member decides and publishes."""
    return Protocol(name, ZOOKEEPER, Decider.LEADER, strategy, mode="leader", **more)


def _classic(name: str, strategy: str, **more: Any) -> Protocol:
    """A classic (JoinGroup/SyncGroup) broker group: its leader member runs the assignor."""
    return Protocol(name, BROKER, Decider.LEADER, strategy, **more)


def _original(name: str, strategy: str, **more: Any) -> Protocol:
    """The original 0.10.2 connector's legacy protocol: every member decides, as ``_zk``'s."""
    return Protocol(name, ZOOKEEPER, Decider.MEMBERS, strategy, implementation=ORIGINAL,
                    **more)


def _kip848(name: str, strategy: str, **more: Any) -> Protocol:
    """A KIP-848 broker group: the coordinator assigns with its server-side assignor."""
    return Protocol(name, BROKER, Decider.COORDINATOR, strategy,
                    group_protocol=CONSUMER_GROUP_PROTOCOL, **more)


PROTOCOL_TABLE: dict[str, Protocol] = {p.name: p for p in (
    _zk("zk-range", "range", simulated=True, split_brain=SPLIT_BRAIN_SCENARIOS, demo=True,
        rank=0, label="legacy"),
    _zk("zk-roundrobin", "roundrobin", simulated=True),
    _classic("eager-range", "range", simulated=True, split_brain=BROKER_SPLIT_BRAIN,
             demo=True, rank=2, label="eager"),
    _classic("eager-roundrobin", "roundrobin"),
    _classic("cooperative-sticky", "cooperative-sticky", simulated=True,
             split_brain=BROKER_SPLIT_BRAIN, demo=True, rank=3, label="cooperative"),
    _classic("static-range", "range", static=True, rank=4, label="static"),
    # KIP-848 as the simulator models it (written before a broker here ran ConsumerGroupHeartbeat;
    # the real KIP-848 protocols are the consumer-* rows, on Apache Kafka 4.0.2).
    _kip848("kip848", "uniform", lab=False, simulated=True, simulated_only=True),
    # ... with the server-side range assignor, and its static members (group.instance.id: a
    # leave keeps the assignment a while).
    _kip848("kip848-range", "range", lab=False, simulated=True, simulated_only=True),
    _kip848("kip848-static", "uniform", static=True, lab=False, simulated=True,
            simulated_only=True),
    # Apache Kafka 2.4's coordinator from its source rules (modelled until validated).
    _classic("kafka-eager-range", "range", lab=False, simulated=True),
    _classic("kafka-cooperative-sticky", "cooperative-sticky", lab=False, simulated=True),
    _classic("kafka-static-range", "range", static=True, lab=False, simulated=True),
    # Tansu 0.6.0's classic coordinator from its source rules (modelled until validated).
    _classic("tansu-eager-range", "range", lab=False, simulated=True),
    _leader("zk-leader-range", "range", simulated=True, split_brain=SPLIT_BRAIN_SCENARIOS,
            demo=True, rank=1, label="leader mode"),
    _leader("zk-leader-sticky", "sticky", simulated=True),
    _leader("zk-leader-cooperative-sticky", "cooperative-sticky", simulated=True),
    # The steps of the migration to broker coordination (docs/migration.md).
    _zk("zk-range-kafka-dual", "range", offsets_storage="kafka", dual_commit=True),
    _zk("zk-range-kafka", "range", offsets_storage="kafka"),
    # KIP-848 (Apache Kafka 4): what replaced JoinGroup/SyncGroup, compared on Kafka 4 only.
    _kip848("consumer-uniform", "uniform", real_split_brain=BROKER_SPLIT_BRAIN, rank=5,
            label="KIP-848 uniform"),
    _kip848("consumer-range", "range", real_split_brain=BROKER_SPLIT_BRAIN, rank=6,
            label="KIP-848 range"),
    _kip848("static-consumer-uniform", "uniform", static=True, rank=7,
            label="static KIP-848 uniform"),
    _kip848("static-consumer-range", "range", static=True, rank=8,
            label="static KIP-848 range"),
    # The original itself (Kafka 0.10.2's Scala connector, one JVM per member): the reference
    # every legacy figure of zkconsumer is read against; it needs the 0.10.2 build. The
    # split-brain scenarios at scale run it in Spark tasks (real members only: no model).
    _original("original-zk-range", "range", rank=9, label="original (0.10.2)",
              real_split_brain=SPLIT_BRAIN_SCENARIOS),
    _original("original-zk-roundrobin", "roundrobin", real_split_brain=SPLIT_BRAIN_SCENARIOS),
)}


def _names(keep: Callable[[Protocol], bool]) -> tuple[str, ...]:
    """The protocols ``keep`` selects, those the comparison shows first and in its order."""
    kept = [name for name, p in PROTOCOL_TABLE.items() if keep(p)]
    return tuple(sorted(kept, key=lambda n: (PROTOCOL_TABLE[n].rank is None,
                                             PROTOCOL_TABLE[n].rank or 0)))


LAB = tuple(name for name, p in PROTOCOL_TABLE.items() if p.lab)  # the table's order
SIMULATED = tuple(name for name, p in PROTOCOL_TABLE.items() if p.simulated)
DEMO = _names(lambda p: p.demo)
SPLIT_BRAIN = _names(lambda p: bool(p.split_brain))
# ... and with them the protocols real members run the scenarios for (on Apache Kafka 4).
REAL_SPLIT_BRAIN = _names(lambda p: bool(p.split_brain or p.real_split_brain))
# The comparison on every broker, and on Apache Kafka 4 (the only one running KIP-848 groups).
# The original's members need Kafka 0.10.2: it is compared on that broker only (ORIGINALS).
COMPARED = _names(lambda p: p.rank is not None and not p.kip848 and not p.original)
COMPARED_KAFKA4 = _names(lambda p: p.rank is not None and not p.original)
ORIGINALS = _names(lambda p: p.original)


def of_family(names: tuple[str, ...], family: str) -> tuple[str, ...]:
    """``names`` of one family, in their order."""
    return tuple(n for n in names if PROTOCOL_TABLE[n].family == family)

