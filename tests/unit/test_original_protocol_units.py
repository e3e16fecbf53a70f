"""The original 0.10.2 members as lab protocols: the lines of the JVM become lab records, and a
run that cannot have the 0.10.2 build is refused naming its broker (no servers, no JVM)."""

from __future__ import annotations

from pathlib import Path

import pytest

from zkconsumer.errors import ServerError
from zkconsumer.lab.drivers import get_driver
from zkconsumer.lab.drivers.base import MemberSpec
from zkconsumer.lab.drivers.original import (
    JAVA_SOURCE,
    SPLIT_UNOBSERVED,
    Record,
    log_records,
    member_argv,
    stdout_records,
    unobserved,
)
from zkconsumer.lab.original_build import BuildChoice, build_problem, original_home
from zkconsumer.lab.records import decision_digest
from zkconsumer.scenarios.protocols import (
    COMPARED,
    COMPARED_KAFKA4,
    ORIGINALS,
    PROTOCOL_TABLE,
)
from zkconsumer.scenarios.timing import Timing

CID = "g_m01-i0"
ASSIGN = (f"REBALANCE_ASSIGN {CID} Map(t -> Map(0 -> g_m00-i0-0, 1 -> g_m00-i0-0, "
          f"2 -> {CID}-0, 3 -> {CID}-0))")


def test_the_original_protocols_are_lab_protocols_shown_apart_from_the_comparison() -> None:
    assert ORIGINALS == ("original-zk-range", "original-zk-roundrobin")
    table = {n: (PROTOCOL_TABLE[n].strategy, PROTOCOL_TABLE[n].family, PROTOCOL_TABLE[n].lab,
                 PROTOCOL_TABLE[n].simulated, PROTOCOL_TABLE[n].label) for n in ORIGINALS}
    assert table == {"original-zk-range": ("range", "zookeeper", True, False,
                                           "original (0.10.2)"),
                     "original-zk-roundrobin": ("roundrobin", "zookeeper", True, False, "")}
    assert not set(ORIGINALS) & (set(COMPARED) | set(COMPARED_KAFKA4))
    assert PROTOCOL_TABLE["original-zk-range"].colour == "C9"
    driver = get_driver("original-zk-range")
    assert (driver.family, driver.attempt_counter, driver.option("implementation")) == (
        "zookeeper", None, "original")


def test_a_release_revokes_the_partitions_of_the_members_topic_only() -> None:
    line = "REBALANCE_RELEASE Map(other-t -> ArrayBuffer(5), t -> ArrayBuffer(0, 1, 3))"
    assert stdout_records(line, "t", CID) == [Record("tl", {"w": "revoked", "ps": [0, 1, 3]})]
    assert stdout_records("REBALANCE_RELEASE Map()", "t", CID) == []


def test_the_connectors_shutdown_ends_the_members_fetching_when_it_begins() -> None:
    assert stdout_records("LEAVING", "t", CID) == [
        Record("lc", {"w": "stopped", "detail": "connector shutting down"})]
    assert stdout_records("SHUTDOWN", "t", CID) == []


def test_an_assignment_starts_fetching_the_members_own_partitions_and_is_its_decision() -> None:
    records = stdout_records(ASSIGN, "t", CID)
    digest = decision_digest({"t": [0, 1, 2, 3]}, {"t": ["g_m00-i0-0", f"{CID}-0"]},
                             {("t", 0): "g_m00-i0-0", ("t", 1): "g_m00-i0-0",
                              ("t", 2): f"{CID}-0", ("t", 3): f"{CID}-0"})
    assert records == [
        Record("dc", {"h": digest, "ids": ["g_m00-i0", CID], "pc": {"t": 4}}),
        Record("tl", {"w": "assigned", "ps": [2, 3]}),
        Record("tl", {"w": "fetching", "ps": [2, 3]}),
        Record("co", {"w": "rebalance_succeeded"}),
    ]


def test_a_member_that_is_assigned_nothing_still_completes_its_rebalance() -> None:
    line = "REBALANCE_ASSIGN g_m05-i0 Map(t -> Map(0 -> g_m00-i0-0))"
    assert [r.kind for r in stdout_records(line, "t", "g_m05-i0")] == ["dc", "co"]


