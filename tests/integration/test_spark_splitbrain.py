"""``spark split-brain --mode real`` end to end: one small run per scenario, real servers.

Members are hosted by two Spark tasks (local[2]) against the suite's embedded ZooKeeper and
broker, each member behind its own fault proxy. Short sessions (2 s) keep every run brief.
"""

from __future__ import annotations

import csv
import json
import re

import pytest

from zkconsumer.cli.main import build_parser
from zkconsumer.scenarios.splitbrain import Kind, ScenarioParams, plan
from zkconsumer.spark.splitbrain.job import run
from zkconsumer.spark.splitbrain.table import TABLE_COLUMNS

SESSION_S = 2.0
FAST = ["--partitions", "6", "--tasks", "2", "--session-timeout-ms", str(int(SESSION_S * 1000)),
        "--quiet-s", "1", "--idle-s", "2", "--rate", "30"]


@pytest.fixture(scope="module")
def spark():
    from zkconsumer.spark.session import spark_session

    session = spark_session("local[2]", app="zkconsumer-split-tests", shuffle_partitions=2)
    yield session
    session.stop()


def _run(spark, zk_connect, broker, out, *argv):
    args = build_parser().parse_args([
        "spark", "split-brain", "--mode", "real", *FAST, "--zk", zk_connect,
        "--bootstrap", broker.bootstrap, "--out", str(out), *argv])
    assert run(args, spark) == 0  # 0: no run failed and nothing was lost
    with open(out / "sweep.csv", newline="") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames) == TABLE_COLUMNS
        rows = {r["protocol"]: r for r in reader}
    assert (out / "summary.md").is_file() and (out / "meta.json").is_file()
    for r in rows.values():
        assert r["mode"] == "real" and r["broker"] == "tansu-0.6.0"
        assert r["lost"] == "0" and int(r["produced"]) > 0 and r["drained"] == "true"
        # the committed offsets were read after the members stopped; two tasks, two starts:
        # the skew between the processes' first rebalances is recorded (empty without two)
        assert r["lost_for_good"] == "0" and r["process_start_skew_ms"] != ""
    return rows


@pytest.mark.timeout(240)
def test_a_legacy_zombie_double_owns_and_a_fenced_leader_never_does(spark, zk_connect, broker,
                                                                      tmp_path):
    cut_factor = 2.5
    rows = _run(spark, zk_connect, broker, tmp_path, "--members", "3", "--scenarios", "zombie",
                "--protocols", "zk-range,zk-leader-range", "--zombie-fraction", "0.34",
                "--cut-factor", str(cut_factor))
    legacy, leader = rows["zk-range"], rows["zk-leader-range"]
    # cut 5 s with a 2 s session: the server expired the zombie, another member took its
    # partitions, and the zombie kept fetching them until the cut healed (not before)
    assert float(legacy["double_owned_partition_s"]) > 0
    assert int(legacy["zombie_deliveries"]) > 0
    assert float(legacy["zombie_stop_s"]) >= cut_factor * SESSION_S
    # leader mode: the zombie paused its fetchers when its connection was suspended, before its
    # session could expire (the server cannot expire it sooner than a session after the cut),
    # so nobody else ever fetched a partition it still fetched
    assert float(leader["double_owned_partition_s"]) == 0
    assert leader["zombie_deliveries"] == "0"
    assert float(leader["zombie_stop_s"]) < SESSION_S
    assert leader["verify_ok"] == "true"


def test_the_stale_view_seed_puts_the_slow_owner_last_and_the_newcomers_fast():
    """Why the next test's conflict is structural: a range assignment gives the newcomers the
    partitions of the last old member, which sees ZooKeeper half a second late."""
    pl = plan("stale-view", "zk-range", 3, ScenarioParams(delay_ms_max=800, burst_gap_s=0.2),
              39, 2000)
    delay = {a.member: a.value for a in pl.actions if a.kind is Kind.DELAY}
    assert delay["m00002"] > 500 and max(delay["m00003"], delay["m00004"]) < 100


def _legacy_run(spark, zk_connect, broker, out, *argv) -> dict[str, str]:
    args = build_parser().parse_args([
        "spark", "split-brain", "--mode", "real", *FAST, "--zk", zk_connect,
        "--bootstrap", broker.bootstrap, "--out", str(out), "--protocols", "zk-range", *argv])
    assert run(args, spark) == 0  # 0: no run failed and nothing was lost
    with open(out / "sweep.csv", newline="") as fh:
        [row] = list(csv.DictReader(fh))
    assert row["lost"] == "0" and int(row["produced"]) > 0 and row["drained"] == "true"
    assert row["lost_for_good"] == "0"
    return row


