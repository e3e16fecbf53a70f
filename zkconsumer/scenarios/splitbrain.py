"""The at-scale split-brain scenarios as pure rules: who is faulted, when, and for which protocol.

Three scenarios, each a seeded *plan*: a list of :class:`Action` (at what second after the event
instant, which member, what). The real job executes a plan with fault proxies and real members
spread over Spark tasks (every task applies the actions of its own members); the simulator
(:mod:`zkconsumer.sim.splitbrain`) reads the same plan. Nothing here touches a server.

- ``zombie``: a fraction of the members lose ZooKeeper (their proxy holds every byte) for
  ``cut_factor`` session timeouts, longer than the session, and keep their direct broker
  connections: the server expires them and the others take their partitions while they fetch.
- ``stale-view``: every member sees ZooKeeper with its own delay (drawn per member, uniform in
  ``[0, delay_ms_max]``, on the server->client direction), then ``burst_joins`` members join
  ``burst_gap_s`` apart: members decide from views of different ages.
- ``storm``: ``storm_joins`` joins and ``storm_leaves`` clean leaves at random instants of a
  ``storm_window_s`` window, with ``rebalance.max.retries`` = ``max_retries``: members whose
  rebalance runs out of attempts give up (the original's ConsumerRebalanceFailedException) and
  the group may sit with partitions nobody owns while every remaining member is done. With
  ``storm_owner_delay_ms`` the initial members see ZooKeeper that much late (server->client)
  from before the storm: an old group under load, whose releases come after the newcomers'
  single attempt has met their owner znodes.
"""

from __future__ import annotations

import enum
import logging
import random
from dataclasses import asdict, dataclass

from zkconsumer.scenarios.protocols import (
    PROTOCOL_TABLE,
    REAL_SPLIT_BRAIN,
    SPLIT_BRAIN,
    SPLIT_BRAIN_SCENARIOS,
    ZOOKEEPER,
    of_family,
)

log = logging.getLogger(__name__)

SCENARIOS = SPLIT_BRAIN_SCENARIOS
# The protocols of the split-brain runs at scale, and which scenarios apply to each, come from
# the protocol table.
PROTOCOLS = SPLIT_BRAIN
# Real mode runs the KIP-848 groups too (stale view and storm, on Apache Kafka 4): the simulator
# has no split-brain model of them.
REAL_PROTOCOLS = REAL_SPLIT_BRAIN
ZOOKEEPER_PROTOCOLS = of_family(PROTOCOLS, ZOOKEEPER)

ZOMBIE_NOT_APPLICABLE = (
    "broker-coordinated group: this zombie cuts a member's ZooKeeper connection, and a broker "
    "member has none (no ZooKeeper session to lose); a broker member cut from its coordinator "
    "is measured by the lab's zombie (experiment split-brain --scenario zombie), which pauses "
    "its broker connection")


class Kind(str, enum.Enum):
    """What an action does to its member."""

    CUT = "cut"          # hold all ZooKeeper traffic (the proxy's pause)
    HEAL = "heal"        # release it
    DELAY = "delay"      # server->client delay in ms (value) from now on
    JOIN = "join"        # start the member
    LEAVE = "leave"      # shut it down cleanly


@dataclass(frozen=True)
class Action:
    at_s: float          # seconds after the event instant
    member: str
    kind: Kind
    value: float = 0.0


