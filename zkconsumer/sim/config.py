"""What one simulated run is: the protocol, the group, the event, the seed and the settings.

:class:`SimConfig` is frozen and made of plain values so a grid of them can be shipped to Spark
workers and used as a row key. ``members`` is the stable group size *before* the event (a join
ends with ``members + 1``). The client and group settings default to the legacy consumer's
(``zookeeper.session.timeout.ms`` 6000, ``rebalance.backoff.ms`` 2000, ``rebalance.max.retries``
4); set them to what the real run used when comparing.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field

from zkconsumer.sim.calibration import Calibration
from zkconsumer.sim.placement import Placement
from zkconsumer.sim.protocols import PROTOCOL_INFO

log = logging.getLogger(__name__)

# Derived from the protocol table (zkconsumer.sim.protocols): add a protocol there.
PROTOCOLS = tuple(PROTOCOL_INFO)
EVENTS = ("join", "leave", "crash")
MEMBER_ORDERS = ("random", "start")


@dataclass(frozen=True)
class SimConfig:
    """One simulated event in one group; see the module docstring."""

    protocol: str
    members: int
    partitions: int
    event: str
    seed: int = 0
    calibration: Calibration = field(default_factory=Calibration)
    session_timeout_ms: int = 6000
    rebalance_backoff_ms: int = 2000
    rebalance_max_retries: int = 4
    heartbeat_interval_ms: int = 3000
    # Broker-side: a member that has not rejoined this long after a round opened is dropped
    # (the JoinGroup rebalance timeout = max.poll.interval.ms, 300 s by default).
    rebalance_timeout_ms: int = 300_000
    brokers: int = 1
    # Fraction of owned partitions whose consumed offset moved since the last commit: they are
    # written when a rebalance closes the fetchers (0 = an idle group; 1 = steady traffic).
    offsets_changed: float = 0.0
    auto_commit: bool = True
    # Messages produced per second over all partitions (0: an idle topic). A fetcher thread
    # waits for its next message at most one poll (fetcher_stop_*_ms), so traffic shortens how
    # long stopping it takes (zkconsumer.sim.legacy.fetcher_stop_s).
    messages_per_s: float = 0.0
    # A legacy member's ``consumer.timeout.ms``: its consume loop wakes at least this often
    # after its last message, which is when a clean leave's request is seen on an idle stream
    # (zkconsumer.sim.producer_schedule; used when the calibration has a delivery round).
    consumer_timeout_ms: int = 500
    # 0: every member on its own machine; k > 0: members spread over k Python processes whose
    # client-side request work shares one core each (the lab runs many connectors per process),
    # and costs more per request in a crowded process (client_cpu_scale).
    client_processes: int = 0
    # Where the members' client CPU runs (zkconsumer.sim.placement): processes that do one
    # member's CPU work at a time (the GIL) on shared cores, the ZooKeeper server on them too
    # when it runs on the same host. Set, it replaces client_processes; None keeps it.
    placement: Placement | None = None
    # How member ids sort, which decides every member's rank under range and roundrobin:
    # "random" (random ids, or members on many hosts: a joiner lands at a random rank) or
    # "start" (ids that sort in start order: the legacy default ``<group>_<host>-<ms>-<uuid>``
    # of members on one host, and the lab's ``m00000, m00001, ...``: a joiner ranks last, so
    # it takes its partitions from the last member only).
    member_order: str = "random"
    # The member that leaves or crashes, as a rank among the sorted ids (None: drawn at random).
    victim_rank: int | None = None
    # The leader mode's election: the rank (among the sorted ids) of the member that stood as
    # a candidate first, so leads; the others follow in id order. 0: the first in id order.
    first_candidate_rank: int = 0
    # The window requests are counted in, around [event, stable]: 0, 0 counts exactly that. A
    # measurement that samples cumulative counters counts from its last sample before the event
    # to its last sample before the stable instant plus a slack, so a steady group's heartbeats
    # in those margins count there too (spark.herd.validate passes the real runs' margins).
    count_from_s: float = 0.0  # seconds before the event
    count_until_s: float = 0.0  # seconds after the stable instant
    max_time_s: float = 86400.0  # a legacy herd at N = 10,000 runs for hours (server-bound)
    # (lo, hi): the event comes lo-hi s (uniform) after the group's last assignment, as in a
    # harness that applies it once the group has been quiet for a while (the lab's Spark herd
    # runs: zkconsumer.sim.formation); None: at an instant unrelated to the formation.
    event_after_change_s: tuple[float, float] | None = None
    # When the event came after the lab producer's first record in real runs of the same cell
    # (spark formation-spread's producer_event rows): a model run draws one of them, which
    # places the producer's cycle against the event (zkconsumer.sim.legacy.producer_schedule).
    # The lab's event lands a whole number of its looks after the coordinating task began, so
    # where the group forms within a look it falls at the same point of the cycle run after
    # run. Empty: the cycle's phase is uniform (an event unrelated to the producer).
    event_after_producer_s: tuple[float, ...] = ()
    # The share of formations that left stragglers where the run set's own formations were
    # read (spark formation-spread's straggler rows): it replaces the broker's formation rate
    # (zkconsumer.sim.formation.Spread.straggler_share) for a broker whose formation draws
    # them. The formation comes before the event, so it is the set's measured state, not an
    # outcome the model is judged on. None: the broker's rate.
    formation_straggler_share: float | None = None
    # How often a member of each creation rank in its process was a straggler in real
    # formations (weights; zkconsumer.sim.formation.Spread.straggler_rank_weights), for a
    # broker whose formation draws them. Empty: every candidate alike.
    formation_straggler_ranks: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOL_INFO and self.protocol.startswith("zk-leader-"):
            raise ValueError(f"protocol {self.protocol!r} is not simulated yet (a "
                             "leader-elected variant of the legacy protocol); choose one of "
                             f"{', '.join(PROTOCOL_INFO)}")
        if self.protocol not in PROTOCOL_INFO:
            raise ValueError(f"protocol must be one of {', '.join(PROTOCOL_INFO)}, "
                             f"got {self.protocol!r}")
        if self.event not in EVENTS:
            raise ValueError(f"event must be one of {', '.join(EVENTS)}, got {self.event!r}")
        minimum = 1 if self.event == "join" else 2
        if self.members < minimum:
            raise ValueError(f"members must be >= {minimum} for a {self.event}, "
                             f"got {self.members}")
        if self.partitions < 1:
            raise ValueError(f"partitions must be >= 1, got {self.partitions}")
        if self.brokers < 1:
            raise ValueError(f"brokers must be >= 1, got {self.brokers}")
        if not 0.0 <= self.offsets_changed <= 1.0:
            raise ValueError(f"offsets_changed must lie in [0, 1], got {self.offsets_changed}")
        for name in ("session_timeout_ms", "heartbeat_interval_ms", "rebalance_timeout_ms",
                     "consumer_timeout_ms"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        for name in ("rebalance_backoff_ms", "rebalance_max_retries", "client_processes",
                     "count_from_s", "count_until_s", "messages_per_s"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.placement is not None and self.client_processes:
            raise ValueError("give a placement or client_processes, not both (got placement "
                             f"{self.placement.name!r} and client_processes "
                             f"{self.client_processes})")
        if self.member_order not in MEMBER_ORDERS:
            raise ValueError(f"member_order must be one of {', '.join(MEMBER_ORDERS)}, "
                             f"got {self.member_order!r}")
        if self.victim_rank is not None and not 0 <= self.victim_rank < self.members:
            raise ValueError(f"victim_rank must lie in [0, {self.members}), "
                             f"got {self.victim_rank}")
        if not 0 <= self.first_candidate_rank < max(1, self.members):
            raise ValueError(f"first_candidate_rank must lie in [0, {max(1, self.members)}), "
                             f"got {self.first_candidate_rank}")
        share = self.formation_straggler_share
        if share is not None and not 0.0 <= share <= 1.0:
            raise ValueError(f"formation_straggler_share must lie in [0, 1], got {share}")
        ranks = self.formation_straggler_ranks
        if ranks and (min(ranks) < 0 or not sum(ranks)):
            raise ValueError(f"formation_straggler_ranks must be >= 0 with a positive sum, "
                             f"got {ranks}")
        if self.max_time_s <= 0:
            raise ValueError(f"max_time_s must be > 0, got {self.max_time_s}")
        lag = self.event_after_change_s
        if lag is not None and not (len(lag) == 2 and 0.0 <= lag[0] <= lag[1]):
            raise ValueError(f"event_after_change_s must be (lo, hi) with 0 <= lo <= hi, "
                             f"got {lag!r}")
        if any(not s >= 0.0 for s in self.event_after_producer_s):
            raise ValueError(f"event_after_producer_s must be seconds >= 0, "
                             f"got {self.event_after_producer_s!r}")

    @property
    def simulated_only(self) -> bool:
        """A model with no real run under its name: its rows have no real counterpart."""
        return PROTOCOL_INFO[self.protocol].simulated_only

    @property
    def family(self) -> str:
        """``zookeeper`` (members coordinate through ZooKeeper) or ``broker``."""
        return PROTOCOL_INFO[self.protocol].family

    @property
    def members_per_process(self) -> int:
        """Members in the fullest client process (1: each on its own machine)."""
        if self.placement is not None:
            return self.placement.members_per_process()
        if self.client_processes <= 0:
            return 1
        return math.ceil(self.members / self.client_processes)

    @property
    def client_cpu_scale(self) -> float:
        """Client CPU per ZooKeeper request over a lone client's, for this placement.

        ``Calibration.client_cpu_scale_by_clients`` at :attr:`members_per_process`: measured
        with that many kazoo clients busy at once in one process, which is what a rebalance
        is (every member of the process walks the registrations at the same time). 1 for
        members on machines of their own, or without a table.
        """
        if self.members_per_process <= 1:
            return 1.0
        return self.calibration.client_cpu_scale(self.members_per_process)

    @property
    def session_timeout_s(self) -> float:
        return self.session_timeout_ms / 1000.0

    @property
    def heartbeat_interval_s(self) -> float:
        return self.heartbeat_interval_ms / 1000.0
