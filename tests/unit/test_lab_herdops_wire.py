"""ZooKeeper's client protocol read from captured conversations, and the per-kind counts.

The two captures in ``data/`` are real bytes seen by the fault proxy's observer: one kazoo
session doing every kind of request against an embedded ZooKeeper 3.9, and the original 0.10.2
member (ZkClient 0.10 on ZooKeeper's 3.9.5 client) registering, subscribing, rebalancing with no
broker and leaving.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from zkconsumer.lab.herdops.count import (
    connection_members,
    converge_time,
    count_window,
    path_pattern,
)
from zkconsumer.lab.herdops.tap import TapRecord
from zkconsumer.lab.herdops.wire import Conversation, FrameReader, WireError, WireOp

DATA = Path(__file__).parent / "data"


def _replay(name: str, piece: int | None = None) -> Conversation:
    """Feed a capture to a Conversation, in its original chunks or cut into ``piece`` bytes."""
    capture = json.loads((DATA / f"zk_wire_{name}.json").read_text())
    talk = Conversation()
    for side, text in capture["chunks"]:
        data = bytes.fromhex(text)
        feed = talk.client_bytes if side == "c" else talk.server_bytes
        if piece is None:
            feed(data)
        else:
            for at in range(0, len(data), piece):
                feed(data[at:at + piece])
    return talk


def _summary(talk: Conversation) -> list[tuple[str, str, bool, int | None, str]]:
    return [(o.op, o.path, o.watch, o.err, o.event) for o in talk.ops]


KAZOO = [
    ("connect", "", False, None, ""),
    ("create", "/cap", False, 0, ""),
    ("create", "/cap/x", False, 0, ""),
    ("getChildren", "/cap", True, 0, ""),
    ("exists", "/cap/none", True, -101, ""),
    ("getData", "/cap/x", True, 0, ""),
    ("setData", "/cap/x", False, 0, ""),
    ("notification", "/cap/x", False, None, "nodeDataChanged"),
    ("multi", "", False, 0, ""),
    ("notification", "/cap", False, None, "nodeChildrenChanged"),
    ("sync", "/cap", False, 0, ""),
    ("create", "/cap/x", False, -110, ""),
    ("delete", "/cap/x", False, 0, ""),
    ("closeSession", "", False, 0, ""),
]


@pytest.mark.parametrize("piece", [None, 1, 7])
def test_a_kazoo_session_reads_as_its_requests_replies_and_notifications(piece):
    talk = _replay("kazoo", piece)
    assert _summary(talk) == KAZOO
    assert talk.ops[8].sub_ops == ("create", "delete")
    assert talk.session_id == 0x100008D0B1E0000


def test_the_original_member_registers_through_its_ancestors_and_watches_after_exists():
    talk = _replay("original", piece=5)
    requests = [(o.op, o.path, o.watch) for o in talk.ops if o.op not in ("ping",)]
    assert requests[:9] == [
        ("connect", "", False),
        # ZKCheckedEphemeral.createRecursive: every ancestor, then the registration
        ("create", "/consumers", False),
        ("create", "/consumers/g", False),
        ("create", "/consumers/g/ids", False),
        ("create", "/consumers/g/ids/g_c1", False),
        # ZkClient.subscribeChildChanges: exists, then getChildren, both watching
        ("exists", "/consumers/g/ids", True),
        ("getChildren", "/consumers/g/ids", True),
        # subscribeDataChanges: exists alone
        ("exists", "/brokers/topics/t", True),
        # syncedRebalance's getCluster, before the attempt reads the registration
        ("getChildren", "/brokers/ids", False),
    ]
    assert requests[-2:] == [("closeSession", "", False),
                             ("notification", "/consumers/g/ids", False)]


def test_a_packet_length_that_is_not_zookeepers_is_refused_naming_it():
    with pytest.raises(WireError, match="packet length -5"):
        FrameReader().feed(struct.pack(">i", -5))
    with pytest.raises(WireError, match="packet length 1073741824"):
        FrameReader().feed(struct.pack(">i", 1 << 30))


def test_a_read_without_its_watch_flag_is_refused():
    talk = Conversation()
    talk.client_bytes(struct.pack(">i", 4) + b"\0" * 4)  # the handshake
    body = struct.pack(">ii", 1, 4) + struct.pack(">i", 2) + b"/a"  # getData, no flag
    with pytest.raises(WireError, match="getData '/a' has no watch flag"):
        talk.client_bytes(struct.pack(">i", len(body)) + body)


def _records(conn: int, ops: list[WireOp], t0: float = 0.0) -> list[TapRecord]:
    return [TapRecord(t0 + i * 0.1, conn, op) for i, op in enumerate(ops)]


def test_a_window_counts_each_member_by_kind_watch_error_and_notification():
    group, topic = "g1", "orders"
    joiner = _records(0, [WireOp("connect"), WireOp("create", "/consumers", err=-110),
                          WireOp("create", f"/consumers/{group}/ids/{group}_m4", err=0),
                          WireOp("exists", f"/consumers/{group}/ids", True, 0),
                          WireOp("ping"),
                          WireOp("getChildren", f"/consumers/{group}/ids", True, 0)])
    other = _records(1, [WireOp("create", f"/consumers/{group}/ids/{group}_m0", err=0)], -9)
    other += _records(1, [WireOp("notification", f"/consumers/{group}/ids",
                                 event="nodeChildrenChanged"),
                          WireOp("getData", f"/brokers/topics/{topic}", True, 0),
                          WireOp("create", f"/consumers/{group}/owners/{topic}/3", err=-110)], 1)
    owners = connection_members(other + joiner, group)
    assert owners == {0: f"{group}_m4", 1: f"{group}_m0"}
    # m0 reconnected: connection 2 carries its session and registers nothing
    assert connection_members(other + joiner, group, {0: 40, 1: 41, 2: 41, 3: 42}) == {
        0: f"{group}_m4", 1: f"{group}_m0", 2: f"{group}_m0"}
    window = sorted(joiner + other[1:], key=lambda r: r.t)
    counts = count_window(window, owners, group, [topic]).as_dict()
    assert counts["total"] == {
        "ops": {"connect": 1, "create": 3, "exists": 1, "getChildren": 1, "getData": 1},
        "watches": {"exists": 1, "getChildren": 1, "getData": 1},
        "errors": {"create:-110": 2},
        "notifications": {"nodeChildrenChanged": 1}}
    assert counts["by_member"][f"{group}_m0"]["ops"] == {"create": 1, "getData": 1}
    assert counts["patterns"]["create /consumers/<g>/owners/<t>/<p> err=-110"] == 1
    assert counts["patterns"]["getData /brokers/topics/<t> watch"] == 1
    # from the joiner's registration (t = 0.2) to the last request (other's create, t = 1.2)
    assert converge_time(window, f"/consumers/{group}/ids/{group}_m4") == pytest.approx(1.0)


def test_path_classes_hide_names_not_structure():
    assert path_pattern("/consumers/g/owners/t-1/12", "g", ["t-1"]) == (
        "/consumers/<g>/owners/<t>/<p>")
    assert path_pattern("/brokers/topics/t-1/partitions/3/state", "g", ["t-1"]) == (
        "/brokers/topics/<t>/partitions/<p>/state")
    assert path_pattern("/consumers/g/ids/g_m001", "g", []) == "/consumers/<g>/ids/<id>"
    assert path_pattern("/consumers/gx/ids", "g", []) == "/consumers/gx/ids"