@dataclass(frozen=True)
class ScenarioParams:
    """The scenarios' knobs (defaults are what the committed runs used)."""

    zombie_fraction: float = 0.1
    cut_factor: float = 2.0            # cut length in session timeouts (> 1: the session expires)
    delay_ms_max: float = 300.0
    burst_joins: int = 2
    burst_gap_s: float = 0.3
    storm_joins: int = 3
    storm_leaves: int = 3
    storm_window_s: float = 2.0
    max_retries: int = 1               # rebalance.max.retries during the storm
    storm_owner_delay_ms: float = 0.0  # the initial members' server->client delay in a storm

    def validate(self) -> None:
        if not 0.0 < self.zombie_fraction <= 0.5:
            raise ValueError(f"zombie fraction must lie in (0, 0.5], got {self.zombie_fraction}")
        if self.cut_factor <= 1.0:
            raise ValueError(f"cut factor must be > 1 (the cut must outlast the session), got "
                             f"{self.cut_factor}")
        if self.delay_ms_max < 0:
            raise ValueError(f"delay-ms-max must be >= 0, got {self.delay_ms_max}")
        if self.storm_owner_delay_ms < 0:
            raise ValueError(f"storm-owner-delay-ms must be >= 0, got "
                             f"{self.storm_owner_delay_ms}")
        for name in ("burst_joins", "storm_joins", "storm_leaves", "max_retries"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name.replace('_', '-')} must be >= 0, got "
                                 f"{getattr(self, name)}")
        if self.burst_joins < 1:
            raise ValueError(f"burst-joins must be >= 1, got {self.burst_joins}")
        if self.storm_joins + self.storm_leaves < 1:
            raise ValueError("a storm needs at least one join or leave")
        if self.max_retries < 1:
            raise ValueError(f"max-retries must be >= 1, got {self.max_retries}")
        if self.burst_gap_s < 0 or self.storm_window_s < 0:
            raise ValueError("burst-gap-s and storm-window-s must be >= 0")

    def to_json(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class Plan:
    """One run's scenario: the members present before the event and the actions after it."""

    scenario: str
    protocol: str
    members: int
    initial: tuple[str, ...]
    actions: tuple[Action, ...]

    @property
    def zombies(self) -> tuple[str, ...]:
        return tuple(sorted({a.member for a in self.actions if a.kind is Kind.CUT}))

    @property
    def joiners(self) -> tuple[str, ...]:
        return tuple(a.member for a in self.actions if a.kind is Kind.JOIN)

    @property
    def leavers(self) -> tuple[str, ...]:
        return tuple(a.member for a in self.actions if a.kind is Kind.LEAVE)

    @property
    def last_action_s(self) -> float:
        return max((a.at_s for a in self.actions), default=0.0)

    def final_members(self) -> tuple[str, ...]:
        gone = set(self.leavers)
        return tuple(sorted((set(self.initial) | set(self.joiners)) - gone))

    def for_task(self, task: int, tasks: int) -> list[Action]:
        """The actions of the members hosted by ``task`` (see :func:`task_of`)."""
        return [a for a in self.actions if task_of(a.member, tasks) == task]


def member_name(i: int) -> str:
    return f"m{i:05d}"


def member_index(name: str) -> int:
    return int(name[1:])


def task_of(member: str, tasks: int) -> int:
    """Member ``m<i>`` lives in task ``i % tasks`` (joiners too: the newcomers spread out)."""
    return member_index(member) % tasks


def not_applicable(protocol: str, scenario: str) -> str | None:
    """Why a (protocol, scenario) cell has no meaning, or None when it does."""
    if protocol not in REAL_PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; choose from "
                         f"{', '.join(REAL_PROTOCOLS)}")
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; choose from {', '.join(SCENARIOS)}")
    entry = PROTOCOL_TABLE[protocol]
    if scenario in entry.split_brain or scenario in entry.real_split_brain:
        return None
    return ZOMBIE_NOT_APPLICABLE if scenario == "zombie" else f"{scenario} does not apply"


