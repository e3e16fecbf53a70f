"""The joiner's start, measured against a real broker, and the calibration written from it."""

from __future__ import annotations

import json

import pytest

from zkconsumer.admin import create_topic
from zkconsumer.calibration.fetcher_stop import in_step_fraction, in_step_share
from zkconsumer.calibration.join_start import measure_join_start
from zkconsumer.calibration.leave import TRAFFIC_MESSAGES_PER_S
from zkconsumer.cli.main import main
from zkconsumer.sim import Calibration


def test_a_joiner_sends_its_join_group_within_a_second_of_its_creation(zk_connect, broker):
    median, samples = measure_join_start(
        broker.bootstrap, lambda t, n: create_topic(zk_connect, t, n, bootstrap=broker.bootstrap),
        trials=2)
    sent = [s.join_sent_ms for s in samples]
    assert len(sent) == 2 and all(x is not None and 0.0 < x < 1000.0 for x in sent), sent
    assert median == pytest.approx(sum(sent) / 2)


def remeasured(tmp_path, argv: list[str], raw_suffix: str,
               base: Calibration) -> tuple[Calibration, dict]:
    """Run ``calibrate ARGV --out`` onto ``base`` (saved as base.json): the calibration it
    wrote and the samples beside it."""
    base.save(tmp_path / "base.json")
    out = tmp_path / "cal" / "calibration.json"
    assert main(["calibrate", argv[0], str(tmp_path / "base.json"), *argv[1:],
                 "--out", str(out)]) == 0
    assert (out.parent / "meta.json").is_file()
    return Calibration.load(out), json.loads((out.parent / f"calibration{raw_suffix}")
                                             .read_text())


def test_join_start_onto_replaces_only_that_parameter_and_says_where_it_came_from(tmp_path):
    cal, raw = remeasured(tmp_path, ["--join-start-onto", "--join-start-trials", "1"],
                          ".join-start.json",
                          Calibration(broker_join_start_ms=900.0, broker_join_window_factor=0.7,
                                      source="a base"))
    assert cal.broker_join_start_ms == raw["broker_join_start_ms"] < 1000.0
    assert cal.origin("broker_join_start_ms").startswith("measured by calibrate --join-start")
    assert cal.broker_join_window_factor == 0.7 and cal.source.startswith("a base; ")


def test_join_start_onto_names_a_bad_base(tmp_path, capsys):
    (tmp_path / "bad.json").write_text("[1]")
    code = main(["calibrate", "--join-start-onto", str(tmp_path / "bad.json"),
                 "--out", str(tmp_path / "out.json")])
    assert code == 2
    assert "bad.json: expected a JSON object, got list" in capsys.readouterr().err


def test_leave_onto_measures_idle_and_traffic_leaves_and_replaces_only_theirs(tmp_path):
    cal, raw = remeasured(tmp_path, ["--leave-onto", "--leave-repeats", "3"], ".leaves.json",
                          Calibration(leave_wake_ms=1.0, leave_shutdown_ms=2.0,
                                      broker_join_start_ms=900.0, source="a base"))
    idle = [x for x in raw["leaves"] if x["messages_per_s"] == 0]
    busy = [x for x in raw["leaves"] if x["messages_per_s"] > 0]
    assert (len(idle), len(busy)) == (3, 3)
    assert all(x["partitions"] == 1 for x in busy) and all(x["partitions"] == 4 for x in idle)
    assert cal.leave_wake_ms == round(sum(x["wake_ms"] for x in idle) / 3, 2)
    assert cal.leave_shutdown_ms == round(sorted(x["shutdown_ms"] for x in idle)[1], 2)
    assert cal.fetcher_close_traffic_ms == round(sorted(x["shutdown_ms"] for x in busy)[1], 2)
    for name in ("leave_wake_ms", "leave_shutdown_ms", "fetcher_close_traffic_ms"):
        assert cal.origin(name).startswith("measured by calibrate --leave-onto")
    assert cal.broker_join_start_ms == 900.0 and cal.source.startswith("a base; ")


