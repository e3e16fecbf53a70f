"""Requests per protocol step: the ONE table to align with the real connector's counters.

Legacy rows are read off the real code (``zkconsumer/rebalance/attempt.py`` and
``rebalancer.py``, ``membership/triggers.py``, ``offsets/zookeeper.py``,
``datapath/partition_leaders.py``, ``connector.py``) as of this writing; every
request there goes through ``ZkSession`` and is counted once per try by ``ZkRequestCounter``
(``getData``/``getChildren``/``exists`` are reads; ``create``/``delete``/``setData`` writes).
``B`` = brokers, ``T`` = subscribed topics (1 here), ``N`` = members in the view read,
``k`` = partitions claimed, ``o`` = partitions owned before, ``c`` = owned partitions whose
offset changed since the last commit.

| step (where in the code)                                              | reads  | writes |
|-----------------------------------------------------------------------|--------|--------|
| register (``RebalanceExecutor.register``: 3 ancestors, then the znode) | 0     | 4      |
| arm watches, joiner (``WatchSet.arm``: exists + getChildren ids, exists t) | 2 + T | 0   |
| arm membership watch after a notification (exists + getChildren ids)  | 2      | 0      |
| own registration (``attempt``: session.get(my_path))                  | 1      | 0      |
| brokers, twice (``_read_brokers``: getChildren /brokers/ids + getData each) | 2+2B | 0   |
| commit on close_fetchers (``ZookeeperOffsetStore.commit``: setData)   | 0      | c      |
| release (``_release``: delete each owner znode held)                  | 0      | o      |
| group view (``_read_view``: own registration, ids twice, each + topics) | 3+N+T  | 0      |
| offsets (``OffsetStore.read``: getData per claimed partition)         | k      | 0      |
| claim (``_claim``: create per claimed partition)                      | 0      | k      |
| claim hit NodeExists (``_claim``: getData to compare the owner)       | 1 each | 0      |
| rollback (``_claim``: delete each znode created in the attempt)       | 0      | 1 each |
| leader lookup (``LeaderLookup.find``: broker list + state per partition) | k+1+B (k>0) | 0 |
| clean shutdown (``connector._release_znodes``: owners + registration) | 0      | o + 1  |

The reads are the original's, one for one (the original's ``getCluster`` and
``getAllBrokersInCluster``, its two ``constructTopicCount``, ``getConsumersPerTopic`` and
``getConsumersInGroup``, ZkClient's ``exists`` before each watch, ``ZKCheckedEphemeral``'s
ancestors, the leader finder's broker list), but the leader lookup's state reads, where the
original asked a broker (docs/herd-operations.md). A failed attempt's ``after_failed_attempt``
commits nothing (the registry was emptied by the release). A retry repeats "brokers" through
"leader lookup" without the watch re-arm. Not modelled (one-off or outside the event window):
parent-znode creates on the first claim or commit of a path, a member's one ``exists /`` before
its first claim (Kafka's namespace check), the auto-commit scheduler's periodic writes,
``exists`` on ``/brokers/topics`` for wildcard subscribers, retries after connection loss.

So a join of one member to ``N`` members owning ``P`` partitions, with no conflict, costs

    (N+1)·(N+1) [group views] + (N+1)·(6 + 2B + T) + 2N [re-arms] + 6 + T [joiner]
    + 4P [release, offsets, claim, leader state] + c + Σ_{k>0} (1 + B) [leader brokers]

(:func:`clean_join_requests`): the spec's ``N² + aN + 3P`` plus the leader lookups.

Broker-side protocols count Kafka requests to the group coordinator: FindCoordinator on join,
JoinGroup and SyncGroup per member per round, Heartbeat every ``heartbeat.interval.ms``,
OffsetCommit when a member revokes partitions with auto-commit, OffsetFetch when it gets new
ones, LeaveGroup on a clean leave; KIP-848 replaces JoinGroup/SyncGroup/Heartbeat by
ConsumerGroupHeartbeat.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

from zkconsumer.sim.assignment import range_share

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Cost:
    """ZooKeeper requests of one step."""

    reads: int = 0
    writes: int = 0

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.reads + other.reads, self.writes + other.writes)

    @property
    def total(self) -> int:
        return self.reads + self.writes


# --- legacy: one row of the table each ----------------------------------------------------------

REGISTER = Cost(writes=4)  # /consumers, /consumers/<g>, .../ids (ZKCheckedEphemeral), the znode
REARM_MEMBERSHIP_WATCH = Cost(reads=2)  # ZkClient: exists, then getChildren, both watching
OWN_REGISTRATION = Cost(reads=1)
OWNER_DELETE = Cost(writes=1)
OWNER_CREATE = Cost(writes=1)
OFFSET_COMMIT = Cost(writes=1)


def arm_watches_first(topics: int) -> Cost:
    """The joiner's first ``WatchSet.arm``: exists + children of the group, exists of each
    topic (ZkClient's ``subscribeChildChanges`` and ``subscribeDataChanges``)."""
    return Cost(reads=2 + topics)


def read_brokers(brokers: int) -> Cost:
    return Cost(reads=1 + brokers)


def read_group(members_in_view: int, topics: int) -> Cost:
    """``AssignmentContext``: the own registration, the group listed twice, each registration
    and each topic."""
    return Cost(reads=3 + members_in_view + topics)


def read_offsets(claimed: int) -> Cost:
    return Cost(reads=claimed)


def leader_lookup(claimed: int, brokers: int) -> Cost:
    """The leader finder after a successful attempt (background thread, same session): the
    broker list and every broker, then the state of each claimed partition; nothing when the
    attempt claimed nothing."""
    return Cost(reads=claimed + 1 + brokers) if claimed else Cost()


def attempt_prefix(brokers: int) -> Cost:
    """Steps 1-2 of every attempt: the broker list (``getCluster``), own registration and the
    broker list again (``getAllBrokersInCluster``)."""
    return OWN_REGISTRATION + read_brokers(brokers) + read_brokers(brokers)


def clean_join_requests(members: int, partitions: int, brokers: int = 1, topics: int = 1,
                        changed: int = 0) -> int:
    """ZooKeeper requests of a join to a stable group when no claim conflicts, group-wide.

    Every one of the ``members + 1`` members runs one attempt; the old members re-arm their
    watch and release everything they own (all ``partitions``); the joiner registers and arms
    its watches; ``changed`` offsets are written when the fetchers close.
    """
    n = members + 1
    total = n * (attempt_prefix(brokers) + read_group(n, topics)).total
    total += members * REARM_MEMBERSHIP_WATCH.total
    total += REGISTER.total + arm_watches_first(topics).total
    total += partitions * OWNER_DELETE.total + changed * OFFSET_COMMIT.total
    for rank in range(n):  # shares have the same sizes under range and roundrobin
        k = len(range_share(rank, n, partitions))
        total += (read_offsets(k) + leader_lookup(k, brokers)).total + k * OWNER_CREATE.total
    return total


# --- the same table, by ZooKeeper operation (as ZkRequestCounter names them) -------------------

OPERATIONS = ("getData", "getChildren", "exists", "create", "delete", "setData")


def _ops(**counts: int) -> dict[str, int]:
    return {op: counts.get(op, 0) for op in OPERATIONS}


def _add(total: dict[str, int], part: dict[str, int]) -> None:
    for op, n in part.items():
        total[op] += n


def attempt_operations(members_in_view: int, owned_before: int, claimed: int, brokers: int,
                       topics: int) -> dict[str, int]:
    """One successful, conflict-free attempt of one member and its leader lookup, by operation.

    Own registration (getData, twice), the broker list twice (getChildren + getData each),
    release (delete per owned partition), the group view (getChildren of ids twice + getData of
    each registration and of each topic), offsets (getData per claimed partition), claims
    (create each), leader lookup (getChildren of the brokers, getData of each broker and of
    each claimed partition's state).
    """
    lookup = leader_lookup(claimed, brokers).reads
    return _ops(getData=2 + 2 * brokers + members_in_view + topics + claimed
                + max(lookup - 1, 0),
                getChildren=2 + 2 + (1 if lookup else 0), create=claimed, delete=owned_before)


def clean_join_operations(members: int, partitions: int, brokers: int = 1, topics: int = 1
                          ) -> dict[str, int]:
    """:func:`clean_join_requests` by operation: ``members`` -> ``members + 1``, no conflict,
    no offset changed. The old members re-arm their watch (exists, getChildren), the joiner
    registers (its ancestors and itself: create) and arms its watches (exists and getChildren
    of ids, exists of each topic)."""
    n = members + 1
    total = _ops(getChildren=members + 1, exists=members + 1 + topics, create=4)
    for rank in range(n):
        before = len(range_share(rank, members, partitions)) if rank < members else 0
        k = len(range_share(rank, n, partitions))
        _add(total, attempt_operations(n, before, k, brokers, topics))
    return total


def clean_leave_operations(members: int, partitions: int, leaver: int, brokers: int = 1,
                           topics: int = 1) -> dict[str, int]:
    """A clean leave of member rank ``leaver`` from ``members``, no conflict, nothing changed.

    The leaver deletes its owner znodes, then its registration; each of the ``members - 1``
    others is notified, re-arms its watch (exists, getChildren) and runs one attempt.
    """
    if not 0 <= leaver < members:
        raise ValueError(f"leaver rank {leaver} is not one of {members} members")
    m = members - 1
    total = _ops(delete=len(range_share(leaver, members, partitions)) + 1, getChildren=m,
                 exists=m)
    for new_rank, old_rank in enumerate(r for r in range(members) if r != leaver):
        before = len(range_share(old_rank, members, partitions))
        k = len(range_share(new_rank, m, partitions))
        _add(total, attempt_operations(m, before, k, brokers, topics))
    return total


# --- broker-side protocols ---------------------------------------------------------------------

FIND_COORDINATOR = 1
JOIN_GROUP = 1
# A new member's first JoinGroup (no member id) is answered MEMBER_ID_REQUIRED with the id to
# use, and it sends the JoinGroup again with it (KIP-394, JoinGroup v4+, librdkafka >= 1.4):
# a joiner sends two JoinGroups in its first round.
JOINER_JOIN_GROUPS = 2
SYNC_GROUP = 1
HEARTBEAT = 1
OFFSET_COMMIT_REQUEST = 1
OFFSET_FETCH_REQUEST = 1
LEAVE_GROUP = 1
CONSUMER_GROUP_HEARTBEAT = 1


def heartbeats(phase_s: float, interval_s: float, start_s: float, end_s: float) -> int:
    """Heartbeats at ``phase_s + k·interval_s`` (any integer k) that fall in ``[start_s, end_s)``.

    The caller starts the window no earlier than the member's first heartbeat.
    """
    if end_s <= start_s:
        return 0
    first = math.ceil((start_s - phase_s) / interval_s - 1e-12)
    last = math.ceil((end_s - phase_s) / interval_s - 1e-12) - 1
    return max(0, last - first + 1)