def test_a_message_line_is_a_delivery_carrying_the_producers_sequence_number() -> None:
    line = "MSG stream=0 topic=t partition=3 offset=17 key=null value=342"
    assert stdout_records(line, "t", CID) == [Record("d", {"p": 3, "o": 17, "v": 342})]
    assert stdout_records(line.replace("topic=t", "topic=u"), "t", CID) == []
    assert stdout_records("READY streams=1", "t", CID) == []


def test_the_connectors_log_gives_attempts_conflicts_and_failed_rebalances() -> None:
    first = ("[2026-01-01 10:00:00,000] INFO [g_c1], begin rebalancing consumer g_c1 try #0 "
             "(kafka.consumer.ZookeeperConsumerConnector)")
    assert log_records(first) == [Record("co", {"w": "rebalance_started"}),
                                  Record("co", {"w": "attempt"})]
    assert log_records(first.replace("try #0", "try #2")) == [Record("co", {"w": "attempt"})]
    conflict = ("INFO g_c1-0 waiting for the partition ownership to be deleted: 3 for topic t "
                "(kafka.consumer.ZookeeperConsumerConnector)")
    assert log_records(conflict) == [Record("co", {"w": "owner_conflict"})]
    failed = "ERROR kafka.common.ConsumerRebalanceFailedException: g_c1 can't rebalance after 4"
    assert log_records(failed) == [Record("co", {"w": "rebalance_failed"})]
    assert log_records("INFO [g_c1], end rebalancing consumer g_c1 try #0") == []
    expired = "INFO zookeeper state changed (Expired) (org.I0Itec.zkclient.ZkClient)"
    assert log_records(expired) == [Record("co", {"w": "session_expired"})]


def test_metrics_the_jvm_does_not_report_are_none_with_the_reason() -> None:
    metrics = {"coordination_requests": 0, "watch_notifications": 0, "requests_by_type": {},
               "time_to_stable_s": 1.5, "rollbacks": 0}
    notes = unobserved(metrics)
    assert metrics == {"coordination_requests": None, "watch_notifications": None,
                       "requests_by_type": {}, "time_to_stable_s": 1.5, "rollbacks": None}
    assert sorted(notes) == ["coordination_requests", "rollbacks", "watch_notifications"]
    assert "mntr" in notes["coordination_requests"]
    zombie = {"late_commits_accepted": 0, "late_commits_rejected": 0, "offset_regressions": 1}
    notes = unobserved(zombie, SPLIT_UNOBSERVED)
    assert zombie == {"late_commits_accepted": None, "late_commits_rejected": None,
                      "offset_regressions": 1, "coordination_requests": None,
                      "watch_notifications": None, "rollbacks": None}
    assert "offset_regressions" in notes["late_commits_accepted"]


def test_the_member_runs_the_java_source_from_the_builds_class_runner(tmp_path: Path) -> None:
    s = MemberSpec(protocol="original-zk-roundrobin", member="m02", incarnation=1, topic="t",
                   group="g", partitions=8, zk_connect="127.0.0.1:2181",
                   bootstrap="127.0.0.1:9092", records_path=str(tmp_path / "m02.1.jsonl"),
                   timing=Timing(session_timeout_ms=4000), kafka_home="/k")
    argv = member_argv(s, "roundrobin")
    assert argv[:3] == ["bash", "/k/bin/kafka-run-class.sh", str(JAVA_SOURCE)]
    assert member_argv(s, "roundrobin", tmp_path)[2] == "OriginalLabMember"
    assert JAVA_SOURCE.is_file()
    assert "consumer.id=m02-i1" in argv and "partition.assignment.strategy=roundrobin" in argv
    assert "zookeeper.session.timeout.ms=4000" in argv and "topic=t" in argv
    assert MemberSpec.from_json(s.to_json()) == s