@pytest.fixture(scope="module")
def stale_and_storm(spark, zk_connect, broker, tmp_path_factory):
    """Two legacy runs: the stale view (seed 39, see above), and a storm of two joins at the
    same instant with ``rebalance.max.retries`` 1 on a group of one member, which forms
    without any race (a group that must form member by member with one attempt each can
    fail before the storm: every newcomer meets owner znodes not yet released). The old
    member sees ZooKeeper 600 ms late, so it releases its partitions well after the
    newcomers' single attempts: without that delay the race is the scheduler's, and a
    newcomer started late by a busy machine finds them released."""
    stale = _legacy_run(spark, zk_connect, broker, tmp_path_factory.mktemp("stale"),
                        "--members", "3", "--scenarios", "stale-view", "--delay-ms-max", "800",
                        "--burst-gap-s", "0.2", "--first-seed", "39")
    storm = _legacy_run(spark, zk_connect, broker, tmp_path_factory.mktemp("storm"),
                        "--members", "1", "--scenarios", "storm", "--storm-joins", "2",
                        "--storm-leaves", "0", "--storm-window-s", "0", "--max-retries", "1",
                        "--storm-owner-delay-ms", "600")
    return {"stale-view": stale, "storm": storm}


@pytest.mark.timeout(300)
def test_a_stale_view_makes_legacy_members_conflict(stale_and_storm):
    legacy = stale_and_storm["stale-view"]
    assert int(legacy["conflicts"]) >= 1
    assert int(legacy["rollbacks"]) == int(legacy["conflicts"])
    assert int(legacy["attempts_max"]) >= 2
    # late answers drop connections mid-rebalance; a release lost with its connection is not
    # repeated over another member's claim, so the group ends with every partition owned
    assert legacy["verify_ok"] == "true"


def test_a_storm_with_one_retry_gives_up_and_nothing_is_lost(stale_and_storm):
    legacy = stale_and_storm["storm"]
    assert legacy["rebalance_max_retries"] == "1"
    # the newcomers' one attempt each met the owner znodes the late old member had not yet
    # released, and their rebalances were given up
    assert int(legacy["rebalances_given_up"]) >= 1
    assert int(legacy["gave_up_members"]) >= 1


@pytest.mark.timeout(240)
def test_a_group_that_does_not_form_is_a_row_of_the_summary_and_the_job_exits_0(
        spark, zk_connect, broker, tmp_path, capsys):
    """With no rebalance attempt allowed, every initial member gives up its first rebalance
    and exits: the group never forms, whatever the timing. That is the run's outcome, a row of
    the summary in the console and on disk, not a failure of the job."""
    args = build_parser().parse_args([
        "spark", "split-brain", "--mode", "real", *FAST, "--zk", zk_connect,
        "--bootstrap", broker.bootstrap, "--out", str(tmp_path), "--protocols", "zk-range",
        "--scenarios", "zombie", "--members", "2", "--rebalance-max-retries", "0"])
    assert run(args, spark) == 0
    console = capsys.readouterr()
    with open(tmp_path / "sweep.csv", newline="") as fh:
        [row] = list(csv.DictReader(fh))
    assert row["applicable"] == "true" and row["rebalance_max_retries"] == "0"
    assert re.fullmatch(r"zk-range-zombie-n2-p6-s0-[0-9a-f]{6}: the group did not form: 2 of 2 "
                        r"initial members exited before it was stable "
                        r"\(rebalance\.max\.retries = 0\)", row["reason"])
    assert row["double_owned_partition_s"] == "" and row["lost"] == ""
    line = "| real | zombie | zk-range | 6 | 2 | 1 | did not form (budget 0): 2 of 2 members " \
           "gave up | — |"
    summary = (tmp_path / "summary.md").read_text()
    assert [x for x in summary.splitlines() if x.startswith("| real |")][0].startswith(line)
    assert "Failed" not in summary and "Not applicable" not in summary
    assert line in console.out
    assert "split-brain:" not in console.err  # nothing lost, nothing failed
    extra = json.loads((tmp_path / "meta.json").read_text())["extra"]
    assert (extra["runs"], extra["not_formed_runs"], extra["failed_runs"],
            extra["lost_runs"]) == (1, 1, 0, 0)
