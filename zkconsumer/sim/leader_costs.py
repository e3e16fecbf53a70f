"""The leader mode's ZooKeeper requests per step, by operation, as the real connector sends them.

Read off ``zkconsumer/coordination`` (``coordination.mode=leader``), ``zk/multi.py``,
``offsets/fenced.py`` and ``datapath/partition_leaders.py``, and checked against the members'
``ZkRequestCounter`` on real servers (``tests/integration/test_leader_costs_real.py``). The
names are the counter's; ``multi`` is one request whatever it holds. ``B`` = brokers, ``T`` =
subscribed topics, ``k`` = partitions in the step.

Step: the call that sends it -> requests.

* register: ``Coordinator.register`` (``create_checked_ephemeral``) -> create;
* stand: ``LeaderElection._join`` (``create_sequential_ephemeral``) -> create;
* election: ``LeaderElection.check`` lists the candidates and watches the predecessor ->
  getChildren, and exists unless this member is the first;
* record: ``AssignmentWatch._fetch``, the read that sets its watch again -> getData;
* leader pass: ``LeaderDuty.run``'s ``WatchSet.arm`` of the ids, each registration not cached
  (``_members``) -> exists, getChildren, getData each;
* takeover, on top: ``LeaderDuty._partition_counts`` sets each topic's data watch and reads its
  count -> exists and getData per topic;
* publish: ``LeaderDuty.run``'s multi (candidate check, record write) -> multi;
* claim try: ``atomic_claims.claim``'s ``ensure_parents`` of ``owners/<t>``, then its multi ->
  exists per topic, multi;
* blocked claim: ``claim`` reads the owner znode in the way, ``HandoverExecutor._wait_for``
  watches it -> getData, exists;
* claimed: ``FencedOffsetStore.read``, each partition's offset -> getData each;
* fetcher start: ``PartitionFetchers.start`` makes a ``FetcherManager`` per partition, whose
  ``LeaderLookup.find`` lists the brokers, reads each and the partition's state -> per
  partition: getChildren, getData ``B + 1``;
* release: ``FencedOffsetStore.release`` (last commits + owner deletions) -> multi;
* leave: ``release_all``'s multi if it owns anything, then the registration -> multi, delete.

An eager member whose part changed stops every fetcher (``FetchGate.stop_all``) and starts
again the ones it keeps right after its release, so those partitions are looked up again.
Not counted: an ``offsets/<t>`` parent's check before the first offset write of a store's life
(``FencedOffsetStore._ensure_parents``, once), the fenced auto-commits (``commitMulti``,
commit traffic), retries after a connection loss.
"""

from __future__ import annotations

from collections.abc import Mapping

Ops = dict[str, int]

READ_OPERATIONS = ("getData", "getChildren", "exists")


def reads(ops: Mapping[str, int]) -> int:
    """How many of ``ops`` are reads (the rest are writes)."""
    return sum(n for op, n in ops.items() if op in READ_OPERATIONS)


REGISTER: Ops = {"create": 1}
STAND: Ops = {"create": 1}
RECORD_READ: Ops = {"getData": 1}
PUBLISH: Ops = {"multi": 1}
RELEASE: Ops = {"multi": 1}
UNREGISTER: Ops = {"delete": 1}
CLAIM_MULTI: Ops = {"multi": 1}
# The owner znode in the way is read (who holds it), then watched until its deletion.
BLOCKED_OWNER_READ: Ops = {"getData": 1}
OWNER_WATCH: Ops = {"exists": 1}
# ``WatchSet.arm`` of the membership child watch: exists, then getChildren, both watching.
MEMBERSHIP_EXISTS: Ops = {"exists": 1}
MEMBERSHIP_CHILDREN: Ops = {"getChildren": 1}


def election_check(leads: bool) -> Ops:
    """The candidates listed, and the predecessor watched unless this member leads."""
    return {"getChildren": 1} if leads else {"getChildren": 1, "exists": 1}


def joiner_first_pass() -> Ops:
    """A joiner's first pass after it stood: the election (another member leads) and its first
    read of the record (with the watch)."""
    return combined(election_check(leads=False), RECORD_READ)


def leader_reads(new_registrations: int, topics: int, taking_over: bool) -> Ops:
    """After the re-arm: each registration not cached; a new leader also sets each topic's
    data watch (exists) and reads its partition count (getData)."""
    extra = topics if taking_over else 0
    return {"getData": new_registrations + extra, "exists": extra}


def claim_prefix(topics: int) -> Ops:
    """``ensure_parents`` before every claim multi: an exists of each topic's owners znode."""
    return {"exists": topics}


def claimed(partitions: int) -> Ops:
    """Offsets of what a claim got (one getData each)."""
    return {"getData": partitions}


def fetchers_started(partitions: int, brokers: int) -> Ops:
    """One fetcher manager per partition, each looking its partition's leader up alone: the
    broker list (getChildren), every broker and the partition's state (getData)."""
    if partitions <= 0:
        return {}
    return {"getChildren": partitions, "getData": partitions * (brokers + 1)}


def combined(*parts: Mapping[str, int]) -> Ops:
    """The operations of several steps added up."""
    total: Ops = {}
    for part in parts:
        for op, n in part.items():
            if n:
                total[op] = total.get(op, 0) + n
    return total
