"""The migration experiment's measures, on hand-built deliveries with known answers."""

from __future__ import annotations

import pytest

from zkconsumer.lab.migration.run import PLANS, MigrationSpec, duplicates_between, rewind
from zkconsumer.lab.records import Delivery
from zkconsumer.results.figures.migration import phase_rows, summary_rows


def d(ts: float, p: int, o: int, member: str = "m00") -> Delivery:
    return Delivery(ts, member, 0, p, o, None)


def test_a_redelivery_counts_in_the_window_of_its_second_delivery():
    ds = [d(1, 0, 0), d(2, 0, 1), d(5, 0, 1, "m01"), d(6, 0, 2, "m01"), d(9, 0, 1, "m02")]
    assert duplicates_between(ds, 0, 4) == 0
    assert duplicates_between(ds, 4, 8) == 1
    assert duplicates_between(ds, 8, 10) == 1
    assert duplicates_between(ds, 0, 10) == 2


def test_rewind_is_how_far_behind_the_old_groups_consumption_the_new_group_started():
    old = [d(1, 0, o) for o in range(10)] + [d(1, 1, o) for o in range(4)]
    new = [d(20, 0, o) for o in range(7, 12)] + [d(20, 1, o) for o in range(4, 6)]
    assert rewind(old + new, 10) == 3          # partition 0 re-read 7, 8, 9; partition 1 none
    assert rewind(old + [d(20, 0, 0)], 10) == 10  # started from the beginning
    assert rewind(old, 10) == 0                   # nothing after the switch


def test_plans_and_bad_specs():
    assert [s.how for s in PLANS["documented"]] == ["start", "roll", "roll", "switch"]
    assert [s.protocol for s in PLANS["naive"]] == ["zk-range", "eager-range"]
    with pytest.raises(ValueError, match="unknown plan 'fast'"):
        MigrationSpec(plan="fast").validate()
    with pytest.raises(ValueError, match="need 1 <= members <= partitions, got members=4, "
                                         "partitions=2"):
        MigrationSpec(members=4, partitions=2).validate()


def _run(plan: str, dups: list[int], unfetched: list[float], rw: int, lost: int = 0) -> dict:
    steps = PLANS[plan]
    return {"plan": plan, "produced": 100, "lost": lost, "duplicates": sum(dups), "rewind": rw,
            "phases": [{"phase": s.phase, "how": s.how, "protocol": s.protocol, "seconds": 2.0,
                        "duplicates": n, "cause": f"cause {s.how}",
                        "partition_seconds_unfetched": u}
                       for s, n, u in zip(steps, dups, unfetched, strict=True)]}


def test_the_tables_show_every_run_the_worst_loss_and_medians_per_phase():
    runs = [_run("documented", [0, 1, 0, 0], [0.5, 2, 2, 10], 0),
            _run("documented", [0, 3, 0, 0], [0.5, 4, 2, 12], 0),
            _run("naive", [0, 70], [0.2, 14], 68, lost=0),
            {"plan": "naive", "error": "did not settle"}]
    assert summary_rows(runs) == [
        ["documented", "2", "100", "0", "1 / 3", "0 / 0", "16.5", "8"],
        ["naive", "1 (+1 not measured)", "100", "0", "70", "68", "14.2", "4"]]
    rows = phase_rows(runs)
    assert rows[1] == ["documented", "dual-commit", "roll to `zk-range-kafka-dual`", "2", "2",
                       "3", "cause roll"]
    assert rows[0][-1] == "-" and rows[-1][-1] == "cause switch"
