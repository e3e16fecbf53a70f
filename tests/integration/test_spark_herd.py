"""The Spark jobs end to end: a tiny real-mode run (2 tasks x 3 consumers) and a tiny sweep.

One SparkSession (local[2]) serves the module. The real-mode job runs real connectors in the
Spark tasks against the suite's embedded ZooKeeper and broker.
"""

from __future__ import annotations

import csv

import pytest

from zkconsumer.cli.main import build_parser
from zkconsumer.sim import SimConfig, simulate
from zkconsumer.spark.herd.job import run
from zkconsumer.spark.herd.rebalance_phases import run as run_rebalance_phases
from zkconsumer.spark.herd.tables import TABLE_COLUMNS

REQUIRED = ("protocol", "members", "partitions", "event", "seed", "coordination_requests",
            "rebalance_attempts", "conflicts", "time_to_stable_s", "members_paused",
            "failed_rebalances", "lost", "mode")


@pytest.fixture(scope="module")
def spark():
    from zkconsumer.spark.session import spark_session

    session = spark_session("local[2]", app="zkconsumer-tests", shuffle_partitions=2)
    yield session
    session.stop()


def _csv_rows(out):
    with open(out / "sweep.csv", newline="") as fh:
        reader = csv.DictReader(fh)
        return reader.fieldnames, list(reader)


def _check_outputs(spark, out, expected_rows):
    header, rows = _csv_rows(out)
    assert tuple(header) == TABLE_COLUMNS and set(REQUIRED) <= set(header)
    table = spark.read.parquet(str(out / "sweep.parquet"))
    assert set(REQUIRED) <= set(table.columns)
    assert table.count() == len(rows) == expected_rows
    assert table.filter("lost != 0").count() == 0
    assert (out / "summary.md").read_text().count("\n|") >= 2
    for plot in ("requests_vs_n.png", "time_to_stable_vs_n.png", "conflicts_vs_n.png"):
        assert (out / plot).stat().st_size > 0
    return rows


@pytest.mark.timeout(240)
def test_real_mode_hosts_consumers_in_spark_tasks_and_measures_a_crash(
        spark, zk_connect, broker, tmp_path):
    out = tmp_path / "real"
    args = build_parser().parse_args([
        "spark", "herd", "--mode", "real", "--members", "6", "--partitions", "6",
        "--protocols", "zk-range", "--events", "crash", "--seeds", "1", "--tasks", "2",
        "--session-timeout-ms", "2000", "--quiet-s", "1", "--zk", zk_connect,
        "--bootstrap", broker.bootstrap, "--out", str(out)])
    assert run(args, spark) == 0
    (row,) = _check_outputs(spark, out, 1)
    assert row["mode"] == "real" and row["tasks"] == "2" and row["settled"] == "true"
    assert int(row["produced"]) > 0 and row["lost"] == "0" and row["drained"] == "true"
    # the SIGKILLed member was noticed only when its session expired (2 s after the last packet
    # the server heard from it, which may precede the kill by a ping interval), then the five
    # survivors, spread over both tasks, were all woken and rebalanced through ZooKeeper
    assert float(row["time_to_stable_s"]) >= 1.0
    # one registration deleted: each of the five survivors' ids watch fires once
    assert int(row["watch_notifications"]) == 5
    # the legacy rebalance releases everything, so every survivor stops fetching; the row's
    # attempts are the most one member made: one, unless an owner conflict forced a retry
    assert int(row["members_paused"]) == 5
    attempts, conflicts = int(row["rebalance_attempts"]), int(row["conflicts"])
    assert attempts == 1 if conflicts == 0 else attempts >= 2, (attempts, conflicts)
    assert int(row["coordination_requests"]) > 0
    # the tasks' raw observations were kept beside the table
    records = spark.read.option("recursiveFileLookup", "true").parquet(str(out / "records"))
    assert records.select("task").distinct().count() == 2
    # where the members ran: three per task's process on this host's cores, the servers
    # elsewhere (--zk, --bootstrap), in the run's window file and the sweep's meta.json
    import json
    import os

    [window] = [json.loads(p.read_text()) for p in (out / "windows").glob("*.json")]
    assert window["placement"] == {"name": "recorded", "processes": [3, 3],
                                   "cores": os.cpu_count(), "servers_on_cores": False,
                                   "joiner": "task 0", "crash_victim": "a process of its own"}
    meta = json.loads((out / "meta.json").read_text())["extra"]["placement"]
    assert meta["option"] == "recorded"
    # the window closed only once every survivor's rebalance had ended, and the sweep says so
    # (the members' shutdown after the window makes rebalances of its own: not counted here)
    from zkconsumer.results.provenance import recorded_settle
    from zkconsumer.spark.task_control import SETTLE_REBALANCES_ENDED

    assert recorded_settle(out) == SETTLE_REBALANCES_ENDED
    bounds = records.filter(
        "kind = 'co' and what in ('rebalance_started', 'rebalance_succeeded', "
        f"'rebalance_failed') and ts > {window['event_ts']} and ts <= {window['end_ts']}"
    ).select("member", "what").orderBy("ts").collect()
    inside: dict[str, bool] = {}
    for member, what in bounds:
        inside[member] = what == "rebalance_started"
    assert len(inside) == 5 and not any(inside.values()), bounds
    assert meta["by_members"]["6"]["processes"] == [3, 3]
    # each survivor's phases from the same records: its first attempt after the expiry, its
    # fetchers stopped, then fetching again
    phases = tmp_path / "phases.csv"
    assert run_rebalance_phases(build_parser().parse_args([
        "spark", "rebalance-phases", "--raw", str(out), "--out", str(phases)]), spark) == 0
    members = list(csv.DictReader(phases.open()))
    assert len(members) == 5 and {m["task"] for m in members} == {"0", "1"}
    assert all(m["source"] == "real" and float(m["attempt_ms"]) >= 1000.0
               and float(m["stop_ms"]) > 0.0 and float(m["claim_ms"]) > 0.0 for m in members)
    assert any(m["conflict"] == "True" for m in members) == (conflicts > 0)


