"""Pure parts of the leader mode: record codec, election order, assignment, handover plans."""

from __future__ import annotations

import pytest

from zkconsumer.assignors import TopicPartition
from zkconsumer.config import ConsumerConfig
from zkconsumer.coordination.decide import (
    compute_assignment,
    member_threads,
    next_record,
    plan_handover,
    thread_claims,
)
from zkconsumer.coordination.election import predecessor, sequence_of
from zkconsumer.coordination.record import (
    AssignmentRecord,
    decode_assignment,
    encode_assignment,
)
from zkconsumer.coordination.states import (
    ELECTION_WAKES,
    RECORD_READ_WAKES,
    Wake,
    election_check_needed,
)
from zkconsumer.errors import CorruptZnode, InvalidConfig
from zkconsumer.zk import paths
from zkconsumer.zk.codec import ConsumerRegistration

TP = TopicPartition
PATH = "/consumers/g/assignment"


def test_record_round_trips_and_lists_members_with_nothing():
    rec = AssignmentRecord(3, "g_a", {"g_a": {"t": (0, 2)}, "g_b": {"t": (1,)}, "g_c": {}})
    back = decode_assignment(PATH, encode_assignment(rec))
    assert back == rec
    assert back.partitions_of("g_a") == {TP("t", 0), TP("t", 2)}
    assert back.partitions_of("g_c") == frozenset() and "g_c" in back.members
    assert back.owners() == {TP("t", 0): "g_a", TP("t", 2): "g_a", TP("t", 1): "g_b"}


@pytest.mark.parametrize("data, why", [
    (b"nope", "not JSON"),
    (b"[]", "not a JSON object"),
    (b'{"version":2,"generation":1,"leader":"a","assignment":{}}', "unsupported version"),
    (b'{"version":1,"generation":0,"leader":"a","assignment":{}}', "generation"),
    (b'{"version":1,"generation":true,"leader":"a","assignment":{}}', "generation"),
    (b'{"version":1,"generation":1,"leader":"","assignment":{}}', "leader"),
    (b'{"version":1,"generation":1,"leader":"a","assignment":{"a":{"t":[-1]}}}', "partitions"),
    (b'{"version":1,"generation":1,"leader":"a","assignment":{"a":{"t":[0]},"b":{"t":[0]}}}',
     "assigned to both a and b"),
])
def test_corrupt_records_name_the_path_and_the_problem(data, why):
    with pytest.raises(CorruptZnode) as err:
        decode_assignment(PATH, data)
    assert PATH in str(err.value) and why in str(err.value)


def test_election_order_follows_sequence_numbers_not_names():
    children = ["n_0000000010", "n_0000000009", "n_0000000011", "stray"]
    assert sequence_of("n_0000000010") == 10 and sequence_of("stray") == -1
    assert predecessor(children, "n_0000000009") is None          # lowest leads
    assert predecessor(children, "n_0000000010") == "n_0000000009"
    assert predecessor(children, "n_0000000011") == "n_0000000010"  # only the one before
    with pytest.raises(ValueError):
        predecessor(children, "n_0000000099")


def _regs(*members: str, topic: str = "t", streams: int = 1) -> dict[str, ConsumerRegistration]:
    return {m: ConsumerRegistration(((topic, streams),)) for m in members}


def test_range_over_members_and_thread_spread():
    threads = member_threads(_regs("g_a", "g_b", streams=2), None, True)
    assert threads == {"g_a": {"t": ["g_a-0", "g_a-1"]}, "g_b": {"t": ["g_b-0", "g_b-1"]}}
    members = compute_assignment("range", threads, {"t": 5}, None)
    assert members == {"g_a": {"t": (0, 1, 2)}, "g_b": {"t": (3, 4)}}
    claims = thread_claims({TP("t", p) for p in (0, 1, 2)}, threads["g_a"])
    assert claims == {TP("t", 0): "g_a-0", TP("t", 1): "g_a-1", TP("t", 2): "g_a-0"}


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_sticky_leader_moves_only_what_the_joiner_needs(strategy):
    members = [f"g_m{i}" for i in range(4)]
    threads = member_threads(_regs(*members), None, True)
    first = next_record(None, "g_m0", compute_assignment(strategy, threads, {"t": 12}, None))
    joined = member_threads(_regs(*members, "g_m4"), None, True)
    second = compute_assignment(strategy, joined, {"t": 12}, first)
    before, after = first.owners(), next_record(first, "g_m0", second).owners()
    moved = [tp for tp in before if after[tp] != before[tp]]
    assert sorted(len(v["t"]) for v in second.values() if "t" in v) == [2, 2, 2, 3, 3]
    assert len(moved) == 2  # exactly the joiner's share, nothing shuffled among the others
    assert all(after[tp] == "g_m4" for tp in moved)
    tids = {tp: f"{m}-0" for tp, m in before.items()}
    mine = {tp: t for tp, t in tids.items() if t == "g_m0-0"}
    target = {tp: "g_m0-0" for tp in next_record(first, "x", second).partitions_of("g_m0")}
    plan = plan_handover(mine, target, cooperative=(strategy == "cooperative-sticky"))
    assert set(plan.release) <= set(mine) and not plan.claim
    assert set(plan.keep) | set(plan.release) == set(mine)
    assert plan.pause_all == (strategy == "sticky" and bool(plan.release))


