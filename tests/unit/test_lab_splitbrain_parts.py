"""The split-brain scenarios' pure parts: address rewriting, overlaps, late commits, owners."""

from __future__ import annotations

import struct

from zkconsumer.lab.records import RunRecords
from zkconsumer.lab.splitbrain.commits import Regression, regressions
from zkconsumer.lab.splitbrain.failover import exactly_one_owner, session_view
from zkconsumer.lab.splitbrain.proxies import KafkaAddressRewrite
from zkconsumer.lab.splitbrain.spec import SplitBrainSpec
from zkconsumer.lab.splitbrain.stale_view import lagging_members
from zkconsumer.lab.splitbrain.zombie import delivered_by_two, overlaps, zombie_view


def frame(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


def test_rewrite_changes_the_advertised_port_in_whole_frames_only():
    host = b"127.0.0.1"
    meta = frame(b"\x00\x01" + b"\x00\x09" + host + struct.pack(">i", 9092) + b"rest")
    other = frame(b"payload mentioning 9092 as text")
    rw = KafkaAddressRewrite("127.0.0.1", 9092, 40001)
    data = meta + other
    # Delivered in awkward pieces: nothing is forwarded before its frame is complete.
    out = b"".join(rw(data[i:i + 5]) for i in range(0, len(data), 5))
    assert out == meta.replace(host + struct.pack(">i", 9092), host + struct.pack(">i", 40001)) \
        + other
    assert len(out) == len(data)
    assert rw(b"\x00\x00") == b"", "a partial size is held back"


def _records(lines: list[dict]) -> RunRecords:
    r = RunRecords()
    r.extend(lines)
    r.sort()
    return r


def test_overlaps_and_messages_delivered_by_two_members():
    recs = _records([
        {"k": "tl", "ts": 0.0, "m": "z", "w": "fetching", "ps": [0, 1]},
        {"k": "tl", "ts": 5.0, "m": "b", "w": "fetching", "ps": [0]},
        {"k": "d", "ts": 1.0, "m": "z", "p": 0, "o": 10, "v": 1},   # before the pause
        {"k": "d", "ts": 5.5, "m": "b", "p": 0, "o": 10, "v": 1},   # redelivered by b
        {"k": "d", "ts": 6.0, "m": "z", "p": 0, "o": 11, "v": 2},   # both deliver 11
        {"k": "d", "ts": 6.1, "m": "b", "p": 0, "o": 11, "v": 2},
        {"k": "d", "ts": 6.2, "m": "z", "p": 1, "o": 11, "v": 3},   # nobody else has p1
        {"k": "tl", "ts": 8.0, "m": "z", "w": "revoked", "ps": [0, 1]},
    ])
    (ov,) = overlaps(recs, "z", t0=2.0, t1=10.0)
    assert (ov.partition, ov.other, ov.start, ov.end) == (0, "b", 5.0, 8.0)
    assert (ov.zombie_deliveries, ov.other_deliveries) == (1, 2)
    assert delivered_by_two(recs, since=2.0) == [(0, 10, ("b", "z")), (0, 11, ("b", "z"))]
    assert delivered_by_two(recs, since=2.0, until=6.05) == [(0, 10, ("b", "z"))]


def test_zombie_view_counts_commits_answered_between_resume_and_refetch():
    recs = _records([
        {"k": "tl", "ts": 0.0, "m": "z", "w": "fetching", "ps": [0]},
        {"k": "co", "ts": 1.0, "m": "z", "w": "commit_ok"},              # before the pause
        {"k": "co", "ts": 4.0, "m": "z", "w": "assignment_lost"},
        {"k": "tl", "ts": 4.0, "m": "z", "w": "revoked", "ps": [0]},
        {"k": "co", "ts": 6.1, "m": "z", "w": "commit_ok"},              # late, accepted
        {"k": "co", "ts": 6.2, "m": "z", "w": "commit_rejected:ILLEGAL_GENERATION"},
        {"k": "tl", "ts": 7.0, "m": "z", "w": "fetching", "ps": [0]},
        {"k": "co", "ts": 8.0, "m": "z", "w": "commit_ok"},              # after rejoining
    ])
    v = zombie_view(recs, "z", paused=2.0, resumed=6.0, until=9.0)
    assert v.stopped_s == 2.0
    assert (v.late_commits_accepted, v.late_commits_rejected) == (1, 1)
    assert v.rejections == ("ILLEGAL_GENERATION",)
    assert v.events == {"assignment_lost": 1, "commit_ok": 2, "commit_rejected": 1}


def test_regressions_are_backward_moves_of_a_committed_offset():
    samples = [(1.0, {0: 5, 1: 7}), (2.0, {0: 9, 1: 7}), (3.0, {0: 6}), (4.0, {0: 6, 1: 8})]
    assert regressions(samples) == [Regression(3.0, 0, 9, 6)]


def test_exactly_one_owner_needs_every_partition_owned_by_a_registered_member():
    assert exactly_one_owner({0: "g_a-0", 1: "g_b-0"}, ["g_a", "g_b"])
    assert not exactly_one_owner({0: "g_a-0", 1: None}, ["g_a", "g_b"])
    assert not exactly_one_owner({0: "g_a-0", 1: "g_gone-0"}, ["g_a"])


def test_session_view_counts_states_after_the_event():
    coord = [("m0", 1.0, "session_CONNECTED"), ("m0", 5.0, "session_SUSPENDED"),
             ("m0", 5.5, "session_CONNECTED"), ("m1", 5.2, "watch_fired")]
    assert session_view(coord, 4.0) == {"m0": {"CONNECTED": 1, "SUSPENDED": 1}}


def test_lagging_members_are_the_last_ones_and_defaults_follow_the_backoff():
    assert lagging_members(4, 2) == ["m02", "m03"]
    spec = SplitBrainSpec(scenario="stale-view", members=5)
    assert spec.effective_lagging == 2
    assert spec.effective_delay_ms == 0.6 * spec.timing.rebalance_backoff_ms
    assert spec.params()["delay_ms"] == spec.effective_delay_ms


def test_cli_refuses_a_group_that_cannot_split(tmp_path, capsys):
    import argparse

    from zkconsumer.cli import experiment

    parser = argparse.ArgumentParser(prog="zkconsumer")
    experiment.register(parser.add_subparsers(dest="verb"))
    args = parser.parse_args(["experiment", "split-brain", "--scenario", "zombie", "--members",
                              "1", "--out", str(tmp_path / "out")])
    assert args.func(args) == 2
    assert "--members must be >= 2" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()



def test_the_commit_watcher_takes_a_last_sample_when_stopped():
    import time

    from zkconsumer.lab.splitbrain.commits import CommitWatcher

    calls = []

    def read():
        calls.append(1)
        return {0: 5} if len(calls) == 1 else {0: 4, 1: 2}

    closed = []
    watcher = CommitWatcher(read, lambda: closed.append(True))
    assert watcher.final is None
    watcher.start()
    deadline = time.time() + 5
    while not watcher.samples and time.time() < deadline:
        time.sleep(0.01)
    found = watcher.stop()
    # the last sample is read after the sampling thread ended, whatever it sampled meanwhile
    assert watcher.final == {0: 4, 1: 2} and closed == [True]
    assert [(r.partition, r.before, r.after) for r in found] == [(0, 5, 4)]
