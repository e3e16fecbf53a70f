"""pytest imports test modules by their base name (rootdir-relative packages are not used
here), so a unit module and an integration module of the same name make the second one fail to
collect with "import file mismatch" on a clean checkout."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_modules_share_a_base_name() -> None:
    seen: dict[str, list[str]] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        seen.setdefault(path.name, []).append(str(path.relative_to(TESTS)))
    assert {name: where for name, where in seen.items() if len(where) > 1} == {}
