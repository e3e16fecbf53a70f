"""The server-side request count: mntr deltas with pings, connects, closes and mntr taken out.

The arithmetic only, on made-up snapshots. The packet counts it relies on (two back-to-back
mntr calls differ by one received packet; a connect and a close are one packet each) are
measured on a real server in ``tests/integration/test_embedded_zookeeper.py``.
"""

from __future__ import annotations

import pytest

from zkconsumer.lab.mntr import (
    MntrSample,
    PingRate,
    parse_mntr,
    quiet_rate,
    relative_difference,
    server_requests,
)

MNTR = ("zk_version\t3.9.5-293c, built on 2026-02-11\nzk_server_state\tstandalone\n"
        "zk_packets_received\t1000\nzk_packets_sent\t1200\nzk_watch_count\t7\n"
        "zk_sum_node_children_watch_count\t40\nzk_sum_node_deleted_watch_count\t2\n")


def sample(ts: float, received: int, sent: int = 0, children: int = 0) -> MntrSample:
    return MntrSample(ts, {"zk_packets_received": received, "zk_packets_sent": sent,
                           "zk_sum_node_children_watch_count": children})


def test_parse_keeps_numbers_only() -> None:
    values = parse_mntr(MNTR)
    assert values["zk_packets_received"] == 1000 and "zk_version" not in values
    assert MntrSample(0.0, values).watch_notifications == 42


def test_quiet_rate_discounts_the_mntr_packet() -> None:
    rate = quiet_rate(sample(10.0, 1000), sample(12.0, 1005))
    assert rate.packets == 4 and rate.per_s == pytest.approx(2.0)
    assert quiet_rate(sample(10.0, 1000), sample(11.0, 1001)).packets == 0


def test_server_requests_take_out_everything_that_is_not_a_request() -> None:
    # A join: 100 requests, 1 connect, 3 pings over 3 s at 1/s, the closing mntr, 2 more mntr
    # calls made while waiting for the group to settle; the watch fired on 8 members.
    before = sample(100.0, 5000, children=10)
    after = sample(103.0, 5000 + 100 + 1 + 3 + 1 + 2, children=18)
    got = server_requests(before, after, PingRate(1.0, 2.0, 2), sessions_opened=1,
                          mntr_between=2)
    assert got.requests == 100 and got.watch_notifications == 8
    assert got.to_json()["mntr_calls"] == 3 and got.pings_estimated == pytest.approx(3.0)
    # Never negative, even when the ping estimate overshoots an idle window.
    assert server_requests(sample(0, 10), sample(5, 11), PingRate(3.0, 1, 3)).requests == 0


def test_relative_difference() -> None:
    assert relative_difference(100, 95) == pytest.approx(0.05)
    assert relative_difference(0, 5) is None and relative_difference(10, None) is None
