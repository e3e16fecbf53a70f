"""Operator verbs driven as a user would, on a group whose znodes a member wrote for real.

The member here is a kazoo session writing exactly what a legacy consumer writes (an ephemeral
registration, ephemeral owner znodes, persistent offsets), so each tool is checked against known
ground truth; the connector's own tests cover the same tools on a group it formed itself.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from kazoo.client import KazooClient

from zkconsumer.admin import produce
from zkconsumer.zk import codec, paths


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zkconsumer", *args], capture_output=True,
                          text=True, timeout=120, input=stdin)


@pytest.fixture
def member(zk_connect):
    """A separate session acting as one group member; closing it is the member's death."""
    client = KazooClient(hosts=zk_connect)
    client.start(timeout=15)
    yield client
    client.stop()
    client.close()


def register(client: KazooClient, group: str, cid: str, topic: str, streams: int) -> None:
    reg = codec.ConsumerRegistration(((topic, streams),))
    client.create(paths.consumer_registration(group, cid), codec.encode_registration(reg),
                  ephemeral=True, makepath=True)


def own(client: KazooClient, group: str, topic: str, p: int, thread: str) -> None:
    client.create(paths.owner(group, topic, p), codec.encode_owner(thread), ephemeral=True,
                  makepath=True)


def commit(client: KazooClient, group: str, topic: str, p: int, offset: int) -> None:
    path = paths.offset(group, topic, p)
    if client.exists(path):
        client.set(path, codec.encode_offset(offset))
    else:
        client.create(path, codec.encode_offset(offset), makepath=True)


def test_describe_shows_offsets_log_end_lag_and_owner(zk_connect, broker, new_topic, unique,
                                                      member):
    topic, group = new_topic(2), unique("g")
    produce(broker.bootstrap, topic, [b"x"] * 10, partition=0)
    produce(broker.bootstrap, topic, [b"y"] * 4, partition=1)
    register(member, group, f"{group}_c1", topic, 1)
    own(member, group, topic, 0, f"{group}_c1-0")
    commit(member, group, topic, 0, 7)
    out = cli("groups", "describe", "--zk", zk_connect, "--group", group, "--json")
    assert out.returncode == 0, out.stderr
    desc = json.loads(out.stdout)
    rows = {r["partition"]: r for r in desc["partitions"]}
    assert rows[0] == {"topic": topic, "partition": 0, "offset": 7, "log_end": 10, "lag": 3,
                       "owner": f"{group}_c1-0"}
    assert rows[1]["offset"] is None and rows[1]["owner"] is None and rows[1]["log_end"] == 4
    assert desc["consumers"][0]["id"] == f"{group}_c1"
    assert desc["consumers"][0]["subscription"] == {topic: 1}

    produce(broker.bootstrap, topic, [b"z"] * 5, partition=0)
    text = cli("groups", "describe", "--zk", zk_connect, "--group", group)
    line = next(x for x in text.stdout.splitlines() if x.split()[1:3] == [topic, "0"])
    assert line.split()[3:6] == ["7", "15", "8"], "lag grows with the log"


def test_verify_names_each_violation_and_passes_once_repaired(zk_connect, new_topic, unique,
                                                              member):
    topic, group = new_topic(3), unique("g")
    register(member, group, f"{group}_c1", topic, 2)
    own(member, group, topic, 0, f"{group}_c1-0")
    own(member, group, topic, 1, f"{group}_c1-1")
    own(member, group, topic, 2, f"{group}_ghost-0")
    out = cli("groups", "verify", "--zk", zk_connect, "--group", group, "--json")
    assert out.returncode == 1
    assert json.loads(out.stdout) == {"ok": False, "violations": [
        {"topic": topic, "partition": 2, "kind": "owner-not-registered",
         "owner": f"{group}_ghost-0"}]}
    member.delete(paths.owner(group, topic, 2))
    out = cli("groups", "verify", "--zk", zk_connect, "--group", group)
    assert out.returncode == 1 and f"unowned: [{topic},2]" in out.stdout
    own(member, group, topic, 2, f"{group}_c1-0")
    out = cli("groups", "verify", "--zk", zk_connect, "--group", group)
    assert out.returncode == 0, out.stdout
    assert "Rebalance operation successful" in out.stdout


