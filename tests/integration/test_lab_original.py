"""The original 0.10.2 connector's members in the lab, on the real 0.10.2 broker and ZooKeeper.

Every member of an ``original-zk-*`` protocol is a JVM running Kafka 0.10.2's Scala
``ZookeeperConsumerConnector``: the compare measures a clean leave of one of them (its session
closed by the connector's own shutdown) and the herd counts what a join costs on the ZooKeeper
server, the only witness of an original member's requests. Small groups: each member is a JVM.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from zkconsumer.lab import ExperimentSpec, RunStatus, Timing, run_experiment
from zkconsumer.lab.herd.run import run_herd
from zkconsumer.lab.herd.spec import HERD_TIMING, HerdSpec
from zkconsumer.testing.original import parse_assignment


@pytest.mark.timeout(300)
def test_an_original_member_leaves_cleanly_and_its_partitions_move_with_nothing_lost(
        tmp_path: Path, kafka_build) -> None:
    home = kafka_build("0.10.2", member_driver=True)
    spec = ExperimentSpec(protocols=("original-zk-range",), events=("leave",), members=2,
                          partitions=4, broker=f"kafka:{home}", out_dir=str(tmp_path),
                          timing=Timing(session_timeout_ms=6000, rebalance_backoff_ms=500))
    [result] = run_experiment(spec)
    assert result.status == RunStatus.OK.value and result.reason is None, (
        result.reason, result.details.get("traceback"))
    m = result.metrics
    assert (m["lost"], m["members_paused"], m["double_owned_intervals"]) == (0, 1, 0)
    assert m["time_to_stable_s"] is not None and m["rebalance_attempts"] >= 1
    # The JVM counts nothing itself: not observed, said why, and the server saw the window.
    assert (m["coordination_requests"], m["watch_notifications"]) == (None, None)
    assert set(result.details["metric_notes"]) >= {"coordination_requests",
                                                   "watch_notifications"}
    assert result.details["zk_mntr_delta"]["zk_packets_received"] > 0
    assert result.details["broker"] == "apache-kafka-0.10.2.2"
    runs = Path(result.records_dir)  # type: ignore[arg-type]
    # m01 left: its connector shut down (commit, session closed) and said so.
    assert (runs / "m01.0.jsonl.jvm.out").read_text().splitlines()[-1] == "SHUTDOWN"
    survivor = (runs / "m00.0.jsonl.jvm.out").read_text().splitlines()
    _, cid, decided = [line for line in survivor
                       if line.startswith("REBALANCE_ASSIGN ")][-1].split(" ", 2)
    assert cid.endswith("_m00-i0")
    assert parse_assignment(decided) == {result.details["topic"]: {p: f"{cid}-0"
                                                                   for p in range(4)}}


@pytest.mark.timeout(300)
def test_a_join_to_an_original_group_is_counted_on_the_zookeeper_server(
        tmp_path: Path, kafka_build) -> None:
    home = kafka_build("0.10.2", member_driver=True)
    timing = replace(HERD_TIMING, rebalance_backoff_ms=500, quiet_s=1.0,
                     auto_commit_interval_ms=500)
    result = run_herd(HerdSpec(protocols=("original-zk-range",), members=(1, 2), partitions=4,
                               events=("join",), timing=timing, broker=f"kafka:{home}",
                               ping_window_s=1.0, out_dir=str(tmp_path)))
    runs = {r.members: r for r in result.runs}
    assert sorted(runs) == [1, 2]
    for n, r in runs.items():
        m = r.metrics
        assert r.status == "ok" and r.reason is None, (n, r.reason, r.details.get("traceback"))
        # Every member rebalanced; the N old ones were told by a watch the server sent.
        assert m["members_rebalanced"] == n + 1, r.details["members_rebalanced"]
        assert m["watch_notifications_server"] == n
        # The server's count is the figure: its packets less pings (estimated), the joiner's
        # connect and the mntr call; the members' rebalance reads are among those packets.
        server = r.details["zk_server"]
        assert m["zk_requests_server"] == server["requests"] is not None
        assert server["packets_received"] > (n + 1) * 2 + server["sessions_opened"]
        assert (m["coordination_requests"], m["zk_requests_client"],
                m["requests_disagreement"]) == (None, None, None)
