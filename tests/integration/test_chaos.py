"""The 30-second chaos soak (fixed seed): nothing lost, a verified group, no znodes left behind.

Joins, clean leaves, SIGKILLs, session expiries and pauses (through each member's own fault
proxies) and a ZooKeeper leader kill on a 3-server ensemble, while a producer writes numbered
records. The run starts its own ensemble and broker: leader kills must not hit the servers the
other tests share. The 120-second version is ``benchmarks/chaos.py``.
"""

from __future__ import annotations

import argparse
import json
import re
import time

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError

from zkconsumer import __version__
from zkconsumer.cli import experiment
from zkconsumer.lab.chaos import ACTION_KINDS
from zkconsumer.lab.chaos.broker_keeper import BrokerRegistrationKeeper
from zkconsumer.zk import paths

SEED = 7


def main(argv: list[str]) -> int:
    """The ``experiment`` verb as ``zkconsumer`` builds it, without the other verbs."""
    parser = argparse.ArgumentParser(prog="zkconsumer")
    experiment.register(parser.add_subparsers(dest="verb"))
    args = parser.parse_args(argv)
    return int(args.func(args))


def test_chaos_soak_loses_nothing_and_leaves_a_clean_group(tmp_path, capsys):
    out = tmp_path / "chaos.json"
    run = ["experiment", "chaos", "--duration", "30", "--members", "4", "--partitions", "8",
           "--seed", str(SEED)]
    assert main([*run, "--schedule"]) == 0
    steps = len(capsys.readouterr().out.splitlines())
    code = main([*run, "--out", str(tmp_path / "run"), "--json", str(out)])
    report = json.loads(out.read_text())
    captured = capsys.readouterr()
    printed = captured.out.splitlines()
    # off a terminal, the progress of the schedule is one plain line per step, with its ETA
    done = [line for line in captured.err.splitlines() if f"/{steps} " in line and " eta " in line]
    assert [line.split("/")[0] for line in done] == [str(i) for i in range(1, steps + 1)], done
    # the printed summary states the report's figures, one "name value" line each
    for key in ("produced", "lost", "duplicates", "verify_ok", "stray_znodes"):
        assert f"{key:<18} {report[key]}" in printed, (key, printed)

    # every kind of action happened, as the seed scheduled it
    kinds = {k.value for k in ACTION_KINDS}
    assert set(report["actions_executed"]) == kinds
    assert all(report["actions_executed"][k] >= 1 for k in kinds), report["actions_executed"]
    assert report["actions_executed"] == report["actions"], report["action_errors"]
    assert report["zk_leaders_killed"], "a ZooKeeper leader was killed"
    assert report["zk_servers_serving"] == 3, "every killed server was restarted and serves"

    # every acknowledged record reached some member's file; duplicates are counted, not lost
    assert report["produced"] > 500
    assert report["lost"] == 0, report["lost_sample"]
    assert report["consumed_unique"] == report["produced"]
    assert report["drained"]
    assert report["rebalances"] >= 4  # joins, leaves, kills and expiries each force one

    # after every member left cleanly, no owner or registration znode remains
    assert report["stray_znodes"] == 0, report["stray_paths"]
    assert not [e for e in report["member_errors"] if "exited on its own" in e
                or "did not leave" in e], report["member_errors"]

    # the group settled and the operator's verify tool passes on it
    assert report["settled"], (report["phases_s"], report["verify_violations"])
    assert report["verify_ok"], report["verify_violations"]
    assert code == 0 and report["ok"]

    # every duplicate is tied to a cause, and the run's provenance sits beside its figures
    run = tmp_path / "run"
    causes = json.loads((run / "duplicate-causes.json").read_text())
    assert causes["by_cause"]["unexplained"] == 0, causes["by_cause"]
    assert sum(causes["by_cause"].values()) == causes["duplicates"] == report["duplicates"]
    meta = json.loads((run / "meta.json").read_text())
    assert f"--seed {SEED}" in meta["command"] and meta["broker"] == "tansu-0.6.0"
    versions = meta["extra"]["versions"]
    assert versions["zkconsumer"] == __version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", versions["zookeeper"]), versions


def register_spare_broker(client: KazooClient, data: bytes) -> int:
    """Register a broker under the first free id of 950-999 (test_fetcher.py takes 900-949):
    the create claims the id, so two test processes never share one."""
    for broker_id in range(950, 1000):
        try:
            client.create(paths.broker(broker_id), data, ephemeral=True, makepath=True)
        except NodeExistsError:
            continue
        return broker_id
    raise AssertionError("broker ids 950-999 are all registered")


def test_broker_registration_is_written_again_when_its_session_ends(zk_connect, kazoo_client):
    """A broker whose session expired comes back for the members (as Kafka's re-registered)."""
    broker_session = KazooClient(hosts=zk_connect)
    broker_session.start(timeout=15)
    broker_id = register_spare_broker(broker_session, b'{"version":3}')
    path = paths.broker(broker_id)
    keeper = BrokerRegistrationKeeper(kazoo_client, broker_id).start()
    try:
        broker_session.stop()  # the session ends: its ephemeral registration goes
        broker_session.close()
        deadline = time.monotonic() + 15
        while keeper.recreated == 0 or kazoo_client.exists(path) is None:
            assert time.monotonic() < deadline, "the registration was not written again"
            time.sleep(0.05)
        assert kazoo_client.get(path)[0] == b'{"version":3}'
        assert keeper.recreated == 1
    finally:
        keeper.stop()
        kazoo_client.delete(path)
