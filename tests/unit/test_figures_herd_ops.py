"""The herd-ops tables: ranges, the cells that differ, and the join's race from a trace."""

from __future__ import annotations

from zkconsumer.results.figures.herd_ops import (
    difference_rows,
    event_rows,
    join_timing,
    value_range,
)


def _run(kind: str, event: str, n: int, ops: dict[str, int], converge: float) -> dict:
    return {"kind": kind, "event": event, "members": n, "status": "ok", "converge_s": converge,
            "total": {"ops": ops, "watches": {"getChildren": 2}, "errors": {},
                      "notifications": {"nodeChildrenChanged": n}},
            "by_member": {}}


def test_a_range_is_one_number_when_every_run_agrees():
    assert value_range([7, 7, 7]) == "7"
    assert value_range([9, 7, 8]) == "7–9"
    assert value_range([]) == "-"


def test_only_the_kinds_that_differ_are_listed_with_the_difference_of_medians():
    data = {"original": [_run("original", "join", 4, {"getData": 63, "create": 12}, 3.0),
                         _run("original", "join", 4, {"getData": 65, "create": 12}, 2.0)],
            "zkconsumer": [_run("zkconsumer", "join", 4, {"getData": 71, "create": 12}, 0.4),
                           _run("zkconsumer", "join", 4, {"getData": 73, "create": 12}, 0.5)]}
    assert difference_rows(data) == [["join", "4", "ops: getData", "63–65", "71–73", "8"]]
    rows = {r[0]: r[1:] for r in event_rows(data, "join")}
    assert rows["getData"] == ["63–65", "71–73"]
    assert rows["**all requests**"] == ["75–77", "83–85"]
    assert rows["time to converge, s: median (min–max)"] == ["2.50 (2.00–3.00)",
                                                             "0.45 (0.40–0.50)"]


def test_the_join_race_is_read_from_the_registration_the_releases_and_the_first_claim():
    window = {"ops": [
        [0.0, "m4", "connect", "", False, None, ""],
        [10.0, "m4", "create", "/consumers/<g>/ids", False, -110, ""],
        [12.0, "m4", "create", "/consumers/<g>/ids/<id>", False, 0, ""],
        [80.0, "m0", "delete", "/consumers/<g>/owners/<t>/<p>", False, 0, ""],
        [95.0, "m0", "delete", "/consumers/<g>/owners/<t>/<p>", False, 0, ""],
        [150.0, "m4", "create", "/consumers/<g>/owners/<t>/<p>", False, -110, ""],
        [212.0, "m1", "delete", "/consumers/<g>/owners/<t>/<p>", False, 0, ""],
        [2300.0, "m4", "create", "/consumers/<g>/owners/<t>/<p>", False, 0, ""]]}
    assert join_timing(window) == {"released_ms": 200.0, "claim_ms": 138.0, "met_owner": 1}
