"""Each at-scale figure says its placement: read from the results folder's meta.json."""

from __future__ import annotations

import json
from pathlib import Path

from zkconsumer.results.figures.placement import placement_line, placement_of
from zkconsumer.spark.placement import sweep_placement


def folder(tmp_path: Path, name: str, command: str, **extra: object) -> Path:
    d = tmp_path / name
    d.mkdir()
    (d / "meta.json").write_text(json.dumps({
        "command": command, "revision": "r", "date": "2026-11-27T00:00:00Z",
        "machine": {"cores": 2}, "extra": extra}))
    return d


def test_a_sweep_that_recorded_its_placement_is_told_by_it(tmp_path):
    real = folder(tmp_path, "real", "zkconsumer spark herd --mode real --tasks 2",
                  placement=sweep_placement("real", None, [100], 2, True))
    assert placement_of(real).startswith("real members spread over 2 Spark-task processes "
                                         "(member i in task i % 2) on ")
    assert "ZooKeeper and the broker on the same cores (recorded by the runs)" in \
        placement_of(real)
    sim = folder(tmp_path, "sim", "zkconsumer spark herd --mode sim",
                 placement=sweep_placement("sim", "here", [100], 2, True))
    assert placement_of(sim) == ("100 members in 2 processes (50+50) on 2 cores, ZooKeeper "
                                 "and the broker on the same cores, simulated (`--placement "
                                 "here`)")
    alone = folder(tmp_path, "alone", "zkconsumer spark herd --mode sim",
                   placement=sweep_placement("sim", None, [100], 2, True))
    assert placement_of(alone) == ("one host per member (a process and a core each, the "
                                   "servers elsewhere), simulated (`--placement per-member`)")


def test_an_older_sweep_is_told_by_its_command(tmp_path):
    sim = folder(tmp_path, "a", "zkconsumer spark herd --mode sim --tasks 2 --out x")
    assert placement_of(sim) == ("simulated, one host per member (a process and a core each, "
                                 "the servers elsewhere)")
    shared = folder(tmp_path, "b", "zkconsumer spark herd --mode sim --client-processes 4")
    assert placement_of(shared).startswith("simulated, 4 client processes sharing")
    split = folder(tmp_path, "c", "zkconsumer spark split-brain --mode sim --tasks 2 --out x")
    assert placement_of(split).startswith("simulated, 2 client processes with a core each")
    split0 = folder(tmp_path, "d", "zkconsumer spark split-brain --mode sim --tasks 0 --out x")
    assert placement_of(split0).startswith("simulated, one host per member")
    real = folder(tmp_path, "e", "zkconsumer spark split-brain --mode real --tasks 3 --out x")
    assert placement_of(real) == ("real members spread over 3 Spark-task processes on this "
                                  "machine's 2 cores, the embedded ZooKeeper and broker on the "
                                  "same cores")
    lab = folder(tmp_path, "f", "zkconsumer experiment herd --members 4")
    assert placement_of(lab).startswith("real members in threads of one Python process")


def test_one_line_names_the_folders_of_each_placement(tmp_path):
    a = folder(tmp_path, "a", "zkconsumer spark herd --mode sim")
    b = folder(tmp_path, "b", "zkconsumer spark herd --mode sim")
    c = folder(tmp_path, "c", "zkconsumer experiment herd")
    assert placement_line(a, b) == ("Placement: simulated, one host per member (a process and "
                                    "a core each, the servers elsewhere).")
    both = placement_line(a, c)
    assert both.startswith("Placement: simulated, one host per member")
    assert "(`a`); real members in threads" in both and both.endswith("(`c`).")
