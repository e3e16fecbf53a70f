"""The one protocol table: the lab, the simulator, the split-brain rules and the figures read
their protocols from it."""

from __future__ import annotations

from zkconsumer.scenarios.protocols import (
    COMPARED,
    COMPARED_KAFKA4,
    DEMO,
    EVENTS,
    LAB,
    PROTOCOL_TABLE,
    SIMULATED,
    SPLIT_BRAIN,
    Decider,
)
from zkconsumer.scenarios.splitbrain import ZOMBIE_NOT_APPLICABLE, not_applicable
from zkconsumer.sim.protocols import PROTOCOL_INFO


def test_who_decides_follows_the_family_and_the_mode() -> None:
    deciders = {name: PROTOCOL_TABLE[name].decider for name in
                ("zk-range", "zk-leader-range", "eager-range", "static-range", "kip848",
                 "static-consumer-range")}
    assert deciders == {"zk-range": Decider.MEMBERS, "zk-leader-range": Decider.LEADER,
                        "eager-range": Decider.LEADER, "static-range": Decider.LEADER,
                        "kip848": Decider.COORDINATOR,
                        "static-consumer-range": Decider.COORDINATOR}


def test_the_simulator_knows_the_simulated_entries_with_their_family() -> None:
    assert tuple(PROTOCOL_INFO) == SIMULATED
    assert {n: (i.family, i.simulated_only) for n, i in PROTOCOL_INFO.items()} == {
        n: (PROTOCOL_TABLE[n].family, PROTOCOL_TABLE[n].simulated_only) for n in SIMULATED}
    assert [n for n in SIMULATED if PROTOCOL_INFO[n].simulated_only] == [
        "kip848", "kip848-range", "kip848-static"]


def test_the_lab_runs_every_event_of_its_protocols_and_none_of_the_modelled_ones() -> None:
    assert all(PROTOCOL_TABLE[n].events == EVENTS for n in LAB)
    assert "kip848" not in LAB and "kafka-eager-range" not in LAB
    assert PROTOCOL_TABLE["kip848"].events == ()


def test_the_zombie_applies_only_where_a_zookeeper_session_can_be_lost() -> None:
    assert SPLIT_BRAIN == DEMO == ("zk-range", "zk-leader-range", "eager-range",
                                  "cooperative-sticky")
    assert not_applicable("eager-range", "zombie") == ZOMBIE_NOT_APPLICABLE
    assert not_applicable("cooperative-sticky", "storm") is None
    assert not_applicable("zk-leader-range", "zombie") is None


def test_the_figures_colour_each_compared_protocol_alike_in_the_comparisons_order() -> None:
    assert COMPARED == ("zk-range", "zk-leader-range", "eager-range", "cooperative-sticky",
                        "static-range")
    assert [PROTOCOL_TABLE[n].colour for n in COMPARED] == ["C0", "C1", "C2", "C3", "C4"]
    assert PROTOCOL_TABLE["zk-roundrobin"].colour is None


def test_kip848_groups_are_compared_on_apache_kafka_4_only() -> None:
    kip848 = ("consumer-uniform", "consumer-range", "static-consumer-uniform",
              "static-consumer-range")
    assert COMPARED_KAFKA4 == COMPARED + kip848
    assert all(PROTOCOL_TABLE[n].kip848 and n in LAB for n in kip848)
    assert [PROTOCOL_TABLE[n].static for n in kip848] == [False, False, True, True]
