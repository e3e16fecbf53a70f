"""The lab's metrics, computed from hand-written records (no servers).

Each scenario is a small story told as the records members would write: two members share four
partitions, something happens at t=10, and the metric is what a reader of the Gantt chart would
count by hand.
"""

from __future__ import annotations

import json
import random

import pytest

from zkconsumer.lab.intervals import build_intervals, stable_since
from zkconsumer.lab.metrics import (
    EventWindow,
    Produced,
    double_owned_intervals,
    duplicates,
    event_metrics,
    lost,
    members_paused,
    partition_seconds_unavailable,
    partitions_moved,
    partitions_revoked,
    request_deltas,
)
from zkconsumer.lab.records import RecordTail, RecordWriter, RunRecords, Timeline


def tl(recs: RunRecords, ts: float, member: str, what: str, *ps: int, inc: int = 0) -> None:
    recs.add({"k": "tl", "ts": ts, "m": member, "i": inc, "w": what, "ps": list(ps)})


def lc(recs: RunRecords, ts: float, member: str, what: str, inc: int = 0) -> None:
    recs.add({"k": "lc", "ts": ts, "m": member, "i": inc, "w": what})


def formed(recs: RunRecords) -> None:
    """m0 fetches 0,1 and m1 fetches 2,3 from t=1."""
    for m, ps in (("m0", (0, 1)), ("m1", (2, 3))):
        tl(recs, 1, m, "assigned", *ps)
        tl(recs, 1, m, "fetching", *ps)


def eager_join(recs: RunRecords) -> None:
    """m2 joins at 10; everyone stops at 11; new assignment fetching at 13 (m0:0,1 m1:2 m2:3)."""
    formed(recs)
    lc(recs, 10, "m2", "starting")
    tl(recs, 11, "m0", "revoked", 0, 1)
    tl(recs, 11, "m1", "revoked", 2, 3)
    tl(recs, 13, "m0", "fetching", 0, 1)
    tl(recs, 13, "m1", "fetching", 2)
    tl(recs, 13.5, "m2", "fetching", 3)


def cooperative_join(recs: RunRecords) -> None:
    """m2 joins at 10; only m1 gives up partition 3 at 12; m2 fetches it from 20."""
    formed(recs)
    tl(recs, 12, "m1", "revoked", 3)
    tl(recs, 20, "m2", "fetching", 3)


def test_eager_join_pauses_everyone_and_is_stable_when_the_newcomer_fetches() -> None:
    recs = RunRecords()
    eager_join(recs)
    w = EventWindow(10, 30, ("m0", "m1", "m2"))
    ivs = build_intervals(recs, w.end)
    assert stable_since(ivs, 4, w.start, w.end, w.required_members) == 13.5
    assert members_paused(ivs, w, {}) == ["m0", "m1"]
    # 0,1,2 unfetched 11->13 (3 x 2 s), 3 unfetched 11->13.5 (2.5 s)
    assert partition_seconds_unavailable(ivs, 4, w) == pytest.approx(8.5)


def test_cooperative_join_pauses_only_the_member_that_gives_a_partition_up() -> None:
    recs = RunRecords()
    cooperative_join(recs)
    w = EventWindow(10, 30, ("m0", "m1", "m2"))
    ivs = build_intervals(recs, w.end)
    assert members_paused(ivs, w, {}) == ["m1"]
    assert stable_since(ivs, 4, w.start, w.end, w.required_members) == 20
    assert partition_seconds_unavailable(ivs, 4, w) == pytest.approx(8.0)


def test_kip848_join_revokes_only_what_moves() -> None:
    """As a KIP-848 member writes it: m1 gives up partition 3 in one heartbeat (on_revoke of
    that partition alone; its on_assign of nothing writes no timeline), m2 gets it at its next
    heartbeat."""
    recs = RunRecords()
    formed(recs)
    lc(recs, 10, "m2", "starting")
    tl(recs, 11, "m1", "revoked", 3)
    tl(recs, 12, "m2", "assigned", 3)
    tl(recs, 12, "m2", "fetching", 3)
    w = EventWindow(10, 30, ("m0", "m1", "m2"))
    ivs = build_intervals(recs, w.end)
    assert members_paused(ivs, w, {}) == ["m1"]
    assert partitions_revoked(ivs, w, {}) == 1
    assert stable_since(ivs, 4, w.start, w.end, w.required_members) == 12
    assert partition_seconds_unavailable(ivs, 4, w) == pytest.approx(1.0)