def test_rebalance_cpu_onto_measures_a_join_into_a_crowd_and_replaces_only_its_parameter(
        tmp_path):
    cal, raw = remeasured(tmp_path, ["--rebalance-cpu-onto", "--rebalance-cpu-repeats", "1"],
                          ".rebalance-cpu.json",
                          Calibration(client_read_cpu_ms=0.2, client_write_cpu_ms=0.3,
                                      client_cpu_scale_by_clients=((4.0, 2.0), (32.0, 4.0)),
                                      broker_join_start_ms=900.0, source="a base"))
    [sample] = raw["rebalances"]
    # the 24 members and the joiner all rebalanced, with the reads and writes of a legacy
    # rebalance (each reads the group, claims its partitions), well inside the 3 s window
    assert (sample["members"], sample["rebalanced"]) == (25, 25)
    assert sample["reads"] >= 25 * 3 and sample["writes"] >= 24
    assert 0.0 < sample["wall_ms"] < 3000.0 and sample["cpu_ms"] > 0.0
    scale = Calibration(client_cpu_scale_by_clients=((4.0, 2.0), (32.0, 4.0))).client_cpu_scale(25)
    expected = (sample["cpu_ms"] - (sample["reads"] * 0.2 + sample["writes"] * 0.3) * scale) / 25
    assert sample["rest_ms"] == pytest.approx(expected, abs=1e-3)
    assert cal.rebalance_cpu_ms == raw["rebalance_cpu_ms"] == round(max(0.0, expected), 2)
    assert cal.origin("rebalance_cpu_ms").startswith("measured by calibrate --rebalance-cpu-onto")
    assert cal.broker_join_start_ms == 900.0 and cal.source.startswith("a base; ")


@pytest.mark.parametrize(("measurement", "count", "least"),
                         [("rebalance-cpu-repeats", 0, 1), ("fetcher-stop-repeats", 3, 4),
                          ("delivery-fetchers", 0, 1)])
def test_a_measurement_onto_a_base_refuses_too_few_repeats(tmp_path, capsys, measurement,
                                                           count, least):
    flag = measurement.rsplit("-", 1)[0]
    code = main(["calibrate", f"--{flag}-onto", str(tmp_path / "base.json"),
                 f"--{measurement}", str(count), "--out", str(tmp_path / "out.json")])
    assert code == 2
    assert f"--{measurement} must be >= {least}, got {count}" in capsys.readouterr().err


def test_the_lab_traffic_reaches_a_fetcher_within_one_fetch_round(zk_connect, broker):
    from zkconsumer.calibration.delivery import delivery_round_ms, measure_delivery_lags

    lags = measure_delivery_lags(zk_connect, broker.bootstrap, fetchers=1, read_s=2.0)
    # two partitions of 24 at 40 messages a second: about 6 messages in 2 s, each received
    # within a fetch round (the broker answers a waiting fetch at its next look, under the
    # fetcher's 100 ms fetch.wait.max.ms on an idle machine). The bound here is a second: on a
    # loaded machine a round can run past 100 ms, and the test judges that the traffic is
    # received and its round measured, not how fast this machine is at the moment.
    assert len(lags) >= 4 and lags == sorted(lags) and lags[0] == 0.0
    assert max(lags) < 1000.0, lags
    assert 0.0 < delivery_round_ms(lags) < 1000.0


def test_fetcher_stop_onto_times_stops_inside_one_poll_and_replaces_only_its_ends(tmp_path):
    cal, raw = remeasured(tmp_path, ["--fetcher-stop-onto", "--fetcher-stop-repeats", "4"],
                          ".fetcher-stop.json",
                          Calibration(fetcher_stop_min_ms=50.0, fetcher_stop_max_ms=60.0,
                                      broker_join_start_ms=900.0, source="a base"))
    stops = raw["stops_ms"]
    # each stop waits at most the rest of the fetcher thread's 100 ms poll and the close
    assert len(stops) == 4 and all(0.0 <= s < 1000.0 for s in stops), stops
    gap = (max(stops) - min(stops)) / 3
    assert cal.fetcher_stop_min_ms == round(max(0.0, min(stops) - gap), 2)
    assert cal.fetcher_stop_max_ms == round(max(stops) + gap, 2)
    assert cal.origin("fetcher_stop_max_ms").startswith("measured by calibrate --fetcher-stop")
    # and one crowd: six fetchers of this process stopped together, how many in step
    [crowd] = raw["crowd_stops_ms"]
    assert len(crowd) == 6 and crowd == sorted(crowd) and all(0.0 <= s < 1000.0 for s in crowd)
    assert raw["in_step_share"] == round(in_step_share([crowd]), 3)
    assert raw["in_step_fraction"] == in_step_fraction(
        raw["in_step_share"], cal.fetcher_stop_max_ms - cal.fetcher_stop_min_ms,
        2 * TRAFFIC_MESSAGES_PER_S)
    assert cal.broker_join_start_ms == 900.0 and cal.source.startswith("a base; ")
