"""Split brain on the real servers: a zombie delivers what its successor delivers, a stale view
makes members fight over owner znodes, and a ZooKeeper leader kill keeps ownership exactly-one.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import pytest

from zkconsumer.cli import experiment
from zkconsumer.lab.runs import RunStatus
from zkconsumer.lab.servers import Servers
from zkconsumer.lab.splitbrain import SplitBrainSpec, run_failover, run_stale_view
from zkconsumer.lab.splitbrain.failover import REBALANCE, FailoverCluster
from zkconsumer.lab.splitbrain.spec import DEFAULT_TIMING

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TIMING = replace(DEFAULT_TIMING, session_timeout_ms=3000, quiet_s=2.0)


def split_brain(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="zkconsumer")
    experiment.register(parser.add_subparsers(dest="verb"))
    args = parser.parse_args(["experiment", "split-brain", *argv])
    return int(args.func(args))


@pytest.mark.timeout(180)
def test_zombie_cli_delivers_messages_twice_during_a_double_owned_interval(
        zk_connect: str, broker: object, tmp_path: Path) -> None:
    out = tmp_path / "zombie"
    code = split_brain("--scenario", "zombie", "--members", "2", "--partitions", "4",
                       "--protocols", "zk-range", "--session-timeout-ms", "3000",
                       "--overlap-s", "1", "--zk", zk_connect,
                       "--bootstrap", broker.bootstrap,  # type: ignore[attr-defined]
                       "--out", str(out), "--no-progress")
    assert code == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["spec"]["scenario"] == "zombie"
    (run,) = doc["runs"]
    assert run["status"] == RunStatus.OK.value, run["reason"]
    assert run["scenario"] == "split-brain" and run["event"] == "zombie"
    assert run["params"]["session_timeout_ms"] == 3000 and run["params"]["members"] == 2
    m, d = run["metrics"], run["details"]
    assert isinstance(m["watch_notifications"], int) and m["watch_notifications"] >= 1
    assert "conflicting_decisions" in m
    # The zombie kept fetching while its successor fetched the same partitions ...
    assert m["double_owned_intervals"] >= 1 and m["double_owned_s"] > 0
    assert d["overlaps"] and all(o["other"] != d["zombie"] for o in d["overlaps"])
    assert m["zombie_overlap_deliveries"] >= 1, "the zombie delivered while double-owned"
    # ... so messages reached the application twice, through two different members.
    assert m["delivered_by_two"] >= 1 and m["duplicates"] >= 1
    assert d["delivered_by_two_sample"] and all(
        len(ms) == 2 for _, _, ms in d["delivered_by_two_sample"])
    assert d["pause_s"] > 3.0, "paused for longer than the session timeout"
    assert m["lost"] == 0
    assert "Tansu" in d["broker"]
    summary = (out / "summary.md").read_text()
    assert "zombie" in summary and "msgs delivered by two" in summary and "Tansu" in summary
    assert "zkconsumer experiment split-brain --scenario zombie" in summary
    png = out / "zombie-timeline.png"
    assert png.read_bytes()[:8] == PNG_MAGIC and png.stat().st_size > 10_000


@pytest.mark.timeout(180)
def test_stale_view_makes_members_conflict_and_roll_back(zk_connect: str, broker: object,
                                                         tmp_path: Path) -> None:
    spec = SplitBrainSpec(scenario="stale-view", protocols=("zk-range",), members=3,
                          partitions=6, timing=TIMING)
    servers = Servers(zk_connect, broker.bootstrap)  # type: ignore[attr-defined]
    result = run_stale_view(spec, "zk-range", 0, servers, tmp_path / "stale")
    assert result.status == RunStatus.OK.value
    m, d = result.metrics, result.details
    assert d["lagging"] == ["m02"] and d["newcomers"] == ["m03", "m04"]
    assert m["conflicts"] >= 1, "a claim met an owner znode the lagging member still held"
    assert m["rollbacks"] >= 1, "the conflicting attempt gave back what it had claimed"
    assert m["rebalance_attempts"] > 5, "retries after the conflict, beyond one per member"
    # The second newcomer registers while the members are deciding, so a round holds two views
    # of the group; the conflicts send every member back to read again, and each one's final
    # decision is made from the full view: nobody is left acting on a stale one. Which round
    # the second view lands in depends on how fast the newcomer starts (a round ends after a
    # second without decisions, as long as the backoff), so it is not pinned to the first.
    rounds = d["decision_rounds"]
    assert len(rounds) >= 2, "the conflicts made the members decide again"
    assert any(r["distinct_views"] >= 2 for r in rounds), rounds
    assert all(r["dissenters"] == [] for r in rounds), rounds
    assert rounds[-1]["distinct_views"] == 1, rounds
    assert m["conflicting_decisions"] == 0
    assert d["settled"], "the group recovered once the lagging member caught up"
    assert m["lost"] == 0


@pytest.mark.timeout(240)
def test_leader_kill_during_a_rebalance_keeps_exactly_one_owner(broker: object,
                                                                tmp_path: Path) -> None:
    spec = SplitBrainSpec(scenario="failover", protocols=("zk-range",), members=2,
                          partitions=4, timing=TIMING)
    with FailoverCluster(broker.bootstrap) as cluster:  # type: ignore[attr-defined]
        result = run_failover(spec, "zk-range", REBALANCE, 0, cluster, tmp_path / "failover")
    assert result.status == RunStatus.OK.value, result.reason
    m, d = result.metrics, result.details
    assert d["new_leader"] != d["killed_server"]
    assert m["members_disconnected"] >= 1, "clients of the dead server saw the disconnection"
    assert m["double_owned_intervals"] == 0
    assert m["exactly_one_owner"] is True
    owners = set(d["owners_at_end"].values())
    assert len(owners) == 3, "the newcomer got its share: three members own the partitions"
    assert m["lost"] == 0


@pytest.mark.timeout(60)
def test_broker_proxy_keeps_a_kafka_client_on_the_proxy(broker: object, new_topic) -> None:
    """The broker-side zombie is only a zombie if *all* its traffic crosses its proxy: the
    broker advertises the proxy's address to it, and it consumes through it."""
    from confluent_kafka import Consumer, TopicPartition

    from zkconsumer.admin import produce
    from zkconsumer.faults import Direction
    from zkconsumer.lab.splitbrain.proxies import broker_proxy

    topic = new_topic(1)
    bootstrap = broker.bootstrap  # type: ignore[attr-defined]
    produce(bootstrap, topic, ["through the proxy"], partition=0)
    proxy = broker_proxy(bootstrap, name="broker-test")
    consumer = Consumer({"bootstrap.servers": proxy.address, "group.id": f"g-{topic}",
                         "auto.offset.reset": "earliest", "log_level": 0})
    try:
        brokers = consumer.list_topics(timeout=10).brokers
        assert [f"{b.host}:{b.port}" for b in brokers.values()] == [proxy.address]
        consumer.assign([TopicPartition(topic, 0, 0)])  # no group join: seconds on Tansu
        got = None
        for _ in range(150):
            msg = consumer.poll(0.2)
            if msg is not None and not msg.error():
                got = msg.value()
                break
        assert got == b"through the proxy"
        assert proxy.stats.bytes[Direction.DOWNSTREAM] > 0
    finally:
        consumer.close()
        proxy.stop()
