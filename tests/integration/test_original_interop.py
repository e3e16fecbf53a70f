"""zkconsumer next to the original 0.10.2: a mixed group, and the original tools' output.

The JVM member writes its own registration (a wildcard in Java's dialect, ``\\p{Lower}`` and
``\\Q..\\E``, which Python's ``re`` cannot read) and decides with its own code; both kinds must
converge on one assignment. A registration nobody can read must then stop both kinds alike
(the original's rebalance fails after its retries), and its removal must bring both back.
"""

from __future__ import annotations

import json

import pytest
from connector_helpers import fast_config, owners, wait_until
from kazoo.client import KazooClient

from zkconsumer import Whitelist, ZookeeperConsumerConnector
from zkconsumer.testing import EmbeddedZooKeeper, KafkaBroker
from zkconsumer.testing.original import OriginalMember, run_tool
from zkconsumer.zk import paths

JAVA_FILTER = r"\p{Lower}+-\Qx.y\E"
MATCHING = {"abc-x.y": 4, "de-x.y": 2}
NOT_MATCHING = {"ABC-x.y": 2, "abc-xzy": 2}


@pytest.fixture(scope="module")
def original_cluster(kafka_build):
    """ZooKeeper and a 0.10.2 broker; the broker's ``home`` also runs the original's JVMs."""
    with EmbeddedZooKeeper() as zk, KafkaBroker(zk.connect_string, kafka_build("0.10.2")
                                                ) as broker:
        client = KazooClient(hosts=zk.connect_string)
        client.start(timeout=15)
        for topic, n in {**MATCHING, **NOT_MATCHING}.items():
            client.create(paths.topic(topic), json.dumps(
                {"version": 1, "partitions": {str(p): [0] for p in range(n)}}).encode(),
                makepath=True)
        yield zk.connect_string, broker, client
        client.stop()
        client.close()


def _all_owners(client: KazooClient, group: str) -> dict[tuple[str, int], str]:
    return {(t, p): o for t in {**MATCHING, **NOT_MATCHING}
            for p, o in owners(client, group, t).items()}


def test_jvm_and_zkconsumer_members_converge_and_fail_alike(original_cluster, kafka_build):
    kafka_build("0.10.2", member_driver=True)  # the JVM member below runs through it
    zk_connect, broker, client = original_cluster
    group = "mixed"
    # Retries enough for a join to wait out the other kind's release on a loaded machine (with
    # 2, a joiner whose attempts both met the JVM member still stopping gave up and owned
    # nothing until the next change), few enough that giving up stays quick.
    jvm = OriginalMember(broker.home, zk_connect, group, filter=JAVA_FILTER, streams=2, seconds=120,
                         props={"rebalance.max.retries": 6, "rebalance.backoff.ms": 300}).start()
    conn = ZookeeperConsumerConnector(fast_config(
        zk_connect, group, consumer_id="py", rebalance_max_retries=6, rebalance_backoff_ms=300))
    try:
        conn.create_message_streams_by_filter(Whitelist(JAVA_FILTER), 2)
        every = {(t, p) for t, n in MATCHING.items() for p in range(n)}

        def converged() -> bool:
            last = jvm.assignment()
            current = _all_owners(client, group)
            if last is None or set(current) != every:
                return False
            # The JVM member prints the whole group's assignment it computed.
            jvm_plan = {(t, p): th for t, m in last.items() for p, th in m.items()}
            ours = {(tp.topic, tp.partition): th for tp, th in conn.owned_partitions().items()}
            return jvm_plan == current and ours == {
                tp: th for tp, th in current.items() if th.startswith(f"{group}_py-")}
        wait_until(converged, 60, "one assignment of the matching topics across both kinds")
        current = _all_owners(client, group)
        # Range over 4 sorted thread ids: each member holds half of abc-x.y.
        jvm_id = jvm.consumer_id
        assert sorted(o.startswith(f"{jvm_id}-") for (t, _), o in current.items()
                      if t == "abc-x.y") == [False, False, True, True]

        # A registration no member can read (java.util.regex rejects it): both kinds fail
        # their rebalance after the retries and own nothing, instead of disagreeing.
        bad = f"{paths.consumer_ids(group)}/{group}_unreadable"
        client.create(bad, json.dumps({"version": 1, "subscription": {"(unclosed": 1},
                                       "pattern": "white_list", "timestamp": "1"}).encode())
        wait_until(lambda: jvm.count("ConsumerRebalanceFailedException") >= 1, 60,
                   "the JVM member to give up its rebalance")
        wait_until(lambda: conn.metrics()["rebalance_failures"] >= 1, 60,
                   "the zkconsumer member to give up its rebalance")
        assert _all_owners(client, group) == {}
        assert conn.owned_partitions() == {}

        client.delete(bad)
        wait_until(converged, 60, "both kinds to converge again once it is gone")
    finally:
        conn.shutdown()
        jvm.close()


