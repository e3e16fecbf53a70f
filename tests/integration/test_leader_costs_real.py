"""The leader mode's request costs on real servers, against the simulator's leader model.

Real leader-mode connectors go through a join that moves nothing and a clean leave of a member
that owns nothing (2 partitions, 3 members: nobody's share changes, so no claim can race a
release whatever the timing). Each member's ``ZkRequestCounter`` must show exactly the requests
its role costs, and a member whose share did not change exactly one: its read of the new record
(no listing of the election's candidates, which would cost every member O(N) bytes per
publication). The leave, which has no race, must cost what the simulator's ``zk-leader-range``
model counts for the same cell, reads and writes each.

A third test moves partitions: a join where the joiner's claim meets the owner znode of a member
that releases late (its rebalance listener sleeps, as the model's fetcher stop does), so the claim
is blocked, waits and succeeds on its second try; then the joiner leaves and a member claims what
it released. Both are race-free in that order, and the group's requests must equal the model's
operation by operation (``zkconsumer/sim/leader_costs.py`` names the call behind each).

A fourth test shifts shares: the first member, which leads, leaves 4 members over 8 partitions,
so the next one takes over and two survivors move (one releases and claims, one only gains and,
eager, starts its kept partitions again); its claim is blocked by the other's late release.
Every request, op by op, is what the model counts for the same leave with the blocked try added
(the model's own stop leaves that race to chance).

A second test commits offsets: the fenced commit is counted as ``commitMulti`` (commit traffic,
left out of the herd's coordination requests as the legacy ``setData`` is) and checks the
persistent parent of the offsets only once, not at every commit.
"""

from __future__ import annotations

import time

from connector_helpers import (
    StreamDrain,
    exactly_one_owner,
    fast_config,
    request_counters,
    settled_request_counters,
    split_reads_writes,
    wait_until,
)

from zkconsumer import ZookeeperConsumerConnector
from zkconsumer.admin import produce
from zkconsumer.metrics import COMMIT_MULTI
from zkconsumer.sim import Calibration, SimConfig, simulate
from zkconsumer.sim import leader_costs as lc

PARTITIONS = 2
QUIET_S = 1.0
NO_RACE = Calibration(jitter_cv=0.0, fetcher_stop_min_ms=0.0, fetcher_stop_max_ms=0.0)


def _delta(before: dict[str, dict[str, int]], after: dict[str, dict[str, int]]
           ) -> dict[str, dict[str, int]]:
    """Per member, the operations whose count grew."""
    out: dict[str, dict[str, int]] = {}
    for member, ops in after.items():
        grown = {op: n - before.get(member, {}).get(op, 0) for op, n in ops.items()}
        out[member] = {op: n for op, n in grown.items() if n}
    return out


def _group_ops(delta: dict[str, dict[str, int]]) -> dict[str, int]:
    """The group's requests by operation in a per-member delta."""
    total: dict[str, int] = {}
    for ops in delta.values():
        for op, n in ops.items():
            total[op] = total.get(op, 0) + n
    return total


def _reads_writes(delta: dict[str, dict[str, int]]) -> tuple[int, int]:
    """The group's (reads, writes) in a per-member delta."""
    return split_reads_writes(_group_ops(delta))


def _simulated(members: int, event: str, victim_rank: int = 0) -> tuple[int, int]:
    r = simulate(SimConfig("zk-leader-range", members, PARTITIONS, event, seed=1, brokers=1,
                           calibration=NO_RACE, member_order="start", victim_rank=victim_rank,
                           auto_commit=False, count_until_s=60.0))
    return r.zk_reads, r.zk_writes


