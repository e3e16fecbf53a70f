"""Each ZooKeeper-family member's stop, read and claim after the event, from its records and
from the model."""

from __future__ import annotations

import dataclasses

import pytest

from zkconsumer.sim import Calibration, SimConfig, simulate
from zkconsumer.spark.herd.rebalance_phases import (
    model_rows,
    on_boundary,
    phase_rows,
    phase_summary,
)

WINDOW = {"run_id": "r1", "protocol": "zk-range", "members": 3, "event": "join", "seed": 4,
          "event_ts": 100.0}


def rec(kind: str, what: str, ts: float, member: str, task: int = 0) -> dict:
    return {"kind": kind, "what": what, "ts": ts, "member": member, "task": task}


def test_a_members_phases_run_from_its_first_attempt_after_the_event():
    records = [
        rec("co", "attempt", 99.0, "a"),            # the formation's: before the event
        rec("tl", "revoked", 99.5, "a"),
        rec("co", "attempt", 100.02, "a"), rec("tl", "revoked", 100.09, "a"),
        rec("dc", "", 100.12, "a"),
        rec("tl", "assigned", 100.15, "a"), rec("tl", "revoked", 101.0, "a"),
        rec("co", "attempt", 100.03, "b", 1), rec("tl", "revoked", 100.05, "b", 1),
        rec("co", "owner_conflict", 100.08, "b", 1),
        rec("co", "attempt", 100.01, "j"),          # the joiner: nothing to stop
        rec("dc", "", 100.055, "j"), rec("co", "owner_conflict", 100.06, "j"),
        rec("co", "attempt", 101.05, "j"), rec("dc", "", 101.06, "j"),  # its retry
        rec("tl", "assigned", 101.07, "j"),
        rec("co", "attempt", 100.02, "idle"),       # woken, never planned within the run
    ]
    rows = phase_rows(records, WINDOW)
    assert [(r["member"], r["task"], r["attempt_ms"], r["stop_ms"], r["read_ms"],
             r["claim_ms"], r["conflict"], r["plan_ms"]) for r in rows] == [
        ("a", 0, 20.0, 70.0, 30.0, 60.0, False, 120.0),
        ("b", 1, 30.0, 20.0, None, None, True, None),
        # the joiner's first plan, the one that raced the owners' stops
        ("j", 0, 10.0, None, None, None, True, 55.0)]
    assert all(r["source"] == "real" and r["seed"] == 4 for r in rows)


def test_a_stop_is_placed_on_the_members_poll_grid_by_its_last_delivery():
    records = [
        rec("d", "", 99.400, "a"), rec("d", "", 99.725, "a"),  # its last, before the event
        rec("co", "attempt", 100.02, "a"), rec("tl", "revoked", 100.128, "a"),
        rec("d", "", 100.3, "a"),                              # after its stop: not counted
        rec("d", "", 100.010, "b"),
        rec("co", "attempt", 100.03, "b"), rec("tl", "revoked", 100.07, "b"),
        rec("co", "attempt", 100.03, "c"), rec("tl", "revoked", 100.09, "c"),  # never fed
    ]
    rows = {r["member"]: r for r in phase_rows(records, WINDOW)}
    # a: 403 ms after its last message, 3 ms after its fourth poll boundary
    assert (rows["a"]["since_delivery_ms"], rows["a"]["poll_phase_ms"]) == (403.0, 3.0)
    assert (rows["b"]["since_delivery_ms"], rows["b"]["poll_phase_ms"]) == (60.0, 60.0)
    assert (rows["c"]["since_delivery_ms"], rows["c"]["poll_phase_ms"]) == (None, None)
    assert on_boundary(list(rows.values())) == (1, 2)


def test_a_summary_counts_only_the_members_that_reached_the_phase():
    rows = [{"stop_ms": s, "claim_ms": c} for s, c in ((10, 40), (20, None), (30, 60),
                                                      (40, ""))]
    assert phase_summary(rows, "stop_ms") == (4, 20, 30, 40)
    assert phase_summary(rows, "claim_ms") == (2, 40, 60, 60)


def test_the_models_members_are_drawn_as_the_scorer_draws_the_cell():
    cal = Calibration(jitter_cv=0.0)
    cell = {"protocol": "zk-range", "members": 4, "partitions": 8, "event": "leave",
            "session_timeout_ms": 6000, "tasks": 2}
    rows = model_rows(cell, 2, cal)
    # three survivors stop and fetch again in each draw (the leaver's stop is its shutdown)
    assert sorted({r["seed"] for r in rows}) == [0, 1]
    assert all(r["source"] == "model" and r["event"] == "leave" for r in rows)
    assert all(0 < r["read_ms"] < r["claim_ms"] and r["stop_ms"] > 0 for r in rows)
    # a survivor's plan after the event is its attempt, its stop and its read
    assert all(r["plan_ms"] == pytest.approx(r["attempt_ms"] + r["stop_ms"] + r["read_ms"],
                                             abs=0.2) for r in rows)
    assert len(rows) == 2 * 3
    joins = model_rows(dict(cell, event="join"), 1, cal)
    (joiner,) = [r for r in joins if r["stop_ms"] is None]
    assert joiner["plan_ms"] > joiner["attempt_ms"] > 0 and joiner["claim_ms"] is None


