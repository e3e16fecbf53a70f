"""The event vocabulary: every type the package emits is listed, with the fields it carries."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from zkconsumer.assignors import get_assignor
from zkconsumer.events import EVENT_TYPES, EventBus
from zkconsumer.rebalance.plan import GroupView, decision_fields, plan_rebalance
from zkconsumer.zk.codec import ConsumerRegistration

PACKAGE = Path(__file__).resolve().parents[2] / "zkconsumer"


def emitted() -> dict[str, list[tuple[str, set[str] | None]]]:
    """type -> [(where, keyword fields or None when some are passed as ``**mapping``)]."""
    found: dict[str, list[tuple[str, set[str] | None]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("emit", "_emit")):
                continue
            where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
            assert node.args and isinstance(node.args[0], ast.Constant), \
                f"{where}: an event type must be a literal, so that it can be checked here"
            names = [k.arg for k in node.keywords]
            fields = None if None in names else {n for n in names if n is not None}
            found.setdefault(node.args[0].value, []).append((where, fields))
    return found


def test_every_emitted_type_and_field_is_listed_in_events_py() -> None:
    sites = emitted()
    assert len(sites) >= 20  # the scan sees the connector, the rebalancer, fetchers, leader
    problems = []
    for kind, calls in sorted(sites.items()):
        if kind not in EVENT_TYPES:
            problems.append(f"{calls[0][0]}: {kind!r} is not in EVENT_TYPES")
            continue
        for where, fields in calls:
            extra = (fields or set()) - set(EVENT_TYPES[kind])
            if extra:
                problems.append(f"{where}: {kind} carries {sorted(extra)}, not listed")
    assert problems == []


def test_every_listed_type_is_emitted_somewhere() -> None:
    assert sorted(set(EVENT_TYPES) - set(emitted())) == []


def test_an_unlisted_event_type_is_refused_by_name() -> None:
    bus = EventBus("c1")
    with pytest.raises(ValueError, match="'rebalance_exploded'"):
        bus.emit("rebalance_exploded", attempt=1)


def test_a_legacy_attempt_decides_for_the_whole_group_in_leader_modes_shape() -> None:
    regs = {m: ConsumerRegistration(subscription=(("t", 1),))
            for m in ("g_b", "g_a")}
    view = GroupView(registrations=regs, partitions={"t": [0, 1, 2]})
    plan = plan_rebalance(view, {"t": ["g_a-0"]}, get_assignor("legacy-range"))
    fields = decision_fields(plan, view)
    assert set(fields) == set(EVENT_TYPES["assignment_decided"])
    assert fields == {
        "generation": None, "members": ["g_a", "g_b"], "partition_counts": {"t": 3},
        "threads": {"g_a": {"t": ["g_a-0"]}, "g_b": {"t": ["g_b-0"]}},
        "assignment": {"g_a": {"t": [0, 1]}, "g_b": {"t": [2]}}}