def test_sim_sweep_writes_the_grid_and_matches_the_simulator(spark, tmp_path, capsys):
    out = tmp_path / "sim"
    args = build_parser().parse_args([
        "spark", "herd", "--mode", "sim", "--members", "4,12", "--partitions", "8",
        "--protocols", "zk-range,eager-range,kip848", "--events", "join,crash",
        "--seeds", "2", "--out", str(out)])
    assert run(args, spark) == 0
    rows = _check_outputs(spark, out, 3 * 2 * 2 * 2)
    # the driver showed the cells done (plain lines off a terminal), ending with all of them
    progress = [line for line in capsys.readouterr().err.splitlines() if "herd sim cells" in line]
    counts = [int(line.split("/")[0]) for line in progress]
    assert counts == sorted(counts) and progress[-1].startswith("24/24 "), progress
    assert progress[-1].endswith("herd sim cells: done"), progress
    assert {r["mode"] for r in rows} == {"sim"}
    assert {r["simulated_only"] for r in rows if r["protocol"] == "kip848"} == {"true"}
    assert {r["simulated_only"] for r in rows if r["protocol"] != "kip848"} == {"false"}
    # the executors ran the same deterministic simulation as a direct call
    row = next(r for r in rows if (r["protocol"], r["members"], r["event"], r["seed"])
               == ("zk-range", "12", "join", "1"))
    direct = simulate(SimConfig("zk-range", 12, 8, "join", seed=1, rebalance_backoff_ms=1000,
                                rebalance_max_retries=10))
    assert int(row["coordination_requests"]) == direct.coordination_requests
    assert int(row["watch_notifications"]) == 12  # the join woke every member
    assert "kip848*" in (out / "summary.md").read_text()


def test_sim_sweep_simulates_and_records_the_placement_it_was_given(spark, tmp_path):
    import json

    from zkconsumer.sim.placement import here

    out = tmp_path / "placed"
    args = build_parser().parse_args([
        "spark", "herd", "--mode", "sim", "--members", "12", "--partitions", "8",
        "--protocols", "zk-range", "--events", "join", "--seeds", "1", "--placement", "here",
        "--out", str(out)])
    assert run(args, spark) == 0
    _, [row] = _csv_rows(out)
    direct = simulate(SimConfig("zk-range", 12, 8, "join", seed=0, rebalance_backoff_ms=1000,
                                rebalance_max_retries=10, placement=here(13)))
    assert float(row["time_to_stable_s"]) == pytest.approx(direct.time_to_stable_s)
    assert int(row["coordination_requests"]) == direct.coordination_requests
    meta = json.loads((out / "meta.json").read_text())
    assert meta["extra"]["placement"]["option"] == "here"
    assert meta["extra"]["placement"]["by_members"]["12"] == here(12).to_json()
    assert "--placement here" in meta["command"]
    assert "Placement of the members' client CPU: here" in (out / "summary.md").read_text()