class SlowRelease:
    """A rebalance listener that holds its member's release back ``delay_s``."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s

    def before_releasing_partitions(self, partitions: dict[str, set[int]]) -> None:
        time.sleep(self.delay_s)

    def before_starting_fetchers(self, consumer_id: str, assignment: dict) -> None:
        pass


def _member(zk_connect: str, group: str, i: int, **overrides: object
            ) -> ZookeeperConsumerConnector:
    return ZookeeperConsumerConnector(fast_config(
        zk_connect, group, consumer_id=f"c{i}", coordination_mode="leader", **overrides))


def _consume_until_owned(conns: list[ZookeeperConsumerConnector], kazoo_client: object,
                         group: str, topic: str, partitions: int, what: str) -> None:
    """Each member starts consuming ``topic``, one after the other (the first stands first
    and leads), until every partition has exactly one owner."""
    for c in conns:
        c.create_message_streams({topic: 1})
    wait_until(lambda: exactly_one_owner(kazoo_client, group, topic, partitions), 30, what)


def test_a_publication_costs_an_unchanged_member_one_read_and_the_model_counts_the_rest(
        zk_connect, broker, new_topic, unique, kazoo_client):
    topic, group = new_topic(PARTITIONS), unique("leadercosts")
    conns: list[ZookeeperConsumerConnector] = []
    try:
        conns = [_member(zk_connect, group, i, auto_commit_enable=False) for i in (0, 1)]
        _consume_until_owned(conns, kazoo_client, group, topic, PARTITIONS,
                             "two members owning both partitions")
        before = settled_request_counters(conns, QUIET_S)

        # 1. c2 joins: range over 3 members gives it nothing; c0 and c1 keep their partition.
        joiner = _member(zk_connect, group, 2, auto_commit_enable=False)
        notified: list[dict] = []
        joiner.add_event_listener(lambda e: notified.append(e) if e["type"] == "watch_fired"
                                  and e.get("path", "").endswith("/assignment") else None)
        conns.append(joiner)
        joiner.create_message_streams({topic: 1})
        after = settled_request_counters(conns, QUIET_S)
        join = _delta(before, after)
        # the unchanged member reads the new record, nothing else; the leader re-arms its
        # membership watch (exists, getChildren), reads the joiner's registration, publishes
        # and reads what it published; the joiner registers, stands, lists the candidates,
        # watches its predecessor and reads the record, once more if it was notified (whether
        # its first read came before the publication is a race)
        assert join[f"{group}_c1"] == {"getData": 1}, join
        assert join[f"{group}_c0"] == {"exists": 1, "getChildren": 1, "getData": 2,
                                       "multi": 1}, join
        assert join[f"{group}_c2"] == {"create": 2, "getChildren": 1, "exists": 1,
                                       "getData": 1 + len(notified)}, join

        # 2. c2 (owning nothing) leaves cleanly.
        before = after
        leaver = conns.pop()
        leaver.shutdown()
        after = {**settled_request_counters(conns, QUIET_S), **request_counters([leaver])}
        leave = _delta(before, after)
        assert leave[f"{group}_c1"] == {"getData": 1}, leave
        assert _reads_writes(leave) == _simulated(3, "leave", victim_rank=2), leave
        assert exactly_one_owner(kazoo_client, group, topic, PARTITIONS)
    finally:
        for c in conns:
            c.shutdown()


MOVING_PARTITIONS = 4
RELEASE_DELAY_MS = 1500.0
# No jitter; watches delivered as fast as they are here (so the leader publishes before the
# joiner's first read of the record, as the real joiner reads it); the donor's release comes
# RELEASE_DELAY_MS after its record read (its fetcher stop there, its listener's sleep here).
LATE_RELEASE = Calibration(jitter_cv=0.0, watch_delivery_ms=0.3,
                           fetcher_stop_min_ms=RELEASE_DELAY_MS,
                           fetcher_stop_max_ms=RELEASE_DELAY_MS)


def _simulated_ops(members: int, event: str, victim_rank: int | None = None) -> tuple[
        dict[str, int], int]:
    """The model's requests by operation and its most attempts of a member, in the cell."""
    r = simulate(SimConfig("zk-leader-range", members, MOVING_PARTITIONS, event, seed=1,
                           brokers=1, calibration=LATE_RELEASE, member_order="start",
                           victim_rank=victim_rank, auto_commit=False, count_until_s=60.0))
    return r.zk_operations, r.rebalance_attempts


