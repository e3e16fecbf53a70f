"""The demo's decisions: which broker its comparison runs on, the versions it records, and the
Kafka 2.4.1 figures it sets beside its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from zkconsumer.cli.demo_compare import REFERENCE_KAFKA, compare_broker, reference_rows
from zkconsumer.errors import ServerError
from zkconsumer.lab.runs import RunResult
from zkconsumer.report.reference import Reference
from zkconsumer.testing.kafka import find_kafka_home
from zkconsumer.testing.zookeeper import release_from_mntr

HOME = Path("kafka-2.4.1")


def test_a_kafka_directory_replaces_tansu_for_the_comparison() -> None:
    assert compare_broker(None, {}, HOME) == "kafka:kafka-2.4.1"


@pytest.mark.parametrize(("option", "env"), [
    ("tansu", {}),  # --broker chose one
    (None, {"ZKCONSUMER_BOOTSTRAP": "tansu"}),
    (None, {"ZKCONSUMER_ZK": "127.0.0.1:2181"}),  # servers the user runs
])
def test_a_broker_the_user_chose_is_kept(option: str | None, env: dict[str, str]) -> None:
    assert compare_broker(option, env, HOME) is None


def test_without_a_kafka_directory_the_comparison_stays_on_the_demos_broker() -> None:
    assert compare_broker(None, {}, None) is None


def test_a_bad_kafka_home_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ServerError, match="no-such-kafka"):
        find_kafka_home(REFERENCE_KAFKA,
                        environ={"ZKCONSUMER_KAFKA_HOME": str(tmp_path / "no-such-kafka")})


def test_the_zookeeper_version_is_cut_from_mntr() -> None:
    mntr = ("zk_version\t3.9.5-1a2b3c4d, built on 2025-01-01 00:00 UTC\n"
            "zk_avg_latency\t0.1\n")
    assert release_from_mntr(mntr) == "3.9.5"
    assert release_from_mntr("zk_avg_latency\t0.1\n") == ""


def test_the_reference_column_sits_beside_each_cell() -> None:
    reference = Reference(broker="apache-kafka-2.4.1", members=4, partitions=8,
                          session_timeout_ms=6000, repeats=3,
                          stable_s={("eager-range", "join"): 0.839})
    runs = [RunResult("eager-range", 3, 6, "join", 0, metrics={"time_to_stable_s": 4.013}),
            RunResult("zk-range", 3, 6, "crash", 0, status="failed", reason="x")]
    assert reference_rows(runs, reference)[2:] == ["| eager-range | join | 4.01 | 0.84 |",
                                                  "| zk-range | crash | failed | — |"]


def test_on_tansu_the_console_names_the_coordinator_and_shows_kafkas_figures(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from zkconsumer.cli.demo_compare import print_comparison
    from zkconsumer.report.reference import kafka_reference

    runs = [RunResult("eager-range", 3, 6, "join", 0, metrics={"time_to_stable_s": 4.013}),
            RunResult("cooperative-sticky", 3, 6, "join", 0, metrics={"time_to_stable_s": 8.02})]
    assert print_comparison(runs, tmp_path, "tansu-0.6.0")
    out = capsys.readouterr().out
    assert "Broker: tansu-0.6.0. Caution: broker timings are Tansu's: its coordinator holds " \
           "every group round about half a session timeout (about 2.0 s of the 4000 ms " \
           "here)" in out
    reference = kafka_reference()
    assert reference is not None
    eager = reference.stable_s[("eager-range", "join")]
    assert f"| eager-range | join | 4.01 | {eager:.2f} |" in out
    assert "Beside them, Apache Kafka 2.4.1 in docs/comparison.md" in out
