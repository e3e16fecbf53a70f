"""The comparison's compact data and the Kafka profile's check decide exactly as documented."""

from __future__ import annotations

import math

from zkconsumer.results.comparison_data import compact_run, join_movement
from zkconsumer.sim.kafka_check import Cell, CellCheck, check, real_cells, sim_config


def iv(member: str, partition: int, start: float, end: float) -> dict:
    return {"member": member, "incarnation": 0, "partition": partition, "start": start,
            "end": end}


def test_a_join_counts_stopped_and_moved_partitions_from_the_timeline():
    timeline = {"event_s": 0.0, "end_s": 5.0, "fetching": [
        iv("m00", 0, -3.0, 6.0),                        # kept throughout
        iv("m00", 1, -3.0, 1.0), iv("m00", 1, 1.5, 6.0),  # stopped, back to the same owner
        iv("m01", 2, -3.0, 1.2), iv("m02", 2, 2.0, 6.0),  # stopped and moved
        iv("m01", 3, -3.0, 6.0),
    ]}
    assert join_movement(timeline) == {"partitions_stopped": 2, "partitions_moved": 1}


def test_compact_runs_keep_metrics_broker_and_movement_but_no_paths():
    run = {"protocol": "eager-range", "members": 2, "partitions": 4, "event": "join",
           "repeat": 0, "status": "ok", "reason": None, "metrics": {"lost": 0},
           "scenario": "compare", "params": {}, "records_dir": "/tmp/x",
           "details": {"broker": "apache-kafka-2.4.1", "traceback": "t", "topic": "lab-x",
                       "metric_notes": {"a": "b"}, "settled": True}}
    timeline = {"end_s": 1.0, "fetching": [iv("m00", 0, -1.0, 0.5), iv("m01", 0, 0.7, 2.0)]}
    out = compact_run(run, timeline)
    assert "records_dir" not in out
    assert out["details"] == {"broker": "apache-kafka-2.4.1", "settled": True,
                              "partitions_stopped": 1, "partitions_moved": 1}


def _check(real_requests, sim_requests, real_tts, sim_tts) -> CellCheck:
    return CellCheck("eager-range", 4, 8, "join", 3, real_requests, sim_requests, real_tts,
                     sim_tts, 4, 4, 5, 1)


def test_a_cell_passes_only_within_both_tolerances():
    assert _check(100, 110, 1.0, 1.2).ok
    assert not _check(100, 111, 1.0, 1.0).ok
    assert not _check(100, 100, 1.0, 1.21).ok


def test_the_simulator_runs_each_cell_as_the_plan_says():
    cfg = sim_config(Cell("static-range", 8, 16, "crash"), seed=3)
    assert (cfg.protocol, cfg.members, cfg.partitions, cfg.victim_rank) == (
        "kafka-static-range", 8, 16, 7)
    assert (cfg.session_timeout_ms, cfg.heartbeat_interval_ms, cfg.member_order) == (
        6000, 2000, "start")
    assert (cfg.count_from_s, cfg.count_until_s, cfg.messages_per_s) == (0.5, 2.5, 40.0)


def test_only_settled_runs_of_scored_protocols_and_events_are_scored():
    def run(protocol, event, status="ok", settled=True):
        return {"protocol": protocol, "event": event, "members": 4, "partitions": 8,
                "status": status, "details": {"settled": settled},
                "metrics": {"time_to_stable_s": 1.0, "coordination_requests": 50,
                            "members_paused": 4, "rebalance_attempts": 5}}

    runs = [run("eager-range", "join"), run("eager-range", "join", settled=False),
            run("zk-range", "join"), run("eager-range", "rolling-bounce"),
            run("static-range", "leave", status="unsupported")]
    cells = real_cells(runs)
    assert list(cells) == [Cell("eager-range", 4, 8, "join")]
    assert len(cells[Cell("eager-range", 4, 8, "join")]) == 1
    (result,) = check(runs, seeds=(1,))
    assert result.runs == 1 and result.real_requests == 50 and not math.isnan(result.sim_tts)
