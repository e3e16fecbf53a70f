"""The member driver protocol both kinds speak, and the oracle's comparison."""

from __future__ import annotations

import pytest

from zkconsumer.testing.member_driver import config_of, parse_args
from zkconsumer.testing.oracle import State, diff_states, normalise
from zkconsumer.testing.original import (
    format_assignment,
    format_release,
    parse_assignment,
    parse_message,
)


def test_an_original_assign_line_parses_into_topic_partition_thread():
    # As printed by the original 0.10.2.2 driver (Scala Map and TreeMap text).
    text = "Map(t1 -> Map(0 -> g_c1-0, 1 -> g_c1-1, 2 -> g_c1-0), t.2 -> Map())"
    assert parse_assignment(text) == {"t1": {0: "g_c1-0", 1: "g_c1-1", 2: "g_c1-0"}, "t.2": {}}
    assert parse_assignment("Map()") == {}


def test_zkconsumer_prints_what_the_parser_reads_back():
    a = {"b": {1: "g_z-0", 0: "g_z-1"}, "a": {0: "g_o-0"}}
    assert format_assignment(a) == "Map(a -> Map(0 -> g_o-0), b -> Map(0 -> g_z-1, 1 -> g_z-0))"
    assert parse_assignment(format_assignment(a)) == a
    assert format_release({"t": {2, 0}}) == "Map(t -> ArrayBuffer(0, 2))"


@pytest.mark.parametrize("bad", ["t1 -> Map(0 -> x)", "Map(t -> Map(0: x))"])
def test_a_line_that_is_not_a_scala_map_is_refused_by_value(bad):
    with pytest.raises(ValueError, match="not a Scala Map|bad partition entry"):
        parse_assignment(bad)


def test_msg_lines_parse_with_values_holding_spaces():
    m = parse_message("MSG stream=1 topic=t partition=3 offset=17 key=null value=a b=c")
    assert (m.stream, m.topic, m.partition, m.offset, m.value) == (1, "t", 3, 17, "a b=c")
    with pytest.raises(ValueError, match="not a MSG line"):
        parse_message("MSG topic=t")


def test_the_zkconsumer_driver_takes_the_original_drivers_arguments_and_defaults():
    kv = parse_args(["zk=h:1", "group=g", "topic=t", "streams=2", "consumer.id=c1",
                     "zookeeper.session.timeout.ms=4000"])
    cfg = config_of(kv)
    assert (cfg.group_id, cfg.consumer_id, cfg.zookeeper_session_timeout_ms) == ("g", "c1", 4000)
    assert cfg.auto_offset_reset == "smallest" and cfg.consumer_timeout_ms == 500
    with pytest.raises(SystemExit, match="exactly one of topic= and filter="):
        parse_args(["group=g", "topic=t", "filter=x"])
    with pytest.raises(SystemExit, match="'streams' is not key=value"):
        parse_args(["group=g", "topic=t", "streams"])


def test_the_oracle_names_the_first_step_that_differs():
    a = [State("start x", (("a", 0, "x-0"),), (("a", 0, 2),)),
         State("kill x", (("a", 0, "y-0"),), (("a", 0, 4),))]
    b = [a[0], State("kill x", (("a", 0, "y-0"),), (("a", 0, 3),))]
    assert diff_states(a, a) == []
    (only,) = diff_states(a, b)
    assert only.startswith("step 1:") and "('a', 0, 4)" in only and "('a', 0, 3)" in only
    assert diff_states(a, a[:1]) == [f"step 1: {a[1]} != None"]
    assert normalise("g", "g_x-0") == "x-0" and normalise("g", "h_x-0") == "h_x-0"
