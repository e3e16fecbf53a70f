"""Recorded commands name folders relative to the checkout, never the measuring machine's.

The absolute paths below are this module's test data (the path-stripping rule's inputs);
tests/unit/test_no_machine_paths.py allows them here and nowhere else.
"""

from __future__ import annotations

import json
from pathlib import Path

from zkconsumer.results.comparison_data import import_compare
from zkconsumer.results.portable import (
    current_command,
    portable_command,
    portable_path,
    relocated_command,
)
from zkconsumer.results.provenance import capture, copy_provenance, write_provenance

ROOT = "/work/wt/checkout"


def test_a_path_inside_the_checkout_becomes_relative_to_its_top() -> None:
    assert portable_path(f"{ROOT}/results/scale/validation-2", ROOT) == "results/scale/validation-2"
    assert portable_path(ROOT, ROOT) == "."


def test_a_scratch_folder_keeps_only_its_name() -> None:
    assert portable_path("/tmp/v3/real-v7", ROOT) == "real-v7"
    assert portable_path("/home/me/runs/herd", ROOT) == "herd"
    assert portable_path("/Users/me/x", ROOT) == "x"
    assert portable_path("/var/folders/q1/T/zkherd-1", ROOT) == "zkherd-1"


def test_a_kafka_build_beside_the_checkout_is_recorded_as_the_project_finds_it() -> None:
    assert portable_path("/work/wt/shared/kafka-2.4.1", ROOT) == "../shared/kafka-2.4.1"
    assert (portable_command("zkconsumer experiment herd --broker kafka:/work/wt/shared/kafka-"
                             "0.10.2 --zk 127.0.0.1:2181/chroot", ROOT)
            == "zkconsumer experiment herd --broker kafka:../shared/kafka-0.10.2 "
               "--zk 127.0.0.1:2181/chroot")
    assert (portable_command("x --broker kafka:/opt/kafka_2.12-2.4.1", ROOT)
            == "x --broker kafka:kafka_2.12-2.4.1")


def test_relative_paths_and_znode_paths_stay() -> None:
    assert portable_path("results/lab/herd-zk", ROOT) == "results/lab/herd-zk"
    assert portable_path("../shared/kafka-2.4.1", ROOT) == "../shared/kafka-2.4.1"
    assert portable_path("/consumers/g/ids", ROOT) == "/consumers/g/ids"


def test_a_moved_folder_names_its_new_place_with_the_rest_of_the_path() -> None:
    moves = {"/tmp/v3/sim-storm-r1": "results/splitbrain/sim-storm-r1"}
    assert (portable_path("/tmp/v3/sim-storm-r1/runs/a.json", ROOT, moves)
            == "results/splitbrain/sim-storm-r1/runs/a.json")
    assert portable_path("/tmp/v3/sim-storm-r10", ROOT, moves) == "sim-storm-r10"


def test_a_command_loses_the_lock_and_the_machine_paths_and_keeps_everything_else() -> None:
    command = ("flock /work/notes/measure.lock zkconsumer spark herd --members 4,16 "
               "--out /tmp/v3/herd --calibration=/work/wt/checkout/results/scale/c.json "
               "--broker kafka:../shared/kafka-0.10.2 --master 'local[2]' --zk h:2181/chroot")
    assert portable_command(command, ROOT) == (
        "zkconsumer spark herd --members 4,16 --out herd "
        "--calibration=results/scale/c.json --broker kafka:../shared/kafka-0.10.2 "
        "--master 'local[2]' --zk h:2181/chroot")


def test_a_lock_with_options_is_dropped_and_an_indent_kept() -> None:
    assert (portable_command("    flock -w 600 /tmp/m.lock python benchmarks/sim.py", ROOT)
            == "    python benchmarks/sim.py")
    assert portable_command("zkconsumer flock x", ROOT) == "zkconsumer flock x"


def test_the_rule_applied_twice_changes_nothing() -> None:
    once = portable_command("flock /tmp/l zkconsumer experiment herd --out /tmp/h", ROOT)
    assert once == "zkconsumer experiment herd --out h"
    assert portable_command(once, ROOT) == once


def test_moved_output_names_its_new_folder_whether_recorded_absolute_or_portable() -> None:
    dest = "results/comparison/zombie-x"
    for recorded in ("/tmp/lab/zombie", "zombie"):
        command = f"zkconsumer experiment compare --out {recorded} --json /tmp/lab/zombie/r.json"
        assert relocated_command(command, "/tmp/lab/zombie", dest, ROOT) == (
            f"zkconsumer experiment compare --out {dest} --json {dest}/r.json")
    assert (relocated_command("python b.py --results=/tmp/cga", "/tmp/cga", "results/b", ROOT)
            == "python b.py --results=results/b")
    assert (relocated_command("zk --out zombie2", "/tmp/lab/zombie", dest, ROOT)
            == "zk --out zombie2")


def test_meta_json_records_the_command_without_machine_paths(tmp_path: Path) -> None:
    prov = capture("flock /tmp/measure.lock zkconsumer experiment herd --out /tmp/era/herd")
    assert prov.command == "zkconsumer experiment herd --out herd"
    meta = json.loads(write_provenance(tmp_path, prov).read_text())
    assert meta["command"] == "zkconsumer experiment herd --out herd"


def test_imported_comparison_names_where_its_data_is_committed(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "meta.json").write_text(json.dumps(
        {"command": f"zkconsumer experiment compare --out {out}", "revision": "abc",
         "date": "2026-11-25T00:00:00Z", "machine": {}, "broker": "", "extra": {}}))
    (out / "results.json").write_text(json.dumps(
        {"spec": {"members": 4, "out_dir": str(out)}, "runs": []}))
    dest = tmp_path / "results" / "comparison" / "cmp"
    import_compare(out, dest)
    meta = json.loads((dest / "meta.json").read_text())  # dest outside the checkout
    assert meta["command"] == f"zkconsumer experiment compare --out {portable_path(str(dest))}"
    assert json.loads((dest / "runs.json").read_text())["spec"] == {"members": 4}
    copy_provenance(out, dest, root=tmp_path)
    assert (json.loads((dest / "meta.json").read_text())["command"]
            == "zkconsumer experiment compare --out results/comparison/cmp")


def test_a_tool_that_became_a_verb_is_shown_as_the_verb_with_its_arguments() -> None:
    assert (current_command("python -m zkconsumer.sim.kafka_check results/comparison --seen a")
            == "zkconsumer sim kafka-check results/comparison --seen a")
    assert (current_command("python -m zkconsumer.spark.splitbrain_validate --real r --out D")
            == "zkconsumer spark validate-split-brain --real r --out D")
    assert current_command("python -m zkconsumer.sim.kafka_checker x") == (
        "python -m zkconsumer.sim.kafka_checker x")
    assert current_command("zkconsumer spark herd --out D") == "zkconsumer spark herd --out D"
