"""Watch notifications and conflicting decisions, computed from hand-written records.

The story: three ZooKeeper members rebalance after a change at t=10. Normally all three read
the same view and decide the same thing; when one of them read a stale view, it is the round's
dissenter, and a reader of the run should see exactly that member counted.
"""

from __future__ import annotations

import json

from zkconsumer.lab.metrics import (
    EventWindow,
    conflicting_decisions,
    decision_metrics,
    decision_rounds,
    event_metrics,
    metric_notes,
)
from zkconsumer.lab.records import RecordTail, RecordWriter, RunRecords, decision_digest
from zkconsumer.lab.runs import RunResult

W = EventWindow(10.0, 30.0, ())
FRESH = decision_digest({"t": [0, 1, 2]}, {"t": ["a-0", "b-0", "c-0"]},
                        {("t", 0): "a-0", ("t", 1): "b-0", ("t", 2): "c-0"})
STALE = decision_digest({"t": [0, 1, 2]}, {"t": ["a-0", "b-0"]},
                        {("t", 0): "a-0", ("t", 1): "a-0", ("t", 2): "b-0"})


def dc(recs: RunRecords, ts: float, member: str, digest: str, inc: int = 0) -> None:
    recs.add({"k": "dc", "ts": ts, "m": member, "i": inc, "h": digest, "ids": [], "pc": {"t": 3}})


def test_digest_is_stable_and_order_blind() -> None:
    again = decision_digest({"t": [2, 1, 0]}, {"t": ["c-0", "a-0", "b-0"]},
                            {("t", 2): "c-0", ("t", 0): "a-0", ("t", 1): "b-0"})
    assert again == FRESH
    assert STALE != FRESH


def test_agreeing_members_conflict_nowhere() -> None:
    recs = RunRecords()
    for ts, m in ((10.2, "a"), (10.3, "b"), (10.5, "c"), (11.4, "a")):  # a retried, same view
        dc(recs, ts, m, FRESH)
    assert conflicting_decisions(recs, W) == 0
    [r] = decision_rounds(recs.decisions, W)
    assert r.consensus == FRESH and r.dissenters == () and r.distinct_views == 1


def test_a_member_left_on_a_stale_view_is_the_dissenter() -> None:
    recs = RunRecords()
    dc(recs, 10.2, "a", FRESH)
    dc(recs, 10.3, "c", STALE)
    dc(recs, 10.4, "b", FRESH)
    [r] = decision_rounds(recs.decisions, W)
    assert r.dissenters == (("c", 0),) and r.distinct_views == 2
    assert conflicting_decisions(recs, W) == 1
    # ...unless it caught up within the round: its final decision is what it acted on.
    dc(recs, 11.0, "c", FRESH)
    assert conflicting_decisions(recs, W) == 0


def test_a_sole_decider_moving_through_two_views_disagrees_with_nobody() -> None:
    recs = RunRecords()
    dc(recs, 10.2, "leader", STALE)
    dc(recs, 10.8, "leader", FRESH)
    [r] = decision_rounds(recs.decisions, W)
    assert r.consensus == FRESH and r.dissenters == ()


def test_a_quiet_gap_starts_a_new_round() -> None:
    recs = RunRecords()
    dc(recs, 10.2, "a", STALE)
    dc(recs, 10.3, "b", STALE)
    dc(recs, 15.0, "a", FRESH)   # a second change, 4.7 s later: everybody agrees again
    dc(recs, 15.2, "b", FRESH)
    dc(recs, 15.3, "c", FRESH)
    rounds = decision_rounds(recs.decisions, W, gap_s=1.0)
    assert [len(r.by_member) for r in rounds] == [2, 3]
    assert conflicting_decisions(recs, W) == 0
    # Outside the window nothing counts.
    assert decision_rounds(recs.decisions, EventWindow(20.0, 30.0, ())) == []


def test_watch_notifications_and_broker_protocols() -> None:
    recs = RunRecords()
    for ts, m in ((9.0, "a"), (10.1, "a"), (10.1, "b"), (10.2, "c")):
        recs.add({"k": "co", "ts": ts, "m": m, "i": 0, "w": "watch_fired", "path": "/x"})
    dc(recs, 10.4, "a", FRESH)
    zk = decision_metrics(recs, W, "zookeeper")
    assert zk["watch_notifications"] == 3 and zk["conflicting_decisions"] == 0
    assert zk["decisions"] == 1 and metric_notes("zookeeper", zk) == {}
    broker = decision_metrics(recs, W, "broker")
    assert broker["watch_notifications"] is None and broker["conflicting_decisions"] is None
    assert set(metric_notes("broker", broker)) == {"watch_notifications",
                                                   "conflicting_decisions"}
    silent = decision_metrics(RunRecords(), W, "zookeeper")
    assert silent["conflicting_decisions"] is None and silent["watch_notifications"] == 0
    assert "conflicting_decisions" in metric_notes("zookeeper", silent)


def test_records_round_trip_and_event_metrics_carry_both(tmp_path) -> None:
    w = RecordWriter(tmp_path / "a.0.jsonl", "a", 0)
    w.write("co", ts=10.1, w="watch_fired", path="/consumers/g/ids")
    w.write("dc", ts=10.2, h=FRESH, ids=["a", "b", "c"], pc={"t": 3})
    w.close()
    tail = RecordTail(tmp_path)
    tail.poll()
    [d] = tail.records.decisions
    assert d.consumers == ("a", "b", "c") and d.partition_counts == (("t", 3),)
    m = event_metrics(tail.records, [], 3, W, family="zookeeper")
    assert m["watch_notifications"] == 1 and m["conflicting_decisions"] == 0


def test_old_results_load_with_default_scenario_and_params() -> None:
    old = {"protocol": "zk-range", "members": 4, "partitions": 8, "event": "join", "repeat": 0,
           "status": "ok", "reason": None, "metrics": {}, "details": {}, "records_dir": None}
    r = RunResult.from_json(json.loads(json.dumps(old)))
    assert r.scenario == "compare" and r.params == {}
    newer = {**r.to_json(), "scenario": "herd", "params": {"n": 4}, "future_field": 1}
    assert RunResult.from_json(newer).params == {"n": 4}
