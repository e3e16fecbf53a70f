"""``experiment formation`` on the original: two original 0.10.2 members (JVMs) started together
under ``rebalance.max.retries`` = 4 form a group, ride out the storm and leave it verified."""

from __future__ import annotations

import argparse
import json

from zkconsumer.cli import experiment


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="zkconsumer")
    experiment.register(parser.add_subparsers(dest="verb"))
    args = parser.parse_args(argv)
    return int(args.func(args))


def test_two_original_members_under_budget_4_form_and_stay_verified(tmp_path, kafka_build,
                                                                    capsys):
    home = kafka_build("0.10.2", member_driver=True)
    out = tmp_path / "formation"
    code = main(["experiment", "formation", "--kinds", "original", "--budgets", "4",
                 "--members", "2", "--seeds", "1", "--partitions", "8", "--lifetime-s", "15",
                 "--broker", f"kafka:{home}", "--out", str(out)])
    assert code == 0
    [row] = json.loads((out / "runs.json").read_text())["runs"]
    assert (row["kind"], row["budget"], row["members"], row["seed"]) == ("original", 4, 2, 1)
    assert row["reason"] == "" and row["formed"] is True
    assert row["rebalances_given_up"] == "0" and row["gave_up_members"] == 0
    assert row["verify_ok"] == "true"
    assert row["broker"] == "apache-kafka-0.10.2.2"
    assert row["rss_mb_mean"] > 0   # a JVM member's resident set was read
    # the printed table says the same: 1 of 1 formed, none stuck
    table = [line.split() for line in capsys.readouterr().out.splitlines()
             if line.startswith("original")]
    assert table == [["original", "4", "2", "1/1", "(0.21–1.00)", "0/1", "(0.00–0.79)"]]
    assert json.loads((out / "meta.json").read_text())["broker"] == "apache-kafka-0.10.2.2"
