"""Each architecture check reports a violation planted in a small package (and nothing else).

The package is written to a temporary folder and read the way ``test_architecture.py`` reads
``zkconsumer``, so a check that stopped seeing a kind of import would fail here.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from architecture_rules import (
    Module,
    computed_imports,
    concept_homes,
    forbidden_imports,
    import_cycles,
    layer_of,
    load_modules,
    long_modules,
    private_crossings,
    upward_imports,
)


def package(tmp_path: Path, files: dict[str, str]) -> dict[str, Module]:
    """``pkg`` with the given modules (``"a.py"``, ``"sim/model.py"``), packages made as needed."""
    root = tmp_path / "pkg"
    root.mkdir()
    for rel, text in {"__init__.py": "", **files}.items():
        path = root / rel
        for parent in [p for p in path.relative_to(root).parents if str(p) != "."]:
            (root / parent).mkdir(parents=True, exist_ok=True)
            (root / parent / "__init__.py").touch()
        path.write_text(textwrap.dedent(text))
    return load_modules(root, "pkg")


LAYERS = (("low", ("", "low")), ("high", ("high",)))


def test_an_import_up_the_layers_is_reported(tmp_path):
    modules = package(tmp_path, {"low.py": "from pkg.high import x\n", "high.py": "x = 1\n"})
    assert upward_imports(modules, LAYERS) == ["pkg.low (low) imports pkg.high (high)"]


def test_an_import_inside_a_function_up_the_layers_is_reported(tmp_path):
    modules = package(tmp_path, {"low.py": "def f():\n    from pkg import high\n",
                                 "high.py": "x = 1\n"})
    assert upward_imports(modules, LAYERS) == ["pkg.low (low) imports pkg.high (high)"]


def test_an_import_down_the_layers_is_not(tmp_path):
    modules = package(tmp_path, {"low.py": "x = 1\n", "high.py": "from pkg.low import x\n"})
    assert upward_imports(modules, LAYERS) == []


def test_a_package_in_no_layer_is_named(tmp_path):
    modules = package(tmp_path, {"elsewhere.py": ""})
    with pytest.raises(AssertionError, match="pkg.elsewhere is in no layer"):
        upward_imports(modules, LAYERS)
    assert layer_of("pkg.high.deep", LAYERS) == 1


def test_a_cycle_through_an_import_inside_a_function_is_reported(tmp_path):
    modules = package(tmp_path, {"a.py": "def f():\n    from pkg import b\n",
                                 "b.py": "import pkg.a\n"})
    assert import_cycles(modules) == [["pkg.a", "pkg.b"]]


def test_a_cycle_through_an_import_by_a_literal_name_is_reported(tmp_path):
    modules = package(tmp_path, {"a.py": "import importlib\nM = importlib.import_module('pkg.b')\n",
                                 "b.py": "from pkg.a import M\n"})
    assert import_cycles(modules) == [["pkg.a", "pkg.b"]]


def test_a_cycle_under_type_checking_is_reported(tmp_path):
    modules = package(tmp_path, {
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n",
        "b.py": "from pkg.a import TYPE_CHECKING\nclass B: ...\n"})
    assert import_cycles(modules) == [["pkg.a", "pkg.b"]]


def test_a_package_facade_and_one_way_imports_are_no_cycle(tmp_path):
    modules = package(tmp_path, {"sub/__init__.py": "from pkg.sub.x import y\n",
                                 "sub/x.py": "from pkg.sub import other\ny = 1\n",
                                 "sub/other.py": "", "a.py": "from pkg.sub import x\n"})
    assert import_cycles(modules) == []


def test_a_client_or_process_in_the_pure_package_is_reported(tmp_path):
    modules = package(tmp_path, {
        "sim/model.py": """\
            import subprocess

            from pkg import lab

            def measure():
                from kazoo.client import KazooClient
                return KazooClient
            """,
        "lab.py": "import subprocess\n",
    })
    found = forbidden_imports(modules, ("pkg.sim",), ("kazoo", "subprocess", "pkg.lab"))
    assert found == ["pkg.sim.model:1: imports subprocess (subprocess)",
                     "pkg.sim.model:3: imports pkg.lab (pkg.lab)",
                     "pkg.sim.model:6: imports kazoo.client.KazooClient (kazoo)"]


def test_an_import_by_a_computed_name_is_reported(tmp_path):
    modules = package(tmp_path, {
        "registry.py": """\
            import importlib
            from importlib import import_module

            def load(name):
                importlib.import_module(name)
                import_module(f"pkg.{name}")
                __import__("pkg.b")
                importlib.import_module("pkg.b")
            """,
        "b.py": "",
        "cli.py": "import importlib\ndef verb(n):\n    importlib.import_module(n)\n",
    })
    assert computed_imports(modules, allowed=("pkg.cli",)) == [
        "pkg.registry:5: importlib.import_module(name)",
        "pkg.registry:6: import_module(f'pkg.{name}')",
        "pkg.registry:7: __import__('pkg.b')",
    ]
    assert computed_imports(modules)[0] == "pkg.cli:3: importlib.import_module(n)"


def test_a_private_name_or_module_used_outside_is_reported(tmp_path):
    modules = package(tmp_path, {
        "a.py": "_hidden = 1\nclass A:\n    def f(self):\n        return self._x\n",
        "_inner.py": "",
        "user.py": "from pkg.a import _hidden\nfrom pkg import _inner\nimport pkg.a as a\n"
                   "y = a._hidden\n",
    })
    assert private_crossings(modules, "pkg") == [
        "pkg.user:1: imports private name _hidden from pkg.a",
        "pkg.user:4: reads a._hidden",
    ]


def test_a_private_module_outside_its_package_is_reported(tmp_path):
    modules = package(tmp_path, {"sub/_own.py": "", "sub/sibling.py": "from pkg.sub import _own\n",
                                 "user.py": "from pkg.sub import _own\n"})
    assert private_crossings(modules, "pkg") == ["pkg.user:1: imports private module pkg.sub._own"]


def test_a_module_past_the_limit_is_reported(tmp_path):
    modules = package(tmp_path, {"long.py": "x = 1\n" * 451, "short.py": "x = 1\n" * 450})
    assert long_modules(modules, 450) == {"pkg.long": 451}


def test_a_second_home_of_a_shared_concept_is_reported(tmp_path):
    modules = package(tmp_path, {
        "tables.py": "def median(xs): ...\n",
        "copy.py": "def _median(xs): ...\n",
        "ids.py": "def parse(t):\n    return t.rsplit('-', 1)\n",
        "uses.py": "class C:\n    def median(self): ...\n",
    })
    assert concept_homes(modules, ("median",)) == {"median": {"pkg.tables", "pkg.copy"},
                                                  "consumer_id_of": {"pkg.ids"}}
