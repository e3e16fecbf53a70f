"""The console consumer on a real group: exact counts, commits what it printed, resumes after."""

from __future__ import annotations

import json
import subprocess
import sys

from zkconsumer.admin import produce

FAST = ["--property", "rebalance.backoff.ms=500", "--property", "zookeeper.session.timeout.ms=6000"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zkconsumer", *args], capture_output=True,
                          text=True, timeout=120)


def test_max_messages_prints_exactly_n_and_the_next_run_resumes(zk_connect, broker, new_topic,
                                                                 unique):
    topic, group = new_topic(3), unique("console")
    values = [f"m{i}" for i in range(30)]
    produce(broker.bootstrap, topic, values)
    first = cli("consume", "--zk", zk_connect, "--group", group, "--topic", topic,
                "--threads", "2", "--from-beginning", "--max-messages", "20",
                "--print", "partition,offset,value", *FAST)
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert len(lines) == 20
    assert all(len(line.split("\t")) == 3 for line in lines)
    assert "consumed 20 messages" in first.stderr

    second = cli("consume", "--zk", zk_connect, "--group", group, "--topic", topic,
                 "--timeout-ms", "3000", *FAST)
    assert second.returncode == 0, second.stderr
    seen = [line.split("\t")[2] for line in lines] + second.stdout.splitlines()
    assert sorted(seen) == sorted(values), "every message exactly once across the two runs"

    desc = json.loads(cli("groups", "describe", "--zk", zk_connect, "--group", group,
                          "--json").stdout)
    assert sum(r["offset"] for r in desc["partitions"]) == 30
    assert all(r["lag"] == 0 for r in desc["partitions"])
    assert desc["consumers"] == [], "the console consumer left the group on exit"
    assert group in cli("groups", "list", "--zk", zk_connect).stdout.split()


def test_unknown_print_field_is_a_usage_error_naming_it(zk_connect):
    out = cli("consume", "--zk", zk_connect, "--group", "g", "--topic", "t", "--print", "colour")
    assert out.returncode != 0 and "--print" in out.stderr and "colour" in out.stderr
