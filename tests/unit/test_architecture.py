"""The package's shape, as docs/architecture.md draws it: layers, no cycle, a pure simulator.

The checks are pure functions over the source read with ``ast`` (``architecture_rules.py``;
``test_architecture_rules.py`` plants a violation of each one and sees it reported), so a
violation anywhere fails here with the module, the line and the name, before it shows up as an
import-order bug or a caller reaching into another module's internals.
"""

from __future__ import annotations

from pathlib import Path

from architecture_rules import (
    computed_imports,
    concept_homes,
    forbidden_imports,
    import_cycles,
    import_graph,
    layer_of,
    load_modules,
    long_modules,
    private_crossings,
    upward_imports,
)

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "zkconsumer"
MODULES = load_modules(PACKAGE, "zkconsumer")
# C extensions are modules too (``datapath/_speedups.c`` builds ``zkconsumer.datapath._speedups``).
EXTENSIONS = {".".join(p.relative_to(ROOT).with_suffix("").parts) for p in PACKAGE.rglob("*.c")}

# Names other libraries spell with a leading underscore as part of their public API.
EXTERNAL_UNDERSCORE_API = {
    # confluent-kafka names the client-side error codes so (KafkaError._PARTITION_EOF, ...)
    "KafkaError",
    # os._exit is the documented way for a forked child to leave without running cleanups
    "os",
}

# The layers of docs/architecture.md, bottom up: a module imports from its own layer or below.
LAYERS = (
    ("shared", ("identity", "errors", "extras", "orphans", "tables", "events", "metrics")),
    ("zk plumbing", ("zk",)),
    ("core", ("config", "jregex", "datapath", "assignors")),
    ("connector", ("topic_filter", "subscription", "offsets")),
    ("membership", ("membership",)),
    ("rebalance / coordination", ("rebalance", "coordination", "modes", "connector", "")),
    ("tools", ("admin", "faults", "testing")),
    ("scenarios", ("scenarios",)),
    ("sim", ("sim",)),
    ("lab", ("lab", "results", "report")),
    ("calibration", ("calibration",)),
    ("spark", ("spark",)),
    ("cli", ("cli", "__main__")),
)

# The simulator and the scenario rules it shares hold no client, server, process or job.
PURE_PACKAGES = ("zkconsumer.sim", "zkconsumer.scenarios")
NOT_IN_PURE_PACKAGES = (
    "kazoo", "confluent_kafka", "subprocess", "multiprocessing", "socket", "pyspark",
    "zkconsumer.lab", "zkconsumer.spark", "zkconsumer.testing", "zkconsumer.calibration",
    "zkconsumer.admin", "zkconsumer.faults", "zkconsumer.zk.session",
)

# The one place a module is imported by a computed name: the CLI's verb table, where a verb
# whose extra is not installed is listed anyway and says what to install.
COMPUTED_IMPORTS_ALLOWED = ("zkconsumer.cli.main",)

MAX_MODULE_LINES = 450

# Concepts with one home each: (name, the module defining it).
ONE_HOME = {
    "TopicPartition": "zkconsumer.identity",
    "java_string_hash": "zkconsumer.identity",
    "consumer_id_of": "zkconsumer.identity",
    "thread_id": "zkconsumer.identity",
    "thread_number": "zkconsumer.identity",
    "median": "zkconsumer.tables",
    "fmt": "zkconsumer.tables",
    "pyplot": "zkconsumer.results.plotting",
    "die_with_parent": "zkconsumer.orphans",
    "children_of": "zkconsumer.admin.tree",
    "run_matrix": "zkconsumer.lab.matrix",
    "revoke": "zkconsumer.sim.heartbeats",
    "portable_command": "zkconsumer.results.portable",
    "portable_path": "zkconsumer.results.portable",
    "parse_mntr": "zkconsumer.lab.mntr",
    "Timing": "zkconsumer.scenarios.timing",
    "ScenarioParams": "zkconsumer.scenarios.splitbrain",
    "host_task": "zkconsumer.spark.task_host",
    "run_stage": "zkconsumer.spark.task_host",
    "write_tables": "zkconsumer.spark.summary",
    "summary_text": "zkconsumer.spark.summary",
    "member_properties": "zkconsumer.lab.member_config",
    "Protocol": "zkconsumer.scenarios.protocols",
    "Decider": "zkconsumer.scenarios.protocols",
    "of_family": "zkconsumer.scenarios.protocols",
}


def test_the_checks_see_the_whole_package() -> None:
    """The walk finds the connector, the lab and the simulator, and resolves the import forms
    the package uses (so an empty result elsewhere means it)."""
    assert {"zkconsumer.connector", "zkconsumer.lab.herd", "zkconsumer.zk.paths",
            "zkconsumer.sim.models", "zkconsumer.datapath._speedups"} <= set(MODULES) | EXTENSIONS
    graph = import_graph(MODULES)
    # from zkconsumer.zk import paths
    assert "zkconsumer.zk.paths" in graph["zkconsumer.offsets.zookeeper"]
    assert "zkconsumer.sim.legacy" in graph["zkconsumer.sim.models"]  # from ... import LegacyGroup
    assert "zkconsumer.calibration.measure" in graph["zkconsumer.cli.calibrate"]  # in a function
    assert {layer_of(name, LAYERS) for name in MODULES} == set(range(len(LAYERS)))


def test_no_import_cycle_inside_the_package() -> None:
    found = import_cycles(MODULES)
    assert found == [], "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_imports_only_go_down_the_layers() -> None:
    assert upward_imports(MODULES, LAYERS) == []


def test_the_simulator_holds_no_client_server_process_or_job() -> None:
    assert forbidden_imports(MODULES, PURE_PACKAGES, NOT_IN_PURE_PACKAGES) == []


def test_no_module_is_imported_by_a_computed_name() -> None:
    assert computed_imports(MODULES, COMPUTED_IMPORTS_ALLOWED) == []


def test_no_private_name_crosses_a_module_boundary() -> None:
    problems = private_crossings(MODULES, "zkconsumer", EXTENSIONS, EXTERNAL_UNDERSCORE_API)
    assert problems == [], "private names used outside their module:\n" + "\n".join(problems)


def test_no_module_is_past_450_lines() -> None:
    assert long_modules(MODULES, MAX_MODULE_LINES) == {}


def test_shared_concepts_are_defined_in_one_module_only() -> None:
    """A second module-level definition (even private, ``_median``) of a shared concept is a
    copy; a method delegating to the one home (``BrokerGroup._revoke``) is not."""
    assert concept_homes(MODULES, ONE_HOME) == {name: {home} for name, home in ONE_HOME.items()}
