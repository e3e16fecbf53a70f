"""The command line as a user runs it: real processes, real servers."""

from __future__ import annotations

import json

import pytest

from zkconsumer.cli.main import main


def test_help_lists_the_verbs(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for verb in ("zk", "broker", "topics", "produce", "demo"):
        assert verb in out


def test_topics_create_describe_and_produce(zk_connect, broker, unique, capsys):
    topic = unique("cli")
    assert main(["topics", "create", "--zk", zk_connect, "--topic", topic,
                 "--partitions", "3"]) == 0
    assert main(["topics", "list", "--zk", zk_connect]) == 0
    assert topic in capsys.readouterr().out.split()
    assert main(["topics", "describe", "--zk", zk_connect, "--topic", topic, "--json"]) == 0
    described = json.loads(capsys.readouterr().out)
    assert [p["partition"] for p in described["partitions"]] == [0, 1, 2]
    assert main(["produce", "--zk", zk_connect, "--topic", topic, "--count", "50",
                 "--keys"]) == 0
    assert "produced 50 messages" in capsys.readouterr().out


def test_bad_topic_name_is_an_error_naming_it(zk_connect, broker, capsys):
    assert main(["topics", "create", "--zk", zk_connect, "--topic", "../etc",
                 "--partitions", "1"]) == 2
    assert "'../etc'" in capsys.readouterr().err


def test_unreachable_zookeeper_names_the_connect_string(capsys):
    assert main(["topics", "list", "--zk", "127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert "127.0.0.1:1" in err and "ZooKeeper" in err
