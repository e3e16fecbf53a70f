"""A mixed chaos group: original 0.10.2 members (JVMs) beside zkconsumer members, on the 0.10.2
broker, through the same seeded chaos (fixed seed): nothing lost, one live owner per partition at
every settle, every duplicate tied to a cause, for both kinds of member.

Seed 6 kills an original member, lets one leave (by its lifetime, the driver's only clean
leave), starts two, expires the session of one, expires a zkconsumer member's, pauses one, and
kills the ZooKeeper leader twice.
"""

from __future__ import annotations

import argparse
import json

from zkconsumer.cli import experiment

SEED = 6


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="zkconsumer")
    experiment.register(parser.add_subparsers(dest="verb"))
    args = parser.parse_args(argv)
    return int(args.func(args))


def test_a_mixed_group_loses_nothing_and_ties_every_duplicate_to_a_cause(tmp_path, kafka_build):
    home = kafka_build("0.10.2", member_driver=True)
    out = tmp_path / "chaos.json"
    run = tmp_path / "run"
    code = main(["experiment", "chaos", "--duration", "45", "--members", "4",
                 "--original-members", "2", "--partitions", "8", "--seed", str(SEED),
                 "--broker", f"kafka:{home}", "--out", str(run), "--json", str(out)])
    report = json.loads(out.read_text())

    # both kinds took part: the schedule's originals were started as JVMs, on the 0.10.2 broker
    assert report["broker"] == "apache-kafka-0.10.2.2"
    kinds = report["member_kinds"]
    assert sorted(kinds) == [f"m{i:02d}" for i in range(8)]
    assert [kinds[m] for m in ("m01", "m03", "m05", "m07")] == ["original"] * 4
    assert [kinds[m] for m in ("m00", "m02", "m04", "m06")] == ["zkconsumer"] * 4
    assert report["actions_executed"] == report["actions"], report["action_errors"]
    assert report["zk_leaders_killed"]

    # nothing acknowledged was lost; the group settled and verified, and left nothing behind
    assert report["produced"] > 300
    assert report["lost"] == 0, report["lost_sample"]
    assert report["consumed_unique"] == report["produced"]
    assert report["settled"] and report["drained"]
    assert report["verify_ok"], report["verify_violations"]
    assert report["stray_znodes"] == 0, report["stray_paths"]
    assert not [e for e in report["member_errors"] if "exited on its own" in e], \
        report["member_errors"]

    # the settle the run waited for after the chaos is the watch's last, one live owner per
    # partition with both kinds owning; every settle seen during the chaos (no fault open) had
    # one live owner per partition too, unless a member was still inside a rebalance (how many
    # there are depends on how fast the JVMs start between the actions)
    settles = [json.loads(line) for line in (run / "settles.jsonl").read_text().splitlines()]
    final = settles[-1]
    assert final["after_chaos"] and final["good"], final
    assert [s["after_chaos"] for s in settles].count(True) == 1
    owning = {o.rsplit("_", 1)[-1].split("-")[0] for o in final["owners"].values()}
    assert {kinds[m] for m in owning} == {"original", "zkconsumer"}, owning
    assert len(settles) - 1 == report["settles"]
    assert all(len(s["owners"]) == 8 for s in settles)
    check = json.loads((run / "settles.json").read_text())
    assert check["settles"] == report["settles"]
    assert check["good"] == report["settles_one_live_owner"]
    assert check["other"] == 0, check["not_good"]
    assert all(s["inside_rebalance"] for s in check["not_good"])

    # each kind delivered records, and every duplicate of either kind has a cause
    causes = json.loads((run / "duplicate-causes.json").read_text())
    assert causes["by_cause"]["unexplained"] == 0, causes["by_cause"]
    assert sum(causes["by_cause"].values()) == causes["duplicates"] == report["duplicates"]
    by_kind = causes["by_kind"]
    assert set(by_kind) == {"original", "zkconsumer"}
    assert all(by_kind[k]["deliveries"] > 0 for k in by_kind), by_kind
    assert sum(by_kind[k]["duplicates"] for k in by_kind) == causes["duplicates"]
    assert json.loads((run / "meta.json").read_text())["broker"] == "apache-kafka-0.10.2.2"
    assert code == 0 and report["ok"]