def zombie_count(members: int, fraction: float) -> int:
    """How many members are cut off: the fraction, rounded, at least one, at most half."""
    return max(1, min(members // 2, round(members * fraction)))


def plan(scenario: str, protocol: str, members: int, params: ScenarioParams, seed: int,
         session_timeout_ms: int) -> Plan:
    """The seeded plan of one run (the same seed gives the same plan for every protocol)."""
    if members < (1 if scenario == "storm" else 2):
        raise ValueError(f"members must be >= 2 for {scenario} (a split needs two sides), got "
                         f"{members}" if scenario != "storm" else
                         f"members must be >= 1 for a storm, got {members}")
    params.validate()
    reason = not_applicable(protocol, scenario)
    if reason:
        raise ValueError(f"{scenario} for {protocol}: {reason}")
    rng = random.Random(f"{scenario}/{members}/{seed}")
    initial = tuple(member_name(i) for i in range(members))
    actions: list[Action] = []
    if scenario == "zombie":
        cut_s = params.cut_factor * session_timeout_ms / 1000.0
        for m in sorted(rng.sample(initial, zombie_count(members, params.zombie_fraction))):
            actions += [Action(0.0, m, Kind.CUT), Action(round(cut_s, 3), m, Kind.HEAL)]
    elif scenario == "stale-view":
        joiners = [member_name(members + j) for j in range(params.burst_joins)]
        for m in (*initial, *joiners):
            actions.append(Action(0.0, m, Kind.DELAY,
                                  round(rng.uniform(0.0, params.delay_ms_max), 1)))
        for j, m in enumerate(joiners):
            actions.append(Action(round(0.1 + j * params.burst_gap_s, 3), m, Kind.JOIN))
    else:
        leaves = min(params.storm_leaves, members - 1)
        leavers = sorted(rng.sample(initial, leaves))
        joiners = [member_name(members + j) for j in range(params.storm_joins)]
        changes = [(m, Kind.LEAVE) for m in leavers] + [(m, Kind.JOIN) for m in joiners]
        if params.storm_owner_delay_ms > 0:
            actions += [Action(0.0, m, Kind.DELAY, params.storm_owner_delay_ms)
                        for m in initial]
        for m, kind in changes:
            actions.append(Action(round(rng.uniform(0.0, params.storm_window_s), 3), m, kind))
    return Plan(scenario, protocol, members, initial,
                tuple(sorted(actions, key=lambda a: (a.at_s, a.member, a.kind.value))))


SMALL_RETRY_BUDGET = 2  # at or below it, forming the group can spend the whole budget


class Formation(str, enum.Enum):
    """How a real run's initial members start.

    ``together``: every task starts its members at once. ``one-at-a-time``: one member at a
    time across all tasks, each newcomer restarted until its arrival ends in a stable group.
    ``auto`` (the default) starts leader-mode members one at a time when the retry budget is
    small, and everybody else together: measured at N = 100, P = 64 with one attempt, the legacy
    group formed when its members started together, and never member by member (every newcomer
    met owner znodes not yet released), while the leader mode formed member by member.
    """

    AUTO = "auto"
    TOGETHER = "together"
    ONE_AT_A_TIME = "one-at-a-time"


def formation_for(choice: Formation, protocol: str, budget: int) -> Formation:
    """The formation a run uses. Broker groups always start together: they have no retry
    budget to spend on forming the group."""
    if protocol not in ZOOKEEPER_PROTOCOLS:
        return Formation.TOGETHER
    if choice is not Formation.AUTO:
        return choice
    if protocol == "zk-leader-range" and budget <= SMALL_RETRY_BUDGET:
        return Formation.ONE_AT_A_TIME
    return Formation.TOGETHER


def max_retries_for(scenario: str, params: ScenarioParams, default: int) -> int:
    """``rebalance.max.retries`` of a run: the storm's finite budget, else the default."""
    return params.max_retries if scenario == "storm" else default


def parse_list(text: str, choices: tuple[str, ...], what: str) -> tuple[str, ...]:
    items = tuple(x.strip() for x in text.split(",") if x.strip())
    bad = [x for x in items if x not in choices]
    if bad or not items:
        raise ValueError(f"--{what} {text!r}: {', '.join(bad) or 'empty'} not among "
                         f"{', '.join(choices)}")
    return items
