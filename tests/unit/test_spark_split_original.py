"""``spark split-brain --mode real`` with the original 0.10.2 connector's JVM members: which
scenarios they run, what they cannot report (null, not zero), the refusal without a 0.10.2
build, and the summary's line on their JVMs' memory."""

from __future__ import annotations

import argparse
import json

import pytest

from zkconsumer.errors import ServerError
from zkconsumer.lab.drivers.original import RSS_DETAIL
from zkconsumer.scenarios.splitbrain import PROTOCOLS, REAL_PROTOCOLS, SCENARIOS, not_applicable
from zkconsumer.spark.originals import memory_note, rss_kbs
from zkconsumer.spark.splitbrain.job import add_arguments, grid, run
from zkconsumer.spark.splitbrain.metrics import not_observed


def parse(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_arguments(p)
    return p.parse_args(["--out", "x", *argv])


def test_original_members_run_every_scenario_at_scale_with_real_members_only() -> None:
    for protocol in ("original-zk-range", "original-zk-roundrobin"):
        assert protocol in REAL_PROTOCOLS and protocol not in PROTOCOLS
        assert [not_applicable(protocol, s) for s in SCENARIOS] == [None] * len(SCENARIOS)
    cells = grid(parse("--mode", "real", "--protocols", "original-zk-range,zk-range",
                       "--scenarios", "zombie,storm", "--members", "4"))
    assert [(c.protocol, c.scenario) for c in cells] == [
        ("original-zk-range", "zombie"), ("zk-range", "zombie"),
        ("original-zk-range", "storm"), ("zk-range", "storm")]
    with pytest.raises(ValueError, match="original-zk-range"):
        grid(parse("--mode", "sim", "--protocols", "original-zk-range"))


def test_what_the_originals_jvm_does_not_report_is_null_not_zero() -> None:
    measured = {"zombie_commits_accepted": 0, "rollbacks": 0, "conflicts": 3, "lost": 0}
    assert not_observed("original-zk-range", measured) == {
        "zombie_commits_accepted": None, "rollbacks": None, "conflicts": 3, "lost": 0}
    assert not_observed("zk-range", measured) == measured


def test_the_job_refuses_the_original_without_a_0_10_2_build_before_spark_starts(
        monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.delenv("ZKCONSUMER_ZK", raising=False)
    monkeypatch.delenv("ZKCONSUMER_BOOTSTRAP", raising=False)
    args = parse("--mode", "real", "--protocols", "original-zk-range,zk-range",
                 "--scenarios", "storm", "--members", "4", "--broker", "tansu")
    args.out = tmp_path / "out"
    with pytest.raises(ServerError, match="--broker tansu"):
        run(args, spark="no Spark session is needed to refuse")
    assert not args.out.exists()


def test_the_summary_names_the_memory_of_the_original_members_jvms() -> None:
    raws = [json.dumps({"k": "lc", "ts": 1.0, "m": "m00000", "i": 0, "w": "stopping",
                        "detail": f"{RSS_DETAIL}{kb}"}) for kb in (204800, 307200)]
    raws += [json.dumps({"k": "lc", "ts": 2.0, "m": "m00001", "i": 0, "w": "stopping",
                         "detail": ""}),
             json.dumps({"k": "d", "ts": 3.0, "m": "m00001", "i": 0, "p": 0, "o": 1}),
             "not a record"]
    assert rss_kbs(raws) == [204800, 307200]
    assert memory_note(rss_kbs(raws)) == (
        "Original 0.10.2 members (a JVM each): resident memory at their leave, median 300 MB, "
        "max 300 MB over 2 members.")


def test_the_docs_table_gives_each_run_its_verdict_and_dashes_what_was_not_observed(
        tmp_path) -> None:
    from zkconsumer.results.figures.original import memory_line, spark_split_table

    base = {"mode": "real", "members": "4", "partitions": "8", "seed": "0",
            "applicable": "true", "reason": "", "rebalance_max_retries": "10",
            "verify_ok": "true", "repaired": "false",
            "lost": "0", "double_owned_partition_s": "1.5", "zombie_deliveries": "3",
            "delivered_twice": "2", "offsets_went_back": "0", "zombie_commits_accepted": "",
            "conflicts": "4", "rollbacks": "", "rebalances_given_up": "0",
            "unowned_partition_s": "0.25", "time_to_stable_s": "7.0"}
    rows = [{**base, "scenario": "zombie", "protocol": "original-zk-range"},
            {**base, "scenario": "storm", "protocol": "zk-range", "rebalance_max_retries": "1",
             "verify_ok": "false",
             "repaired": "true", "lost": "5", "rollbacks": "2"},
            {**base, "scenario": "storm", "protocol": "original-zk-range",
             "reason": "the group did not form: 1 of 4 initial members exited"},
            {**base, "scenario": "zombie", "protocol": "consumer-range",
             "applicable": "false", "reason": "does not apply"}]
    table = spark_split_table("apache-kafka-0.10.2.2", rows).splitlines()
    assert table[2] == ("| zombie | original-zk-range | original 0.10.2 (JVM) | 4 | 8 | 0 | "
                        "apache-kafka-0.10.2.2 | 10 | formed | 1.50 | 3 | 2 | 0 | — | 4 | — | 0 | "
                        "0.25 | 7 |")
    assert table[3] == ("| storm | zk-range | zkconsumer | 4 | 8 | 0 | apache-kafka-0.10.2.2 | 1 | "
                        "formed, stuck, 5 lost | 1.50 | 3 | 2 | 0 | — | 4 | 2 | 0 | 0.25 | 7 |")
    assert table[4].startswith("| storm | original-zk-range | original 0.10.2 (JVM) | 4 | 8 | 0 "
                               "| apache-kafka-0.10.2.2 | 10 | did not form |")
    assert len(table) == 5  # the not-applicable row is not listed
    (tmp_path / "summary.md").write_text(
        "# x\n\n- Original 0.10.2 members (a JVM each): resident memory at their leave, "
        "median 200 MB, max 300 MB over 3 members.\n")
    assert memory_line(tmp_path) == ("Original 0.10.2 members (a JVM each): resident memory at "
                                     "their leave, median 200 MB, max 300 MB over 3 members.")
    assert memory_line(tmp_path / "none") == ("(the run reported no original member's JVM "
                                              "memory)")


def test_a_storms_retry_budget_is_rebalance_max_retries_in_the_original_members_config() -> None:
    from zkconsumer.lab.drivers.base import MemberSpec
    from zkconsumer.lab.drivers.original import member_argv
    from zkconsumer.scenarios.splitbrain import ScenarioParams
    from zkconsumer.scenarios.timing import Timing
    from zkconsumer.spark.splitbrain.real import SplitCellKey, run_timing

    base, params = Timing(rebalance_max_retries=10), ScenarioParams(max_retries=1)

    def argv(scenario: str) -> list[str]:
        timing = run_timing(base, SplitCellKey("original-zk-range", scenario, 4, 8, 0), params)
        spec = MemberSpec(protocol="original-zk-range", member="m00001", incarnation=0,
                          topic="t", group="g", partitions=8, zk_connect="127.0.0.1:4000/c",
                          bootstrap="127.0.0.1:9092", records_path="r.jsonl", timing=timing,
                          kafka_home="kafka")
        return member_argv(spec, "range")

    assert "rebalance.max.retries=1" in argv("storm")
    assert "rebalance.max.retries=10" in argv("zombie")
    assert "zk=127.0.0.1:4000/c" in argv("zombie")  # the member's proxy, chroot kept


def test_the_spark_herd_table_dashes_what_the_original_does_not_report_and_says_unsettled(
        ) -> None:
    from zkconsumer.results.figures.original import spark_herd_table

    base = {"members": "32", "partitions": "128", "seed": "0", "coordination_requests": "2036",
            "watch_notifications": "32", "rebalance_attempts": "1", "conflicts": "0",
            "rollbacks": "0", "members_paused": "32", "time_to_stable_s": "0.987",
            "lost": "0", "settled": "true"}
    rows = [{**base, "event": "leave", "protocol": "zk-range"},
            {**base, "event": "join", "protocol": "zk-range"},
            # the original's JVM reports no requests, notifications or deletions: never a 0
            {**base, "event": "join", "protocol": "original-zk-range",
             "coordination_requests": "0", "watch_notifications": "0", "rollbacks": "0",
             "settled": "false"}]
    table = spark_herd_table("apache-kafka-0.10.2.2", rows).splitlines()
    assert table[2] == ("| join | 32 | 128 | original-zk-range | original 0.10.2 (JVM) | 0 | "
                        "apache-kafka-0.10.2.2 | — | — | 1 | 0 | — | 32 | not settled | 0 |")
    assert table[3] == ("| join | 32 | 128 | zk-range | zkconsumer | 0 | apache-kafka-0.10.2.2 | "
                        "2,036 | 32 | 1 | 0 | 0 | 32 | 0.99 | 0 |")
    assert table[4].startswith("| leave | 32 | 128 | zk-range |")