def test_a_run_of_the_original_without_the_0_10_2_build_names_the_broker(tmp_path: Path
                                                                          ) -> None:
    protocols = ("original-zk-range", "zk-range")
    tansu = build_problem(protocols, BuildChoice("tansu", False), None, None)
    assert tansu is not None and "got --broker tansu" in tansu
    assert "original-zk-range runs the original 0.10.2 connector" in tansu
    both = build_problem(("original-zk-range", "original-zk-roundrobin"),
                         BuildChoice("tansu", False), None, None)
    assert both is not None and both.startswith(
        "original-zk-range, original-zk-roundrobin run the original 0.10.2 connector")
    default = build_problem(protocols, BuildChoice(None, False), None, None)
    assert default is not None
    assert "got --broker (none given: the embedded default, tansu)" in default
    kafka24 = build_problem(protocols, BuildChoice("kafka:k241", False), tmp_path, "2.4.1")
    assert kafka24 is not None and "got --broker kafka:k241, which is Apache Kafka 2.4.1" \
        in kafka24
    no_runner = build_problem(protocols, BuildChoice("kafka:k", False), tmp_path, "0.10.2.2")
    assert no_runner is not None and "has no bin/kafka-run-class.sh" in no_runner
    named = build_problem(protocols, BuildChoice(None, True), None, None)
    assert named is not None and "--zookeeper/--bootstrap" in named
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "kafka-run-class.sh").write_text("")
    assert build_problem(protocols, BuildChoice("kafka:k", False), tmp_path, "0.10.2.2") \
        is None
    assert build_problem(("zk-range",), BuildChoice("tansu", False), None, None) is None


def test_the_lab_refuses_the_original_on_tansu_before_starting_anything(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ServerError, match="got --broker tansu"):
        original_home(("original-zk-roundrobin",), "tansu", False)
    assert original_home(("zk-range",), "tansu", False) == ""
    # No --broker: the broker ZKCONSUMER_BOOTSTRAP chooses is the one named.
    monkeypatch.setenv("ZKCONSUMER_BOOTSTRAP", "tansu")
    with pytest.raises(ServerError, match="got --broker tansu"):
        original_home(("original-zk-range",), None, False)


def test_the_herd_fits_the_originals_requests_on_the_servers_count() -> None:
    from zkconsumer.lab.herd.report import fits_table
    from zkconsumer.lab.herd.spec import SCENARIO, fit_runs
    from zkconsumer.lab.runs import RunResult

    runs = [RunResult(protocol="original-zk-range", members=n, partitions=8, event="join",
                      repeat=0, status="ok", scenario=SCENARIO,
                      metrics={"coordination_requests": None, "zk_requests_server": server})
            for n, server in ((2, 40), (4, 160))]
    fits = fit_runs(runs)
    fit = fits["original-zk-range/join"]
    assert (fit["basis"], round(fit["slope"], 2), fit["server_slope"], fit["points"]) == (
        "server", 2.0, 2.0, [[2.0, 40.0], [4.0, 160.0]])
    assert "| original-zk-range/join | — | 2.00 |" in fits_table(fits)


def test_the_original_table_labels_every_row_with_its_broker_and_implementation() -> None:
    from zkconsumer.results.figures.original import compare_table

    row = {"status": "ok", "reason": "", "time_to_stable_s": "2.0",
           "partition_seconds_unavailable": "1.5", "members_paused": "3",
           "group_rebalances": "1", "rebalance_attempts": "3", "conflicts": "0",
           "duplicates": "0", "lost": "0", "zk_packets_received": "120"}
    original = [{**row, "protocol": "original-zk-range", "event": "leave",
                 "coordination_requests": ""},
                {**row, "protocol": "original-zk-range", "event": "leave",
                 "coordination_requests": "", "time_to_stable_s": "4.0"}]
    peer = [{**row, "protocol": "eager-range", "event": "leave", "coordination_requests": "33",
             "conflicts": None, "zk_packets_received": None}]
    table = compare_table([("apache-kafka-0.10.2.2", original),
                           ("apache-kafka-0.10.2.2", peer)]).splitlines()
    assert table[2] == ("| leave | original-zk-range | original 0.10.2 (JVM) | "
                        "apache-kafka-0.10.2.2 | 2/2 | 3.00 | 1.50 | 3 | 1 | 3 | 0 | — | 120 | "
                        "0 | 0 |")
    assert table[3] == ("| leave | eager-range | confluent-kafka | apache-kafka-0.10.2.2 | 1/1 | "
                        "2.00 | 1.50 | 3 | 1 | 3 | — | 33 | — | 0 | 0 |")


def test_a_leaving_original_member_reports_its_jvms_memory_and_spark_summarises_it() -> None:
    from zkconsumer.lab.drivers.original import RSS_DETAIL, rss_of
    from zkconsumer.spark.originals import memory_note

    assert rss_of(f"{RSS_DETAIL}204800") == 204800
    assert rss_of("") is None
    assert memory_note([]) is None
    assert memory_note([204800, 102400, 307200]) == (
        "Original 0.10.2 members (a JVM each): resident memory at their leave, median 200 MB, "
        "max 300 MB over 3 members.")