def test_handover_keeps_unchanged_members_untouched_and_eager_pauses_changed_ones():
    owned = {TP("t", 0): "a-0", TP("t", 1): "a-0"}
    assert not plan_handover(owned, dict(owned), cooperative=False).changes
    grow = plan_handover(owned, {**owned, TP("t", 2): "a-0"}, cooperative=False)
    assert grow.claim == {TP("t", 2): "a-0"} and grow.release == () and grow.pause_all
    coop = plan_handover(owned, {TP("t", 0): "a-0"}, cooperative=True)
    assert coop.release == (TP("t", 1),) and coop.keep == {TP("t", 0): "a-0"}
    assert not coop.pause_all
    moved_thread = plan_handover(owned, {TP("t", 0): "a-1", TP("t", 1): "a-0"}, True)
    assert moved_thread.release == (TP("t", 0),) and moved_thread.claim == {TP("t", 0): "a-1"}


def test_wildcard_members_are_matched_by_the_leader():
    regs = {"g_w": ConsumerRegistration((("t.*", 1),), "white_list"),
            "g_s": ConsumerRegistration((("t1", 1),))}
    threads = member_threads(regs, ["t1", "t2", "other"], True)
    assert threads == {"g_s": {"t1": ["g_s-0"]}, "g_w": {"t1": ["g_w-0"], "t2": ["g_w-0"]}}
    members = compute_assignment("roundrobin", threads, {"t1": 2, "t2": 1}, None)
    assert sum(len(p) for a in members.values() for p in a.values()) == 3


def test_config_names_the_property_and_value():
    base = {"zookeeper.connect": "z:1", "group.id": "g"}
    leader = ConsumerConfig({**base, "coordination.mode": "leader",
                             "partition.assignment.strategy": "cooperative-sticky"})
    assert leader.pause_fetchers_on_disconnect is True
    assert ConsumerConfig({**base, "coordination.mode": "leader",
                           "zookeeper.pause.fetchers.on.disconnect": "false"}
                          ).pause_fetchers_on_disconnect is False
    with pytest.raises(InvalidConfig, match="coordination.mode.*boss|boss.*coordination.mode"):
        ConsumerConfig({**base, "coordination.mode": "boss"})
    with pytest.raises(InvalidConfig, match="zookeeper.pause.fetchers.on.disconnect"):
        ConsumerConfig({**base, "zookeeper.pause.fetchers.on.disconnect": "true"})
    with pytest.raises(InvalidConfig, match="legacy-range.*partition.assignment.strategy"):
        ConsumerConfig({**base, "coordination.mode": "leader",
                        "partition.assignment.strategy": "legacy-range"})
    with pytest.raises(InvalidConfig, match="sticky"):
        ConsumerConfig({**base, "partition.assignment.strategy": "sticky"})


def test_leader_paths_are_built_from_validated_names():
    assert paths.leader_election("g") == "/consumers/g/leader"
    assert paths.leader_candidate("g", "n_0000000001") == "/consumers/g/leader/n_0000000001"
    assert paths.assignment("g") == "/consumers/g/assignment"
    with pytest.raises(ValueError):
        paths.assignment("../x")


def test_lab_knows_the_three_leader_protocols_and_records_the_leaders_decision(tmp_path):
    from zkconsumer.lab.compare.spec import PROTOCOLS
    from zkconsumer.lab.drivers import get_driver
    from zkconsumer.lab.drivers.decisions import DecisionRecorder
    from zkconsumer.lab.records import RecordTail, RecordWriter

    for name in ("zk-leader-range", "zk-leader-sticky", "zk-leader-cooperative-sticky"):
        driver = get_driver(name)
        assert name in PROTOCOLS and driver.family == "zookeeper"
        assert driver.option("coordination.mode") == "leader"
    writer = RecordWriter(tmp_path / "m00.0.jsonl", "m00", 0)
    recorder = DecisionRecorder(writer)
    event = {"type": "assignment_decided", "members": ["g_b", "g_a"],
             "partition_counts": {"t": 2}, "threads": {"g_a": {"t": ["g_a-0"]},
                                                       "g_b": {"t": ["g_b-0"]}},
             "assignment": {"g_a": {"t": [0]}, "g_b": {"t": [1]}}}
    recorder(event)
    recorder({"type": "fetchers_started"})  # other events are not decisions
    recorder(dict(event, assignment={"g_a": {"t": [0, 1]}, "g_b": {}}))
    writer.close()
    tail = RecordTail(tmp_path)
    tail.poll()
    first, second = tail.records.decisions
    assert tuple(first.consumers) == ("g_a", "g_b") and dict(first.partition_counts) == {"t": 2}
    assert first.digest != second.digest  # a different assignment is a different decision


@pytest.mark.parametrize("reason", list(Wake))
def test_the_election_is_listed_again_only_when_its_outcome_may_have_changed(reason):
    """A publication, a membership or topic change seen by the leader, or a released owner
    znode cannot change who leads: no getChildren of the candidates for those."""
    may_change = {Wake.STARTUP, Wake.PREDECESSOR, Wake.NEW_SESSION, Wake.RECONNECTED,
                  Wake.REARM}
    assert election_check_needed({reason}, known=True) is (reason in may_change)
    assert election_check_needed({reason}, known=False)  # never checked in this session
    assert election_check_needed({Wake.ASSIGNMENT, reason}, known=True) is (reason in may_change)
    assert ELECTION_WAKES == may_change
    # the record is read although its watch is set only after a start, a session change or a
    # watch reset; a predecessor's deletion does not change the record
    assert (reason in RECORD_READ_WAKES) is (reason in may_change - {Wake.PREDECESSOR})

