"""The registry of coordination modes: every configurable mode has one implementation."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import zkconsumer
from zkconsumer import ZookeeperConsumerConnector
from zkconsumer.config import COORDINATION_MODES
from zkconsumer.errors import InvalidConfig
from zkconsumer.modes import MODES, get_mode
from zkconsumer.zk.multi import MultiSession
from zkconsumer.zk.session import ZkSession


def test_every_configurable_mode_has_an_implementation_under_its_name():
    assert tuple(MODES) == COORDINATION_MODES
    assert all(get_mode(name).name == name for name in COORDINATION_MODES)


def test_an_unknown_mode_is_refused_naming_it_and_the_valid_ones():
    with pytest.raises(InvalidConfig, match=r"unknown coordination.mode 'herd'; valid names: "
                                            r"legacy, leader"):
        get_mode("herd")


def test_each_mode_asks_for_its_own_session_and_fetchers():
    assert get_mode("legacy").session_class is ZkSession
    assert get_mode("leader").session_class is MultiSession
    assert get_mode("legacy").make_fetchers.__module__ == "zkconsumer.rebalance.mode"
    assert get_mode("leader").make_fetchers.__module__ == "zkconsumer.coordination.mode"


@pytest.mark.parametrize("mode", COORDINATION_MODES)
def test_a_connector_without_streams_reports_its_configured_mode_idle(mode):
    conn = ZookeeperConsumerConnector({"zookeeper.connect": "localhost:1", "group.id": "g",
                                       "coordination.mode": mode})
    snapshot = conn.metrics()
    assert snapshot["coordination"] == {"mode": mode}
    assert snapshot["rebalancer_state"] == "idle"


def _zkconsumer_imports(package: str) -> dict[str, set[str]]:
    """Module file -> the zkconsumer modules it imports, read with ``ast``."""
    root = Path(zkconsumer.__file__).parent / package
    found: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
        found[path.name] = {n for n in names if n.startswith("zkconsumer.")}
    return found


@pytest.mark.parametrize(("package", "other"), [("rebalance", "coordination"),
                                                ("coordination", "rebalance"),
                                                ("membership", "rebalance"),
                                                ("membership", "coordination")])
def test_neither_mode_imports_the_other_and_the_shared_base_imports_neither(package, other):
    imports = _zkconsumer_imports(package)
    assert "mode.py" in imports  # the walk sees the package
    crossing = {module: sorted(n for n in names if n.startswith(f"zkconsumer.{other}"))
                for module, names in imports.items()}
    assert {m: n for m, n in crossing.items() if n} == {}