def test_eager_join_revokes_every_partition_and_a_leavers_own_stop_is_not_counted() -> None:
    recs = RunRecords()
    eager_join(recs)
    w = EventWindow(10, 30, ("m0", "m1", "m2"))
    ivs = build_intervals(recs, w.end)
    assert partitions_revoked(ivs, w, {}) == 4
    assert partitions_revoked(ivs, w, {("m0", 0): 10.5}) == 2


def test_partitions_moved_counts_fetcher_changes_not_stops() -> None:
    """An eager round stops all 4 partitions but hands 0,1,2 back to their owners: 1 moved; the
    incremental join moves the one partition it revokes; a leaver's partitions move too."""
    w = EventWindow(10, 30, ("m0", "m1", "m2"))
    eager = RunRecords()
    eager_join(eager)
    assert partitions_moved(build_intervals(eager, w.end), 4, w) == 1
    coop = RunRecords()
    cooperative_join(coop)
    assert partitions_moved(build_intervals(coop, w.end), 4, w) == 1
    leave = RunRecords()
    formed(leave)
    tl(leave, 11, "m1", "revoked", 2, 3)
    tl(leave, 12, "m0", "fetching", 2, 3)
    assert partitions_moved(build_intervals(leave, w.end), 4, w) == 2
    still = RunRecords()
    formed(still)
    assert partitions_moved(build_intervals(still, w.end), 4, w) == 0


def test_old_assignment_is_not_stable_while_the_newcomer_owns_nothing() -> None:
    recs = RunRecords()
    formed(recs)
    ivs = build_intervals(recs, 30)
    assert stable_since(ivs, 4, 10, 30, ["m0", "m1", "m2"]) is None
    assert stable_since(ivs, 4, 10, 30, ["m0", "m1"]) == 10


def test_crashed_members_partitions_are_unavailable_from_the_kill_until_taken_over() -> None:
    recs = RunRecords()
    formed(recs)
    lc(recs, 10, "m1", "killed")        # written by the runner; m1 wrote nothing more
    tl(recs, 16, "m0", "revoked", 0, 1)
    tl(recs, 16.5, "m0", "fetching", 0, 1, 2, 3)
    w = EventWindow(10, 25, ("m0",))
    ivs = build_intervals(recs, w.end)
    leaving = {("m1", 0): 10.0}
    assert members_paused(ivs, w, leaving) == ["m0"]      # the victim's own stop is the event
    assert stable_since(ivs, 4, w.start, w.end, w.required_members) == 16.5
    assert partition_seconds_unavailable(ivs, 4, w) == pytest.approx(2 * 6.5 + 2 * 0.5)


def test_a_bounced_members_own_shutdown_is_not_a_pause_but_its_rebalance_is() -> None:
    recs = RunRecords()
    formed(recs)
    tl(recs, 10.5, "m1", "revoked", 2, 3)   # m0's leave made m1 rebalance
    tl(recs, 11, "m1", "fetching", 0, 1, 2, 3)
    lc(recs, 10, "m0", "stopping")
    tl(recs, 10.2, "m0", "revoked", 0, 1)
    lc(recs, 10.3, "m0", "stopped")
    w = EventWindow(10, 20, ("m1",))
    ivs = build_intervals(recs, w.end)
    assert members_paused(ivs, w, {("m0", 0): 10.0}) == ["m1"]