def test_export_reset_import_round_trips_offsets(zk_connect, broker, new_topic, unique,
                                                 member, tmp_path):
    topic, group = new_topic(2), unique("g")
    produce(broker.bootstrap, topic, [b"a"] * 6, partition=0)
    produce(broker.bootstrap, topic, [b"b"] * 3, partition=1)
    commit(member, group, topic, 0, 5)
    commit(member, group, topic, 1, 2)
    exported = tmp_path / "offsets.txt"
    assert cli("offsets", "export", "--zk", zk_connect, "--group", group,
               "--output", str(exported)).returncode == 0
    assert exported.read_text().splitlines() == [
        f"/consumers/{group}/offsets/{topic}/0:5", f"/consumers/{group}/offsets/{topic}/1:2"]

    out = cli("offsets", "reset", "--zk", zk_connect, "--group", group, "--topic", topic,
              "--to", "largest")
    assert out.returncode == 0, out.stderr
    assert member.get(paths.offset(group, topic, 0))[0] == b"6"
    assert member.get(paths.offset(group, topic, 1))[0] == b"3"
    assert cli("offsets", "reset", "--zk", zk_connect, "--group", group, "--topic", topic,
               "--to", "smallest").returncode == 0
    assert member.get(paths.offset(group, topic, 0))[0] == b"0"

    assert cli("offsets", "import", "--zk", zk_connect, "--input",
               str(exported)).returncode == 0
    assert member.get(paths.offset(group, topic, 0))[0] == b"5"
    assert member.get(paths.offset(group, topic, 1))[0] == b"2"


def test_writes_are_refused_while_the_group_has_members(zk_connect, new_topic, unique, member):
    topic, group = new_topic(1), unique("g")
    register(member, group, f"{group}_c1", topic, 1)
    commit(member, group, topic, 0, 4)
    out = cli("offsets", "reset", "--zk", zk_connect, "--group", group, "--topic", topic,
              "--to", "0")
    assert out.returncode == 2 and "--force" in out.stderr and f"{group}_c1" in out.stderr
    assert member.get(paths.offset(group, topic, 0))[0] == b"4", "nothing was written"
    out = cli("groups", "delete", "--zk", zk_connect, "--group", group)
    assert out.returncode == 2 and member.exists(paths.group(group))
    assert cli("offsets", "reset", "--zk", zk_connect, "--group", group, "--topic", topic,
               "--to", "1", "--force").returncode == 0
    assert member.get(paths.offset(group, topic, 0))[0] == b"1"


def test_delete_removes_an_idle_group(zk_connect, new_topic, unique, member):
    topic, group = new_topic(1), unique("g")
    commit(member, group, topic, 0, 4)
    assert cli("groups", "delete", "--zk", zk_connect, "--group", group).returncode == 0
    assert member.exists(paths.group(group)) is None


def test_import_rejects_a_line_that_escapes_the_offsets_tree(zk_connect, tmp_path, member):
    bad = tmp_path / "bad.txt"
    bad.write_text("/brokers/ids/0:5\n")
    out = cli("offsets", "import", "--zk", zk_connect, "--input", str(bad))
    assert out.returncode == 2 and "line 1" in out.stderr and "/brokers/ids/0" in out.stderr
    evil = tmp_path / "evil.txt"
    evil.write_text("/consumers/../offsets/t/0:5\n")
    assert cli("offsets", "import", "--zk", zk_connect, "--input", str(evil)).returncode == 2


@pytest.mark.parametrize("argv, needle", [
    (["offsets", "reset", "--zk", "x", "--group", "g", "--topic", "t"], "--to"),
    (["groups", "describe", "--zk", "x"], "--group"),
    (["offsets", "export", "--group", "g", "--output", "f"], "--zk"),
])
def test_bad_arguments_are_usage_errors_naming_the_argument(argv, needle):
    out = cli(*argv)
    assert out.returncode == 2 and needle in out.stderr and "usage:" in out.stderr


def test_reset_to_a_bad_value_names_it(zk_connect, new_topic, unique):
    topic, group = new_topic(1), unique("g")
    out = cli("offsets", "reset", "--zk", zk_connect, "--group", group, "--topic", topic,
              "--to", "yesterday")
    assert out.returncode == 2 and "'yesterday'" in out.stderr
