"""The command line as a user runs it: real processes, real servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from zkconsumer.cli.main import main


def run_cli(*args: str, timeout: float = 120, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zkconsumer", *args], capture_output=True,
                          text=True, timeout=timeout, env=env)


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


def test_demo_tells_its_story_quietly_and_writes_one_report(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("ZKCONSUMER_ZK", "ZKCONSUMER_BOOTSTRAP")}
    env["ZKCONSUMER_TEST_TAG"] = tag = uuid.uuid4().hex  # inherited by every server it starts
    out = tmp_path / "demo-out"
    result = run_cli("demo", "--messages", "200", "--out", str(out), env=env, timeout=400)
    assert result.returncode == 0, result.stderr + result.stdout[-3000:]
    assert "/brokers" in result.stdout and "(ephemeral)" in result.stdout
    assert '"leader":0' in result.stdout
    assert "consumed 200 of 200 messages" in result.stdout
    assert "Rebalance operation successful !" in result.stdout
    sections = [line[3:].split(" =")[0] for line in result.stdout.splitlines()
                if line.startswith("== ")]
    assert sections == ["servers", "topic demo-orders", "znodes a legacy consumer reads",
                        "a ZooKeeper-coordinated group consumes it",
                        "herd effect: every member rebalances on one join",
                        "split brain: a zombie keeps fetching partitions it no longer owns",
                        "the alternatives: one join and one crash, four protocols", "done"]
    compare_rows = {tuple(c.strip() for c in line.split("|")[1:3])
                    for line in result.stdout.splitlines() if line.startswith("| ")}
    for protocol in ("zk-range", "zk-leader-range", "eager-range", "cooperative-sticky"):
        assert (protocol, "join") in compare_rows and (protocol, "crash") in compare_rows
    # Each warning once on the console; every copy in the demo's log file.
    console = [line for line in (result.stdout + result.stderr).splitlines()
               if line.startswith(("WARNING", "ERROR"))]
    assert len(console) == len(set(console)), console
    assert "No broker partitions consumed" in (out / "demo.log").read_text()
    report = out / "report.html"
    assert result.stdout.rstrip().endswith(f"report: {report}")
    page = report.read_text()
    for folder in ("herd", "zombie", "compare"):
        assert f": {folder}</h2>" in page, folder
    assert (out / "compare" / "meta.json").is_file()
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "").replace(
        'xmlns:xlink="http://www.w3.org/1999/xlink"', "")
    assert _servers_tagged(tag) == set(), "the demo left a server process running"


def _servers_tagged(tag: str) -> set[int]:
    """ZooKeeper or Tansu processes whose environment carries ``tag``: started by the command
    under test and nobody else, whatever else runs on the machine."""
    found = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue
        if (b"ZooKeeperServerMain" in cmdline or b"tansu" in cmdline) \
                and f"ZKCONSUMER_TEST_TAG={tag}".encode() in environ:
            found.add(int(proc.name))
    return found
