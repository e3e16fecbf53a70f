"""The SIGKILL run's tally (zkconsumer.results.peer_kill): parsing, duplicates, losses, double
ownership and deliveries after an owner znode went."""

from __future__ import annotations

import pytest

from zkconsumer.results.peer_kill import (
    Release,
    double_ownership,
    duplicates,
    lost,
    parse_deliveries,
    releases,
    releases_before,
    runs,
    tally,
    union_length,
)


def test_parse_skips_a_line_cut_short_and_garbage() -> None:
    text = "10.5 0 1\n10.6 3 7\nnot a line\n10.7 2"
    assert parse_deliveries(text) == [(10.5, 0, 1), (10.6, 3, 7)]


def test_duplicates_count_every_delivery_past_the_first_over_members() -> None:
    d = {"a": [(1.0, 0, 0), (1.1, 0, 1)], "b": [(2.0, 0, 1), (2.1, 0, 2)],
         "c": [(3.0, 0, 1)]}
    assert duplicates(d) == 2


def test_lost_is_acknowledged_and_never_delivered() -> None:
    d = {"a": [(1.0, 0, 0), (1.0, 1, 0)]}
    assert lost([(0, 0), (0, 1), (1, 0), (1, 1), (1, 1)], d) == 2


def test_runs_break_at_a_gap_longer_than_the_limit() -> None:
    assert runs([3.0, 1.0, 1.5, 5.0, 5.2], gap=1.0) == [(1.0, 1.5), (3.0, 3.0), (5.0, 5.2)]


def test_union_length_merges_overlapping_spans() -> None:
    assert union_length([(0.0, 2.0), (1.0, 3.0), (5.0, 6.0), (5.5, 5.7)]) == pytest.approx(4.0)


def test_double_ownership_is_the_overlap_of_two_members_runs() -> None:
    # a delivers partition 0 from t=0 to t=4, b from t=3 to t=6: 1 s at once; partition 1 is
    # handed over without overlap.
    a = [(t / 2, 0, i) for i, t in enumerate(range(0, 9))] + [(1.0, 1, 0), (2.0, 1, 1)]
    b = [(3.0 + t / 2, 0, 100 + i) for i, t in enumerate(range(0, 7))] + [(2.5, 1, 2)]
    assert double_ownership({"a": a, "b": b}, gap=1.0) == {0: pytest.approx(1.0)}


def test_no_double_ownership_when_runs_only_touch_across_a_gap() -> None:
    a = [(0.0, 0, 0), (0.5, 0, 1), (5.0, 0, 9)]
    b = [(1.0, 0, 2), (4.0, 0, 3)]
    # a's runs: (0, 0.5) and (5, 5); b's: (1, 1) and (4, 4): never at once.
    assert double_ownership({"a": a, "b": b}, gap=1.0) == {}


VIEWS = [(9.0, {0: "a", 1: "b", 2: "k"}), (10.5, {0: "a", 1: "b", 2: "k"}),
         (11.0, {1: "b"}), (12.0, {1: "b", 0: "b", 2: "a"}), (13.0, {0: "a", 1: "b", 2: "b"})]


def test_releases_time_the_znode_and_what_was_delivered_after_it() -> None:
    d = {"a": [(10.0, 0, 0), (11.2, 0, 1), (11.6, 0, 2), (12.5, 2, 0), (13.5, 0, 3)],
         "b": [(10.0, 1, 0), (12.4, 0, 3)]}
    got = releases(VIEWS, d, killed_at=10.0, live=["a", "b"])
    # a owned 0 at the kill, lost its znode at 11.0, delivered until 11.6, regained it at 13.0
    # (its later delivery is not counted); b kept 1 throughout.
    assert got == [Release("a", 0, 11.0, 11.6, 2)]
    assert got[0].lag == pytest.approx(0.6)