def test_moved_partitions_cost_what_the_model_counts_operation_by_operation(
        zk_connect, broker, new_topic, unique, kazoo_client):
    topic, group = new_topic(MOVING_PARTITIONS), unique("leadermoves")
    conns: list[ZookeeperConsumerConnector] = []
    try:
        conns = [_member(zk_connect, group, i, auto_commit_enable=False) for i in (0, 1)]
        conns[1].set_consumer_rebalance_listener(SlowRelease(RELEASE_DELAY_MS / 1000.0))
        _consume_until_owned(conns, kazoo_client, group, topic, MOVING_PARTITIONS,
                             "two members owning the four partitions")
        before = settled_request_counters(conns, QUIET_S)

        # 1. c2 joins: range over 3 gives c0 [0, 1], c1 [2], c2 [3]. c1 (eager) stops both its
        # fetchers, releases 3 late and starts 2 again; c2's claim of 3 is blocked, reads the
        # owner znode, watches it and claims again once it is deleted.
        joiner = _member(zk_connect, group, 2, auto_commit_enable=False)
        events: list[dict] = []
        joiner.add_event_listener(events.append)
        conns.append(joiner)
        joiner.create_message_streams({topic: 1})
        wait_until(lambda: exactly_one_owner(kazoo_client, group, topic, MOVING_PARTITIONS),
                   30, "three members owning the four partitions")
        after = settled_request_counters(conns, 2 * QUIET_S)
        join = _group_ops(_delta(before, after))
        waited = [e for e in events if e["type"] == "claim_waiting"]
        # whether the joiner's first read of the record came before the publication is the one
        # race: then it was notified and read the record once more
        notified = [e for e in events if e["type"] == "watch_fired"
                    and e.get("path", "").endswith("/assignment")]
        model, attempts = _simulated_ops(2, "join")
        assert len(waited) == 1 and attempts == 2, (events, attempts)
        expected = {**model, "getData": model["getData"] + len(notified)}
        assert join == expected, (join, model, len(notified))

        # 2. c2 leaves: it releases 3 and unregisters; c1 claims 3 (already free) and, eager,
        # starts 2 again beside it.
        before = after
        leaver = conns.pop()
        leaver.shutdown()
        after = {**settled_request_counters(conns, 2 * QUIET_S), **request_counters([leaver])}
        leave = _group_ops(_delta(before, after))
        model, attempts = _simulated_ops(3, "leave", victim_rank=2)
        assert leave == model and attempts == 1, (leave, model, attempts)
        assert exactly_one_owner(kazoo_client, group, topic, MOVING_PARTITIONS)
    finally:
        for c in conns:
            c.shutdown()


def test_fenced_commits_are_counted_as_commits_and_check_their_parent_once(
        zk_connect, broker, new_topic, unique, kazoo_client):
    topic, group = new_topic(1), unique("leadercommits")
    conn = _member(zk_connect, group, 0, auto_commit_enable=False)
    drain = None
    try:
        drain = StreamDrain(conn.create_message_streams({topic: 1})[topic])
        wait_until(lambda: exactly_one_owner(kazoo_client, group, topic, 1), 30, "an owner")
        for round_ in range(3):
            value = f"v{round_}".encode()
            produce(broker.bootstrap, topic, [value.decode()], partition=0)
            wait_until(lambda v=value: v in drain.values(), 30, f"{value!r} consumed")
            before = request_counters([conn])
            conn.commit_offsets()
            grown = _delta(before, request_counters([conn]))[conn.consumer_id]
            if round_ == 0:  # the offsets znode's parent is checked (and created) once
                assert grown[COMMIT_MULTI] == 1 and "multi" not in grown, grown
            else:  # later commits send the fenced multi and nothing else
                assert grown == {COMMIT_MULTI: 1}, grown
    finally:
        if drain is not None:
            drain.stop()
        conn.shutdown()