def test_offset_checker_and_export_print_what_the_original_tools_print(original_cluster,
                                                                        tmp_path, capsys):
    """Same znodes, same broker: the original tools' stdout and file, byte for byte."""
    from confluent_kafka import Producer

    from zkconsumer.cli.main import main

    zk_connect, broker, client = original_cluster
    producer = Producer({"bootstrap.servers": broker.bootstrap, "log_level": 0})
    for i in range(7):
        producer.produce("abc-x.y", b"m", partition=i % 4)
    assert producer.flush(30) == 0
    long_group = "a-group-with-a-name-longer-than-fifteen"
    znodes = {paths.offset("tools", "abc-x.y", 0): b"2", paths.offset("tools", "abc-x.y", 2): b"0",
              paths.offset("tools", "ABC-x.y", 1): b"0",
              paths.owner("tools", "abc-x.y", 0): b"tools_c-0",
              paths.topic_owners("tools", "ABC-x.y"): b"",
              paths.offset(long_group, "abc-x.y", 3): b"5"}
    for path, value in znodes.items():
        client.create(path, value, makepath=True)

    def ours(*argv: str) -> str:
        main(list(argv))
        return capsys.readouterr().out

    checker = "kafka.tools.ConsumerOffsetChecker"
    outputs = []
    # Default topics (the owners' children), chosen topics with broker info, and a topic
    # without an offsets znode (where the original exits).
    for extra in ([], ["--topic", "abc-x.y", "--broker-info"], ["--topic", "abc-x.y,de-x.y"]):
        original = run_tool(broker.home, checker, "--zookeeper", zk_connect, "--group", "tools",
                            *extra).stdout
        assert ours("groups", "describe", "--zk", zk_connect, "--group", "tools",
                    *extra) == original
        outputs.append(original)
    assert outputs[2].startswith("Exiting due to: ") and "/consumers/tools/offsets/de-x.y" in \
        outputs[2]
    assert outputs[1].splitlines()[-2:] == ["BROKER INFO", f"0 -> {broker.bootstrap}"]
    original = outputs[0]
    assert original.splitlines()[0] == (
        "Group           Topic                          Pid Offset          logSize         "
        "Lag             Owner")
    rows = [line.split() for line in original.splitlines()[1:]]
    assert [r[1:3] for r in rows] == [["ABC-x.y", "0"], ["ABC-x.y", "1"]] + [
        ["abc-x.y", str(p)] for p in range(4)]  # sorted by topic, then partition
    assert rows[2] == ["tools", "abc-x.y", "0", "2", "2", "0", "tools_c-0"]
    assert rows[3][3:] == ["-1", "2", "unknown", "none"]

    for groups in ([], ["--group", long_group, "--group", "tools"]):
        theirs, mine = tmp_path / "theirs.txt", tmp_path / "mine.txt"
        run_tool(broker.home, "kafka.tools.ExportZkOffsets", "--zkconnect", zk_connect,
                 "--output-file", str(theirs), *groups)
        ours("offsets", "export", "--zk", zk_connect, "--output", str(mine), *groups)
        assert mine.read_text() == theirs.read_text()
    assert theirs.read_text().splitlines()[0] == f"/consumers/{long_group}/offsets/abc-x.y/3:5"