def test_a_delivery_after_the_last_poll_without_the_znode_may_follow_the_claim() -> None:
    views = [(9.0, {0: "a"}), (11.0, {}), (12.0, {}), (13.0, {0: "a"})]
    d = {"a": [(10.5, 0, 0), (11.5, 0, 1), (12.5, 0, 2)]}
    # 11.5 is between two polls that both saw no owner: delivered without the znode; 12.5 is
    # after the last of them and before the poll that saw the claim: not counted.
    assert releases(views, d, killed_at=10.0, live=["a"]) == [Release("a", 0, 11.0, 11.5, 1)]


def test_a_release_without_a_delivery_has_no_lag() -> None:
    got = releases(VIEWS, {"a": []}, killed_at=10.0, live=["a"])
    assert got == [Release("a", 0, 11.0, None, 0)]
    assert got[0].lag is None


def test_tally_gathers_every_figure() -> None:
    d = {"a": [(10.0, 0, 0), (11.2, 0, 1), (11.6, 0, 2), (11.8, 0, 3)],
         "b": [(10.0, 1, 0), (11.5, 0, 2), (11.7, 0, 3), (12.0, 0, 4)], "k": [(9.5, 2, 0)]}
    acked = [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 0), (2, 0)]
    t = tally(d, acked, VIEWS, killed_at=10.0, live=["a", "b"], gap=1.0)
    assert t.as_dict() == {
        "delivered": 9, "acknowledged": 8, "duplicates": 2, "duplicates_total": 2, "lost": 1,
        "double_partitions": 1, "double_max_s": 0.1, "double_total_s": 0.1,
        "join_double_partitions": 0, "join_double_max_s": 0.0,
        "released": 1, "delivered_after_release": 3, "max_release_lag_s": 0.8}


def test_duplicates_since_count_only_redeliveries_from_then_on() -> None:
    d = {"a": [(1.0, 0, 0), (5.0, 0, 1)], "b": [(2.0, 0, 0), (6.0, 0, 1), (7.0, 0, 0)]}
    assert duplicates(d) == 3
    assert duplicates(d, since=4.0) == 2


def test_double_ownership_is_clipped_to_the_window() -> None:
    a = [(t / 10, 0, t) for t in range(0, 41)]
    b = [(2.0 + t / 10, 0, 10 + t) for t in range(0, 41)]
    # both deliver from 2 to 4; from the kill at 3.5 on, half a second of it; before, 1.5 s.
    assert double_ownership({"a": a, "b": b}, 1.0, (3.5, float("inf"))) == {
        0: pytest.approx(0.5)}
    assert double_ownership({"a": a, "b": b}, 1.0, (float("-inf"), 3.5)) == {
        0: pytest.approx(1.5)}


def test_a_handover_and_back_within_the_gap_is_not_double_ownership() -> None:
    # a delivers, b takes the partition for 0.4 s, a takes it back: never both at once.
    a = [(0.1 * i, 3, i) for i in range(0, 13)] + [(1.7 + 0.1 * i, 3, 21 + i) for i in range(5)]
    b = [(1.3 + 0.05 * i, 3, 13 + i) for i in range(8)]
    assert double_ownership({"a": a, "b": b}, gap=1.0) == {}


def test_releases_before_the_kill_are_every_move_of_an_owner_znode() -> None:
    views = [(1.0, {0: "a", 1: "a"}), (2.0, {1: "a"}), (3.0, {0: "b", 1: "a"}),
             (4.0, {0: "b"}), (5.0, {0: "b", 1: "b"}), (6.0, {0: "b"})]
    d = {"a": [(1.5, 0, 0), (2.5, 0, 1), (3.5, 1, 5)], "b": [(3.5, 0, 2)]}
    # a lost 0 at 2.0 and delivered it at 2.5 (never back); a lost 1 at 4.0, last delivered it
    # at 3.5; b's loss of 1 at 6.0 is after the kill at 5.5.
    assert releases_before(views, d, until=5.5, members=["a", "b"]) == [
        Release("a", 0, 2.0, 2.5, 1), Release("a", 1, 4.0, 3.5, 0)]