SHIFTING_PARTITIONS = 8
# A claim that met an owner znode still there and succeeded on its second try costs, on top of
# the first try: the owner znode read, its exists watch, and the second try's owners check and
# multi (the join above checks these against the real connector).
BLOCKED_TRY = lc.combined(lc.BLOCKED_OWNER_READ, lc.OWNER_WATCH, lc.claim_prefix(1),
                          lc.CLAIM_MULTI)


def _shifted_ops(members: int, victim_rank: int) -> dict[str, int]:
    """The model's requests by operation in the shifting cell, without its blocked tries (the
    model's fetcher stop delays every changed member alike, so whether the gainer's claim comes
    before the donor's release is its own race; the real one is fixed by the listener)."""
    r = simulate(SimConfig("zk-leader-range", members, SHIFTING_PARTITIONS, "leave", seed=1,
                           brokers=1, calibration=LATE_RELEASE, member_order="start",
                           victim_rank=victim_rank, auto_commit=False, count_until_s=60.0))
    blocked = r.rebalance_attempts - 1
    ops = {op: n - blocked * BLOCKED_TRY.get(op, 0) for op, n in r.zk_operations.items()}
    return {op: n for op, n in ops.items() if n}


def test_the_first_member_leaving_shifts_shares_at_the_cost_the_model_counts(
        zk_connect, broker, new_topic, unique, kazoo_client):
    """Range over 4 members and 8 partitions gives c0 [0, 1], c1 [2, 3], c2 [4, 5], c3 [6, 7];
    c0 (the leader, started first) leaves: over 3, c1 [0, 1, 2], c2 [3, 4, 5], c3 [6, 7].

    c0 releases [0, 1] and unregisters; c1 takes over (candidates listed; membership re-armed,
    every registration and the topic read), publishes, reads the record, stops both fetchers,
    releases 3 late (its listener sleeps), claims [0, 1] and starts 0, 1 and (eager) 2 again;
    c2, which only gains, also stops both fetchers and starts 4, 5 again, and its claim of 3
    is blocked until c1's release; c3 reads the record and nothing else."""
    topic, group = new_topic(SHIFTING_PARTITIONS), unique("leadershift")
    conns: list[ZookeeperConsumerConnector] = []
    try:
        conns = [_member(zk_connect, group, i, auto_commit_enable=False) for i in range(4)]
        conns[1].set_consumer_rebalance_listener(SlowRelease(RELEASE_DELAY_MS / 1000.0))
        _consume_until_owned(conns, kazoo_client, group, topic, SHIFTING_PARTITIONS,
                             "four members owning the eight partitions")  # c0 leads
        before = settled_request_counters(conns, 2 * QUIET_S)
        events: list[dict] = []
        conns[2].add_event_listener(events.append)
        leaver = conns.pop(0)
        leaver.shutdown()
        wait_until(lambda: exactly_one_owner(kazoo_client, group, topic, SHIFTING_PARTITIONS),
                   30, "three members owning the eight partitions")
        after = {**settled_request_counters(conns, 2 * QUIET_S), **request_counters([leaver])}
        delta = _delta(before, after)
        assert delta[f"{group}_c3"] == {"getData": 1}, delta
        # c2: the record; two claim tries (owners check, multi), the owner znode's read and
        # watch between them; the offset of 3; a leader lookup each for 3, 4 and 5
        assert delta[f"{group}_c2"] == {"getData": 1 + 1 + 1 + 3 * 2, "exists": 3,
                                        "multi": 2, "getChildren": 3}, delta
        waited = [e for e in events if e["type"] == "claim_waiting"]
        assert len(waited) == 1, events
        leave = _group_ops(delta)
        model = _shifted_ops(4, victim_rank=0)
        expected = lc.combined(model, BLOCKED_TRY)
        assert leave == expected, (leave, model)
    finally:
        for c in conns:
            c.shutdown()
