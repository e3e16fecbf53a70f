"""The real and simulated sweeps record the placement their members ran with."""

from __future__ import annotations

from zkconsumer.sim.placement import Placement, here, recorded


def test_a_real_run_records_its_members_tasks_and_the_hosts_cores():
    import os

    from zkconsumer.spark.placement import run_placement, sweep_placement

    rec = run_placement(101, 2, True, joiner="task 0")
    assert rec == {"name": "recorded", "processes": [51, 50], "cores": os.cpu_count(),
                   "servers_on_cores": True, "joiner": "task 0"}
    assert recorded(rec) == Placement((51, 50), cores=os.cpu_count(), servers_on_cores=True,
                                      name="recorded")
    assert run_placement(3, 8, False)["processes"] == [1, 1, 1]
    sim = sweep_placement("sim", "here", [4, 100], 2, True)
    assert sim["option"] == "here"
    assert sim["by_members"]["100"] == here(100).to_json()
    assert sweep_placement("sim", None, [10], 2, True)["by_members"]["10"]["name"] == \
        "per-member"


def test_the_sweeps_record_the_placement_option_they_ran_with():
    import argparse

    from zkconsumer.spark.herd.job import placement_meta as herd_meta
    from zkconsumer.spark.splitbrain.job import placement_meta, placement_note

    split = argparse.Namespace(mode="sim", placement="here", members="10,100", tasks=2,
                               zookeeper=None, bootstrap=None)
    assert placement_meta(split)["by_members"]["100"] == here(100).to_json()
    assert placement_note(split).startswith("here (at N = 100: 100 members in 2 processes")
    plain = argparse.Namespace(mode="sim", placement=None, members="10", tasks=2)
    assert placement_meta(plain) == {"option": "--tasks 2: that many processes with a core "
                                               "each"}
    assert placement_note(plain) == "2 processes with a core each (--tasks), the servers " \
        "elsewhere"
    herd = argparse.Namespace(mode="sim", placement=None, client_processes=3, tasks=2)
    assert herd_meta(herd, [8]) == {"option": "--client-processes 3"}
    real = argparse.Namespace(mode="real", placement=None, client_processes=0, tasks=2,
                              zookeeper="zk:2181", bootstrap="b:9092")
    assert herd_meta(real, [8])["by_members"]["8"]["servers_on_cores"] is False


def test_a_simulated_sweep_cell_runs_on_the_placement_of_its_members_after_the_event():
    from zkconsumer.sim import SimConfig, simulate
    from zkconsumer.spark.herd.grid import Cell
    from zkconsumer.spark.herd.sweep import SimSettings, simulate_cell

    settings = SimSettings(placement="here", tasks=2, rebalance_backoff_ms=1000,
                           rebalance_max_retries=10)
    join, crash = Cell("zk-range", 12, 8, "join", 0), Cell("zk-range", 12, 8, "crash", 0)
    assert settings.config(join).placement == here(13)  # the joiner is placed too
    assert settings.config(crash).placement == here(12)
    assert SimSettings().config(join).placement is None
    row = simulate_cell(join, settings)
    direct = simulate(SimConfig("zk-range", 12, 8, "join", seed=0, rebalance_backoff_ms=1000,
                                rebalance_max_retries=10, auto_commit=False,
                                placement=here(13)))
    assert row["time_to_stable_s"] == direct.time_to_stable_s
    assert row["coordination_requests"] == direct.coordination_requests
