"""The standalone cluster's pure parts: its settings, the master's status, Spark's event log."""

from __future__ import annotations

import json

import pytest

from zkconsumer.testing.spark_cluster import (
    SparkCluster,
    WorkerInfo,
    app_log,
    parse_master_status,
    read_event_log,
)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"workers": 0}, "at least one worker, got workers=0"),
    ({"cores": 0}, "at least one core, got cores=0"),
    ({"memory_mb": 256}, "memory_mb >= 512 (one executor of 512m), got 256"),
])
def test_a_cluster_it_cannot_start_is_refused_naming_the_value(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        SparkCluster(**kwargs)


def test_the_masters_status_lists_its_workers():
    status = {"status": "ALIVE", "workers": [
        {"id": "worker-1", "webuiaddress": "http://127.0.0.1:8081", "cores": 2,
         "state": "ALIVE"},
        {"id": "worker-2", "webuiaddress": "http://127.0.0.1:8082", "cores": 2,
         "state": "DEAD"}]}
    assert parse_master_status(status) == [
        WorkerInfo("worker-1", "http://127.0.0.1:8081", 2, "ALIVE"),
        WorkerInfo("worker-2", "http://127.0.0.1:8082", 2, "DEAD")]
    assert parse_master_status({"status": "ALIVE"}) == []


def _executor(eid: str, port: int) -> dict:
    url = f"http://127.0.0.1:{port}/logPage/?appId=app-1&executorId={eid}&logType=stdout"
    return {"Event": "SparkListenerExecutorAdded", "Executor ID": eid,
            "Executor Info": {"Host": "127.0.0.1", "Log Urls": {"stdout": url}}}


def _stage(sid: int, barrier: bool) -> dict:
    return {"Event": "SparkListenerStageSubmitted",
            "Stage Info": {"Stage ID": sid, "RDD Info": [{"Barrier": False},
                                                         {"Barrier": barrier}]}}


def _task(sid: int, eid: str, failed: bool = False) -> dict:
    return {"Event": "SparkListenerTaskEnd", "Stage ID": sid,
            "Task Info": {"Executor ID": eid, "Failed": failed, "Killed": False}}


EVENTS = [
    {"Event": "SparkListenerApplicationStart", "App Name": "zkconsumer-herd-real"},
    {"Event": "SparkListenerEnvironmentUpdate",
     "Spark Properties": {"spark.sql.shuffle.partitions": "2"}},
    _executor("0", 8081), _executor("1", 8082),
    _stage(0, barrier=True), _task(0, "1"), _task(0, "0", failed=True), _task(0, "0"),
    _stage(1, barrier=False), _task(1, "0"), _task(1, "0"),
]


def test_the_event_log_says_which_executor_ran_each_barrier_task_and_on_which_worker():
    app = app_log(EVENTS)
    assert app.name == "zkconsumer-herd-real"
    assert app.properties == {"spark.sql.shuffle.partitions": "2"}
    assert app.executors == {"0": "http://127.0.0.1:8081", "1": "http://127.0.0.1:8082"}
    # the failed attempt and the ordinary stage's tasks are not counted
    assert app.barrier_tasks == ["1", "0"]


def test_the_event_log_is_read_from_its_folder_without_the_marker_and_checksums(tmp_path):
    folder = tmp_path / "eventlog_v2_app-1"
    folder.mkdir()
    (folder / "events_1_app-1").write_text("\n".join(json.dumps(e) for e in EVENTS) + "\n")
    (folder / "appstatus_app-1").write_text("")
    (folder / ".events_1_app-1.crc").write_bytes(b"crc\x00\x00\x00\x02\x00")
    assert read_event_log(tmp_path) == app_log(EVENTS)


def test_the_cluster_verb_refuses_a_cluster_without_workers(capsys):
    from zkconsumer.cli.main import main

    assert main(["spark", "cluster", "start", "--workers", "0"]) == 2
    assert "a cluster needs at least one worker, got workers=0" in capsys.readouterr().err
