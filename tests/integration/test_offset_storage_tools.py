"""The operator tools follow ``offsets.storage``: describe, export/import and migrate-offsets
read and write the broker's copy of a group's offsets (embedded ZooKeeper and broker)."""

from __future__ import annotations

import json

import pytest
from kazoo.client import KazooClient

from zkconsumer.admin.kafka_group import commit_broker_offsets, fetch_broker_offsets
from zkconsumer.cli.main import main
from zkconsumer.zk import codec, paths


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _zk_offsets(client: KazooClient, group: str, topic: str, offsets: dict[int, int]) -> None:
    for p, o in offsets.items():
        client.create(paths.offset(group, topic, p), codec.encode_offset(o), makepath=True)


@pytest.fixture
def member(zk_connect):
    client = KazooClient(hosts=zk_connect)
    client.start(timeout=15)
    yield client
    client.stop()
    client.close()


def test_migrate_offsets_refuses_live_members_then_copies_both_ways(
        zk_connect, broker, new_topic, unique, kazoo_client, member, capsys):
    topic, group = new_topic(2), unique("tg")
    _zk_offsets(kazoo_client, group, topic, {0: 5, 1: 7})
    cid = f"{group}_host-1"
    member.create(paths.consumer_registration(group, cid),
                  codec.encode_registration(codec.ConsumerRegistration(((topic, 1),))),
                  ephemeral=True, makepath=True)
    code, out, err = run(capsys, "groups", "migrate-offsets", "--zk", zk_connect,
                         "--group", group)
    assert code == 2 and out == ""
    assert (f"refusing to copy offsets to kafka for group {group!r} while 1 member(s) are "
            f"registered: {cid}; stop them first or use --force") in err
    assert fetch_broker_offsets(broker.bootstrap, group, [(topic, 0), (topic, 1)]) == {
        (topic, 0): None, (topic, 1): None}
    member.delete(paths.consumer_registration(group, cid))
    code, out, _ = run(capsys, "groups", "migrate-offsets", "--zk", zk_connect, "--group", group)
    assert code == 0
    assert out.splitlines() == [f"{topic} 0 5", f"{topic} 1 7",
                                f"copied 2 offset(s) of group {group} from ZooKeeper to the "
                                "broker"]
    assert fetch_broker_offsets(broker.bootstrap, group, [(topic, 0), (topic, 1)]) == {
        (topic, 0): 5, (topic, 1): 7}
    # The group moves on in the broker; copying back brings ZooKeeper up to it.
    commit_broker_offsets(broker.bootstrap, group, {(topic, 0): 9})
    code, out, _ = run(capsys, "groups", "migrate-offsets", "--zk", zk_connect, "--group", group,
                       "--to", "zookeeper", "--json")
    assert code == 0
    assert json.loads(out)["offsets"] == [{"topic": topic, "partition": 0, "offset": 9},
                                          {"topic": topic, "partition": 1, "offset": 7}]
    assert [codec.decode_offset("x", kazoo_client.get(paths.offset(group, topic, p))[0])
            for p in (0, 1)] == [9, 7]


def test_describe_export_and_import_read_and_write_the_brokers_offsets(
        zk_connect, broker, new_topic, unique, kazoo_client, capsys, tmp_path):
    topic, group, other = new_topic(2), unique("tg"), unique("tg")
    _zk_offsets(kazoo_client, group, topic, {0: 3, 1: 4})
    commit_broker_offsets(broker.bootstrap, group, {(topic, 0): 8})  # partition 1: none there
    code, out, _ = run(capsys, "groups", "describe", "--zk", zk_connect, "--group", group,
                       "--json")
    assert [r["offset"] for r in json.loads(out)["partitions"]] == [3, 4]
    code, out, _ = run(capsys, "groups", "describe", "--zk", zk_connect, "--group", group,
                       "--json", "--offsets-storage", "kafka")
    assert code == 0
    # The original checker's reading: the broker's offset, ZooKeeper's where it has none.
    assert [r["offset"] for r in json.loads(out)["partitions"]] == [8, 4]
    code, out, _ = run(capsys, "groups", "describe", "--zk", zk_connect, "--group", group,
                       "--topic", topic, "--offsets-storage", "kafka")
    assert code == 0
    assert [line.split()[2:4] for line in out.splitlines()[1:]] == [["0", "8"], ["1", "4"]]
    code, out, _ = run(capsys, "offsets", "export", "--zk", zk_connect, "--group", group,
                       "--output", "-", "--offsets-storage", "kafka")
    assert out.splitlines() == [f"/consumers/{group}/offsets/{topic}/0:8"]
    exported = tmp_path / "other.offsets"
    exported.write_text(f"/consumers/{other}/offsets/{topic}/0:8\n"
                        f"/consumers/{other}/offsets/{topic}/1:2\n")
    code, out, _ = run(capsys, "offsets", "import", "--zk", zk_connect, "--input",
                       str(exported), "--offsets-storage", "kafka")
    assert (code, out.strip()) == (0, "imported 2 offsets")
    assert fetch_broker_offsets(broker.bootstrap, other, [(topic, 0), (topic, 1)]) == {
        (topic, 0): 8, (topic, 1): 2}
    assert kazoo_client.exists(paths.offsets(other)) is None