def test_the_model_notes_each_phase_once_from_the_event_on():
    r = simulate(SimConfig("zk-range", 4, 8, "join", seed=1, member_order="start",
                           calibration=Calibration(jitter_cv=0.0)))
    # the joiner (a fifth member) has nothing to stop; the four owners stop, then fetch again
    assert len(r.member_phases) == 4
    for p in r.member_phases:
        # the plan is decided after the stop, the partitions fetched after the plan
        assert p.attempt_s >= 0.0 and p.stop_s > 0.0
        assert p.read_s is not None and p.claim_s is not None and 0.0 < p.read_s < p.claim_s
    # the joiner planned with nothing to stop, after its attempt and before every owner's
    # plan (the owners stop their fetchers first)
    (joiner,) = r.joiner_phases
    assert joiner.member not in {p.member for p in r.member_phases}
    assert 0.0 < joiner.attempt_s < joiner.plan_s < min(
        p.attempt_s + p.stop_s + (p.read_s or 0.0) for p in r.member_phases)
    assert r.member_phases == simulate(SimConfig(
        "zk-range", 4, 8, "join", seed=1, member_order="start",
        calibration=Calibration(jitter_cv=0.0))).member_phases
    with pytest.raises(AttributeError):
        r.member_phases.append  # noqa: B018 (a tuple: the result is frozen)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.member_phases[0].stop_s = 0.0  # type: ignore[misc]


def test_records_after_the_run_settled_belong_to_a_later_rebalance():
    window = dict(WINDOW, done={"settled_ts": 100.5})
    records = [rec("co", "attempt", 100.02, "a"), rec("tl", "revoked", 100.09, "a"),
               rec("co", "attempt", 100.03, "b"), rec("tl", "revoked", 100.06, "b"),
               rec("tl", "assigned", 100.2, "b"),
               # the lab stopping its members: after the settled instant and its half second
               rec("co", "owner_conflict", 101.2, "a"), rec("tl", "assigned", 101.3, "a")]
    rows = {r["member"]: r for r in phase_rows(records, window)}
    assert rows["a"]["claim_ms"] is None and rows["a"]["conflict"] is False
    assert rows["b"]["claim_ms"] == 140.0


@pytest.mark.parametrize(("extra", "message"), [
    (["--draws", "0"], "--draws must be >= 1, got 0"),
    ([], "no windows/ folder"),
])
def test_bad_input_is_named_before_any_spark_starts(tmp_path, capsys, extra, message):
    from zkconsumer.cli.main import main

    code = main(["spark", "rebalance-phases", "--raw", str(tmp_path / "none"),
                 "--out", str(tmp_path / "phases.csv"), *extra])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "phases.csv").exists()


def test_a_job_stops_the_session_it_made_and_leaves_a_given_one_running(monkeypatch):
    from zkconsumer.spark import session

    class Fake:
        stopped = 0

        def stop(self) -> None:
            self.stopped += 1

    given, made = Fake(), Fake()
    monkeypatch.setattr(session, "spark_session", lambda master, app: made)
    with session.session_for(given, None, "a job") as spark:
        assert spark is given
    with pytest.raises(RuntimeError), session.session_for(None, "local[1]", "a job") as spark:
        assert spark is made
        raise RuntimeError("the job failed")
    assert (given.stopped, made.stopped) == (0, 1)


def test_the_leader_models_members_note_their_phases_too():
    """zk-leader-range: a changed member applies the record (its attempt), stops its fetchers,
    and fetches again when it restarts the partitions it keeps; its plan is the leader's."""
    r = simulate(SimConfig("zk-leader-range", 4, 8, "join", seed=1, member_order="start",
                           calibration=Calibration(jitter_cv=0.0)))
    assert r.member_phases, "an eager join stops every changed member's fetchers"
    for p in r.member_phases:
        assert p.attempt_s >= 0.0 and p.stop_s > 0.0 and p.read_s is None
        assert p.claim_s is not None and p.claim_s > 0.0


def test_the_join_race_pairs_each_joiner_with_the_last_ranked_owner_of_its_run():
    from zkconsumer.results.figures.fetcher_stop_validation import join_race

    def row(source, run, seed, member, attempt, stop, plan, conflict="False"):
        return {"source": source, "run_id": run, "seed": seed, "members": "2",
                "event": "join", "member": member, "attempt_ms": str(attempt),
                "stop_ms": "" if stop is None else str(stop), "plan_ms": str(plan),
                "conflict": conflict}
    rows = [
        # run r1: the joiner plans at 40, the last-ranked owner (m1) stopped at 10 + 50 = 60
        row("real", "r1", "0", "m0", 10, 20, 70), row("real", "r1", "0", "m1", 10, 50, 90),
        row("real", "r1", "0", "m2", 5, None, 40, "True"),
        # run r2: the owner stopped at 30 before the joiner's plan at 45: no race
        row("real", "r2", "1", "m0", 10, 80, 120), row("real", "r2", "1", "m1", 10, 20, 60),
        row("real", "r2", "1", "m2", 5, None, 45),
        row("model", "", "0", "a", 10, 100, 150), row("model", "", "0", "b", 10, 100, 150),
        row("model", "", "0", "z", 5, None, 46),
        {**row("real", "r1", "0", "m0", 1, 1, 1), "event": "leave"},  # not a join: ignored
    ]
    assert join_race(rows)[2:] == [
        "| 2 | real | 2 | 45 [40–45] | 60 [30–60] | 1 of 2 | 1 of 2 |",
        "| 2 | model | 1 | 46 [46–46] | 110 [110–110] | 1 of 1 | — |"]