def test_two_members_fetching_one_partition_is_one_double_owned_interval() -> None:
    recs = RunRecords()
    formed(recs)
    tl(recs, 12, "m1", "fetching", 0)        # m1 claims 0 while m0 still fetches it
    tl(recs, 14, "m0", "revoked", 0, 1)
    tl(recs, 15, "m0", "fetching", 1)
    w = EventWindow(10, 20, ())
    ivs = build_intervals(recs, w.end)
    assert double_owned_intervals(ivs, 4, w) == 1


def test_duplicates_count_redeliveries_after_the_event_only() -> None:
    recs = RunRecords()
    for ts, m, p, o in ((1, "m0", 0, 0), (2, "m0", 0, 0), (11, "m0", 0, 1), (12, "m1", 0, 1),
                        (13, "m1", 0, 1), (40, "m1", 0, 1)):
        recs.add({"k": "d", "ts": ts, "m": m, "p": p, "o": o, "v": o})
    assert duplicates(recs, since=10, until=30) == 2


def test_lost_is_what_was_acknowledged_and_never_delivered() -> None:
    recs = RunRecords()
    recs.add({"k": "d", "ts": 1, "m": "m0", "p": 0, "o": 0, "v": 0})
    produced = [Produced(0, 0, 0), Produced(1, 0, 1)]
    assert lost(recs, produced) == [Produced(1, 0, 1)]


def test_request_deltas_difference_cumulative_samples_per_incarnation() -> None:
    recs = RunRecords()
    for ts, inc, joins in ((5, 0, 2), (9, 0, 3), (12, 0, 5), (30, 0, 9), (15, 1, 1)):
        recs.add({"k": "rq", "ts": ts, "m": "m0", "i": inc, "c": {"JoinGroup": joins}})
    # incarnation 0: 3 at the start, 5 at the end -> 2; incarnation 1 started after -> 1
    assert request_deltas(recs, EventWindow(10, 20, ())) == {"JoinGroup": 3}


def test_event_metrics_reports_every_named_metric() -> None:
    recs = RunRecords()
    eager_join(recs)
    recs.add({"k": "co", "ts": 11, "m": "m0", "w": "attempt"})
    recs.add({"k": "co", "ts": 11, "m": "m0", "w": "owner_conflict"})
    m = event_metrics(recs, [], 4, EventWindow(10, 30, ("m0", "m1", "m2")))
    assert m["time_to_stable_s"] == 3.5
    assert (m["members_paused"], m["rebalance_attempts"], m["conflicts"], m["lost"]) == (2, 1, 1, 0)
    assert m["members_idle"] == 2


def test_random_handovers_keep_unavailability_within_the_window() -> None:
    """Seeded random move sequences: unavailability never exceeds partitions x window."""
    rng = random.Random(20261122)
    for _ in range(50):
        recs = RunRecords()
        formed(recs)
        t = 10.0
        for _ in range(rng.randint(1, 6)):
            t += rng.uniform(0.1, 3)
            p = rng.randrange(4)
            src, dst = ("m0", "m1") if p < 2 else ("m1", "m0")
            tl(recs, t, src, "revoked", p)
            tl(recs, t + rng.uniform(0, 2), dst, "fetching", p)
        w = EventWindow(10, t + 5, ())
        ivs = build_intervals(recs, w.end)
        u = partition_seconds_unavailable(ivs, 4, w)
        assert 0 < u <= 4 * (w.end - w.start)


def test_records_written_by_a_member_are_read_back_incrementally(tmp_path) -> None:
    writer = RecordWriter(tmp_path / "m0.0.jsonl", "m0", 0)
    tail = RecordTail(tmp_path)
    writer.timeline(Timeline.FETCHING, [1, 0])
    writer.delivery(0, 5, 42)
    assert tail.poll() == 2
    with open(tmp_path / "m0.0.jsonl", "a") as fh:    # a line being written is not read yet
        fh.write(json.dumps({"k": "d", "ts": 1, "m": "m0", "p": 0, "o": 6})[:10])
    assert tail.poll() == 0
    writer.close()
    assert tail.records.timeline[0].partitions == (0, 1)
    assert tail.records.deliveries[0].seq == 42
