"""The core installs alone; a part imported without its extra names the extra to install."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomllib

from zkconsumer import extras

PYPROJECT = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=\[ ;]", r, maxsplit=1)[0] for r in requirements}


def test_the_core_needs_kazoo_confluent_kafka_and_regex_only() -> None:
    """``regex`` runs wildcard filters in Java's dialect (zkconsumer.jregex)."""
    assert _names(PYPROJECT["project"]["dependencies"]) == {"kazoo", "confluent-kafka", "regex"}


def test_each_extra_installs_the_modules_its_parts_check_for() -> None:
    optional = PYPROJECT["project"]["optional-dependencies"]

    def closure(extra: str) -> set[str]:
        names: set[str] = set()
        for req in optional[extra]:
            inner = re.fullmatch(r"zkconsumer\[(.+)\]", req)
            names |= (set().union(*(closure(e) for e in inner.group(1).split(",")))
                      if inner else _names([req]))
        return names

    for extra, modules in extras.EXTRAS.items():
        assert {m.replace("_", "-") for m in modules} <= closure(extra), extra
    assert {"embedded", "lab", "spark"} <= {e for e in optional
                                            if closure(e) <= closure("test")}


def test_a_missing_module_is_named_with_the_extra_that_installs_it(monkeypatch) -> None:
    monkeypatch.setitem(extras.EXTRAS, "lab", ("matplotlib", "zkconsumer_no_such_module"))
    with pytest.raises(ImportError, match=r"zkconsumer\.lab needs zkconsumer_no_such_module.*"
                                          r"pip install 'zkconsumer\[lab\]'"):
        extras.require("lab", "zkconsumer.lab")
    monkeypatch.setitem(extras.EXTRAS, "lab", ("matplotlib",))
    extras.require("lab", "zkconsumer.lab")  # installed here: nothing raised
