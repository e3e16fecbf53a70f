"""The joiner's start, measured against a real broker, and the calibration written from it."""

from __future__ import annotations

import json

import pytest

from zkconsumer.admin import create_topic
from zkconsumer.calibration.join_start import measure_join_start
from zkconsumer.cli.main import main
from zkconsumer.sim import Calibration


def test_a_joiner_sends_its_join_group_within_a_second_of_its_creation(zk_connect, broker):
    median, samples = measure_join_start(
        broker.bootstrap, lambda t, n: create_topic(zk_connect, t, n, bootstrap=broker.bootstrap),
        trials=2)
    sent = [s.join_sent_ms for s in samples]
    assert len(sent) == 2 and all(x is not None and 0.0 < x < 1000.0 for x in sent), sent
    assert median == pytest.approx(sum(sent) / 2)


def test_join_start_onto_replaces_only_that_parameter_and_says_where_it_came_from(tmp_path):
    base = Calibration(broker_join_start_ms=900.0, broker_join_window_factor=0.7,
                       source="a base")
    base.save(tmp_path / "base.json")
    out = tmp_path / "cal" / "calibration.json"
    assert main(["calibrate", "--join-start-onto", str(tmp_path / "base.json"),
                 "--join-start-trials", "1", "--out", str(out)]) == 0
    cal = Calibration.load(out)
    raw = json.loads((out.parent / "calibration.join-start.json").read_text())
    assert cal.broker_join_start_ms == raw["broker_join_start_ms"] < 1000.0
    assert cal.origin("broker_join_start_ms").startswith("measured by calibrate --join-start")
    assert cal.broker_join_window_factor == 0.7 and cal.source.startswith("a base; ")
    assert (out.parent / "meta.json").is_file()


def test_join_start_onto_names_a_bad_base(tmp_path, capsys):
    (tmp_path / "bad.json").write_text("[1]")
    code = main(["calibrate", "--join-start-onto", str(tmp_path / "bad.json"),
                 "--out", str(tmp_path / "out.json")])
    assert code == 2
    assert "bad.json: expected a JSON object, got list" in capsys.readouterr().err
