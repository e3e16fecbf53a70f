"""Apache Kafka brokers from a Kafka directory: they register themselves, their controller writes
the topic znodes, and a zkconsumer group consumes from them. Run for Kafka 0.10.2 and 2.4.1
(``kafka_build``: beside this checkout as in CI, or ZKCONSUMER_KAFKA_HOME)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from connector_helpers import (
    StreamDrain,
    fast_config,
    kazoo_for,
    owners,
    wait_until,
)
from kazoo.client import KazooClient

from zkconsumer import ZookeeperConsumerConnector
from zkconsumer.admin import create_topic, produce
from zkconsumer.admin.kafka_group import (
    BrokerOffsetsError,
    commit_broker_offsets,
    fetch_broker_offsets,
)
from zkconsumer.lab.api_versions import JOIN_GROUP, broker_api_versions
from zkconsumer.lab.probe import requestable_refusal
from zkconsumer.testing import EmbeddedZooKeeper, KafkaBroker
from zkconsumer.testing.original import run_tool
from zkconsumer.testing.servers import broker_from_env
from zkconsumer.zk import paths

VERSIONS = {"0.10.2": "0.10.2.2", "2.4.1": "2.4.1"}
# JoinGroup versions each build announces: group.instance.id needs v5 (KIP-345, Kafka 2.3).
JOIN_GROUP_RANGE = {"0.10.2": (0, 1), "2.4.1": (0, 6)}


@pytest.fixture(scope="module", params=sorted(VERSIONS))
def kafka(request: pytest.FixtureRequest, kafka_build) -> Iterator[tuple[str, KafkaBroker]]:
    """Each version on a ZooKeeper of its own: its controller owns /brokers there."""
    home = kafka_build(request.param)
    with EmbeddedZooKeeper() as zk, KafkaBroker(zk.connect_string, home) as b:
        yield zk.connect_string, b


@pytest.fixture
def build(request: pytest.FixtureRequest) -> str:
    """The build (``0.10.2``, ``2.4.1``) the ``kafka`` broker of this test came from."""
    return request.node.callspec.params["kafka"]  # type: ignore[no-any-return]


@pytest.fixture
def zk(kafka: tuple[str, KafkaBroker]) -> Iterator[KazooClient]:
    with kazoo_for(kafka[0]) as client:
        yield client


def test_the_broker_registers_itself_and_names_its_version(kafka, build, zk):
    _, broker = kafka
    assert broker.name == f"apache-kafka-{VERSIONS[build]}"
    data, stat = zk.get(paths.broker(0))
    reg = json.loads(data)
    assert reg["endpoints"] == [f"PLAINTEXT://{broker.bootstrap}"]
    assert (reg["host"], reg["port"]) == ("127.0.0.1", broker.port)
    assert stat.ephemeralOwner != 0
    assert json.loads(zk.get("/controller")[0])["brokerid"] == 0


def test_topics_come_from_the_brokers_own_controller(kafka, zk, unique):
    zk_connect, broker = kafka
    topic = unique("kt")
    info = create_topic(zk_connect, topic, 3, bootstrap=broker.bootstrap)
    assert [(p.partition, p.leader, p.isr) for p in info.partitions] == [
        (0, 0, (0,)), (1, 0, (0,)), (2, 0, (0,))]
    # The harness writes none of these: the epoch in every state is the one only a Kafka
    # controller knows, and 2.4's controller writes the reassignment fields of KIP-455.
    epoch = int(zk.get("/controller_epoch")[0])
    for p in range(3):
        state = json.loads(zk.get(paths.partition_state(topic, p))[0])
        assert state["controller_epoch"] == epoch
    assignment = json.loads(zk.get(paths.topic(topic))[0])
    if broker.version == "2.4.1":
        assert assignment["adding_replicas"] == {} and assignment["removing_replicas"] == {}
    assert assignment["partitions"] == {"0": [0], "1": [0], "2": [0]}


def test_a_zkconsumer_group_consumes_everything_from_it(kafka, zk, unique):
    zk_connect, broker = kafka
    topic, group = unique("kt"), unique("kg")
    create_topic(zk_connect, topic, 2, bootstrap=broker.bootstrap)
    values = {p: [f"{p}-{i}".encode() for i in range(20)] for p in range(2)}
    for p, vals in values.items():
        produce(broker.bootstrap, topic, vals, partition=p)
    with ZookeeperConsumerConnector(fast_config(zk_connect, group, consumer_id="c1")) as conn:
        drain = StreamDrain(conn.create_message_streams({topic: 1})[topic])
        want = {v for vals in values.values() for v in vals}
        wait_until(lambda: drain.values() >= want, 60, "all 40 messages from Apache Kafka")
        drain.stop()
        assert owners(zk, group, topic) == {0: f"{group}_c1-0", 1: f"{group}_c1-0"}
        assert sorted(m.offset for m in drain.messages if m.partition == 1) == list(range(20))


def test_kafka_storage_commits_as_a_non_member_fenced_while_the_group_has_members(kafka, unique):
    """What a commit with ``offsets.storage=kafka`` is on the wire, shown by the coordinator of
    both versions (GroupCoordinator.doCommitOffsets): a commit with no member id is stored only
    while its generation is negative and the group empty, else UNKNOWN_MEMBER_ID."""
    from confluent_kafka import Consumer

    zk_connect, broker = kafka
    topic, group = unique("kt"), unique("kg")
    create_topic(zk_connect, topic, 2, bootstrap=broker.bootstrap)
    commit_broker_offsets(broker.bootstrap, group, {(topic, 0): 4})
    member = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group,
                       "session.timeout.ms": 6000, "log_level": 0})
    assigned: list[object] = []
    member.subscribe([topic], on_assign=lambda _c, parts: assigned.extend(parts))
    try:
        wait_until(lambda: member.poll(0.2) is None and bool(assigned), 60, "an assignment")
        with pytest.raises(BrokerOffsetsError, match="UNKNOWN_MEMBER_ID") as err:
            commit_broker_offsets(broker.bootstrap, group, {(topic, 0): 9})
        assert "the group has live broker-coordinated members" in str(err.value)
    finally:
        member.close()
    # Empty again after generations > 0: a commit with generation >= 0 and no member would be
    # UNKNOWN_MEMBER_ID now too, so its acceptance shows the generation sent is -1.
    commit_broker_offsets(broker.bootstrap, group, {(topic, 0): 9, (topic, 1): 1})
    assert fetch_broker_offsets(broker.bootstrap, group, [(topic, 0), (topic, 1)]) == {
        (topic, 0): 9, (topic, 1): 1}


def test_the_original_offset_checker_reads_what_kafka_storage_committed(kafka, zk, unique,
                                                                        kafka_build):
    zk_connect, broker = kafka
    topic, group = unique("kt"), unique("kg")
    create_topic(zk_connect, topic, 2, bootstrap=broker.bootstrap)
    for p in range(2):
        produce(broker.bootstrap, topic, [b"v"] * (5 + 3 * p), partition=p)
    cfg = fast_config(zk_connect, group, offsets_storage="kafka", dual_commit_enabled="false")
    with ZookeeperConsumerConnector(cfg) as conn:
        drain = StreamDrain(conn.create_message_streams({topic: 1})[topic])
        wait_until(lambda: drain.count() >= 13, 60, "13 messages")
        drain.stop()
    assert not zk.exists(paths.offsets(group))  # nothing in ZooKeeper: only Kafka has them
    checker = run_tool(kafka_build("0.10.2"), "kafka.tools.ConsumerOffsetChecker",
                       "--zookeeper", zk_connect, "--group", group, "--topic", topic, check=False)
    rows = [line.split() for line in checker.stdout.splitlines() if line.startswith(group)]
    assert [(r[2], r[3]) for r in rows] == [("0", "5"), ("1", "8")], checker.stdout


def test_broker_spec_kafka_dir_starts_apache_kafka(kafka_build):
    # The spec the tools and the lab take (ZKCONSUMER_BOOTSTRAP=kafka:DIR).
    home = kafka_build("0.10.2")
    with EmbeddedZooKeeper() as other, broker_from_env(other.connect_string,
                                                       f"kafka:{home}") as broker:
        assert isinstance(broker, KafkaBroker) and broker.name == "apache-kafka-0.10.2.2"


def test_its_joingroup_versions_decide_whether_static_membership_can_be_requested(kafka,
                                                                                   build):
    _, broker = kafka
    short = build
    assert broker_api_versions(broker.bootstrap)[JOIN_GROUP] == JOIN_GROUP_RANGE[short]
    refusal = requestable_refusal(broker.name, broker.bootstrap)
    if short == "0.10.2":
        assert refusal is not None and refusal.startswith(
            "apache-kafka-0.10.2.2 cannot be asked for static membership: its JoinGroup goes "
            "up to v1")
    else:  # 2.4.1 takes group.instance.id; whether it honours it is the bounces' verdict
        assert refusal is None
