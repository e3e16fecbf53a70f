"""The peer-throughput benchmark's pure parts: ConsumerPerformance's report, CPU interpolation,
rounds.csv, the per-round ratios and the docs' table."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from zkconsumer.results.figures.peers import (
    distinct_errors,
    goal_line,
    herd,
    left_out_summary,
    render_run,
    summary_table,
    znodes,
)
from zkconsumer.results.peer_throughput import (
    RoundResult,
    Spread,
    goal_met,
    interpolate,
    parse_consumer_performance,
    read_rounds,
    rounds_csv,
    summarise,
)
from zkconsumer.results.provenance import Provenance, write_provenance
from zkconsumer.results.registry import Context

REPORT = """[2026-11-27 10:14:50,001] INFO something (kafka.utils.Log)
start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec
2026-11-27 10:14:52:250, 2026-11-27 10:14:53:050, 95.3674, 119.2093, 1000000, 1250000.0000
"""


def test_the_report_line_gives_the_span_to_the_millisecond_and_the_count():
    line = parse_consumer_performance(REPORT)
    assert line.messages == 1_000_000
    assert line.megabytes == 95.3674
    assert line.elapsed == pytest.approx(0.8, abs=1e-6)
    assert line.start == datetime(2026, 11, 27, 10, 14, 52, 250_000).timestamp()


def test_an_output_without_the_report_line_is_an_error_naming_the_output():
    with pytest.raises(ValueError, match="no ConsumerPerformance result line.*Exception in"):
        parse_consumer_performance("Exception in thread main\n")


def test_cpu_at_an_instant_is_interpolated_between_samples_and_clamped_outside():
    samples = [(10.0, 1.0), (10.5, 2.0), (11.0, 4.0)]
    assert interpolate(samples, 10.25) == 1.5
    assert interpolate(samples, 10.75) == 3.0
    assert interpolate(samples, 9.0) == 1.0
    assert interpolate(samples, 12.0) == 4.0
    with pytest.raises(ValueError, match="no samples"):
        interpolate([], 1.0)


def _round(r: int, peer: str, steady: float, order: int = 0, n: int = 1000,
           cpu: float = 0.001) -> RoundResult:
    return RoundResult(r, peer, order, n, steady, cpu, steady + 2, 1.5)


RESULTS = [
    _round(1, "original", 1.0), _round(1, "zkconsumer", 2.0, 1), _round(1, "bare", 1.6, 2),
    _round(2, "original", 2.0), _round(2, "zkconsumer", 2.5, 1), _round(2, "bare", 2.0, 2),
    _round(3, "original", 1.0), _round(3, "zkconsumer", 1.0, 1), _round(3, "bare", 1.25, 2),
]


def test_rounds_csv_reads_back_what_was_written():
    assert read_rounds(rounds_csv(RESULTS)) == RESULTS


def test_a_bad_row_names_its_line():
    text = rounds_csv(RESULTS[:1]) + "x,original,0,1000,1,1,1,1\n"
    with pytest.raises(ValueError, match="rounds.csv line 3"):
        read_rounds(text)


def test_ratios_are_taken_per_round_then_summarised():
    by_peer = {s.peer: s for s in summarise(RESULTS)}
    assert list(by_peer) == ["original", "zkconsumer", "bare"]
    # zkconsumer / original per round: 0.5, 0.8, 1.0; / bare: 0.8, 0.8, 1.25
    assert by_peer["zkconsumer"].vs_original == Spread(0.8, 0.5, 1.0, 3)
    assert by_peer["zkconsumer"].vs_bare == Spread(0.8, 0.8, 1.25, 3)
    assert by_peer["original"].vs_original is None
    assert by_peer["bare"].vs_bare is None
    assert by_peer["original"].rate == Spread(1000.0, 500.0, 1000.0, 3)
    assert by_peer["zkconsumer"].cpu_us.median == pytest.approx(1.0)


def test_the_goal_needs_both_ratios():
    summaries = summarise(RESULTS)
    assert goal_met(summaries) is False
    assert goal_met(summaries, vs_original=0.8, vs_bare=0.8) is True
    assert goal_met(summarise([r for r in RESULTS if r.peer != "bare"])) is None


def test_a_peer_missing_a_reference_in_a_round_is_compared_in_the_others_only():
    results = [r for r in RESULTS if not (r.round == 1 and r.peer == "original")]
    s = {x.peer: x for x in summarise(results)}["zkconsumer"]
    assert s.vs_original == Spread(0.9, 0.8, 1.0, 2)


def test_the_table_shows_median_and_range_per_consumer():
    lines = summary_table(RESULTS)
    row = next(line for line in lines if line.startswith("| zkconsumer"))
    assert "| 1,000 | 500 (400–1,000) |" in row
    assert row.endswith("| 0.80 (0.50–1.00) | 0.80 (0.80–1.25) |")


def test_a_committed_run_renders_with_its_provenance(tmp_path: Path):
    folder = tmp_path / "benchmarks" / "peers-x"
    folder.mkdir(parents=True)
    (folder / "rounds.csv").write_text(rounds_csv(RESULTS))
    (folder / "summary.json").write_text(json.dumps(
        {"messages": 1000, "value_bytes": 100, "partitions": 4, "rounds": 3}))
    write_provenance(folder, Provenance("python benchmarks/peers.py --rounds 3", "a" * 40,
                                        "2026-11-27T10:00:00Z", {"cores": 2, "loadavg": [1, 2, 3]},
                                        "apache-kafka-0.10.2.2",
                                        {"confluent_kafka": "2.16.1", "librdkafka": "2.16.0"}))
    text = render_run(Context(results=tmp_path, figures=tmp_path), "benchmarks/peers-x")
    assert text.startswith("`results/benchmarks/peers-x/` (revision `aaaaaaaaaaaa`, "
                           "2026-11-27T10:00:00Z, broker apache-kafka-0.10.2.2, 2 cores")
    assert "reproduce: `python benchmarks/peers.py --rounds 3`" in text
    assert "| 3 | 2 | zkconsumer | 1,000 | 1.00 | 1.50 |" in text
    assert render_run(Context(results=tmp_path, figures=tmp_path), "benchmarks/none") == (
        "No committed run yet (`results/benchmarks/none/`).\n")


def test_error_lines_are_shown_once_without_their_timestamps():
    lines = ["[2026-11-27 10:31:29,705] ERROR error parsing consumer json string t (x)",
             "kafka.common.KafkaException: error constructing TopicCount : t",
             "[2026-11-27 10:31:33,907] ERROR error parsing consumer json string t (x)"]
    assert distinct_errors(lines) == ["ERROR error parsing consumer json string t (x)",
                                      "kafka.common.KafkaException: error constructing "
                                      "TopicCount : t"]
    assert distinct_errors(lines, limit=1) == ["ERROR error parsing consumer json string t (x)"]


def test_the_znode_record_renders_each_consumer_and_the_mixed_groups(tmp_path: Path):
    folder = tmp_path / "peers" / "znodes"
    folder.mkdir(parents=True)
    owner = {"t/0": "g_a-0"}
    found = {"topic": "t", "partitions": 1, "pykafka_venv": {"pykafka": "2.8.0",
                                                             "kazoo": "2.5.0"},
             "groups": {"alone-original": {"ids": {"a": '{"version":1}'}, "owners": owner},
                        "alone-pykafka": {"ids": {"p": "t"}, "owners": {"b't'/0-0": "p"}},
                        "mixed-original": {"ids": {"a": "{}", "p": "t"},
                                           "owners": {"b't'/0-0": "p"},
                                           "errors": {"original": ["ERROR x|y", "ERROR x|y"]}}}}
    (folder / "znodes.json").write_text(json.dumps(found))
    write_provenance(folder, Provenance("python benchmarks/peer_znodes.py", "b" * 40,
                                        "2026-11-27T10:00:00Z", {"cores": 2},
                                        "apache-kafka-0.10.2.2"))
    text = znodes(Context(results=tmp_path, figures=tmp_path))
    assert "| original 0.10.2.2 | `{\"version\":1}` | `t/0` | `g_a-0` |" in text
    assert "| pykafka 2.8 | `t` | `b't'/0-0` | `p` |" in text
    assert "| zkconsumer | none | none |  |" in text
    assert ("| an original member, then a pykafka member | 2 | `b't'/0-0` → `p` | "
            "original: `ERROR x\\|y` | ? |") in text


def test_the_goal_line_judges_the_unrounded_medians():
    line = goal_line(RESULTS)
    assert line == ("**zkconsumer, median of the per-round ratios**: / `ConsumerPerformance` "
                    "0.80 (goal ≥ 1: **not met**); / bare 0.80 (goal ≥ 0.95: **not met**).")
    near = [_round(1, "zkconsumer", 1.0), _round(1, "bare", 0.946)]
    assert "/ bare 0.946 (goal ≥ 0.95: **not met**)" in goal_line(near)
    assert goal_line([_round(1, "bare", 1.0)]) == ""


def test_the_herd_block_puts_each_kind_side_by_side_per_group_size(tmp_path: Path):
    folder = tmp_path / "peers" / "herd"
    folder.mkdir(parents=True)
    (folder / "joins.csv").write_text(
        "kind,members,partitions,stable_s,requests,harness_reads,pings_estimated,"
        "watch_notifications,window_s\n"
        "zkconsumer,1,8,16.5,74,276,19.7,1,20.1\n"
        "zkconsumer,2,8,9.25,120,200,10,4,12\n"
        "pykafka,1,8,,30,100,5,1,9\n")
    write_provenance(folder, Provenance("python benchmarks/peer_herd.py", "c" * 40,
                                        "2026-11-27T10:00:00Z", {"cores": 2},
                                        "apache-kafka-0.10.2.2"))
    text = herd(Context(results=tmp_path, figures=tmp_path))
    assert ("| members after the join | zkconsumer: requests | pykafka: requests | "
            "zkconsumer: s to stable | pykafka: s to stable |") in text
    assert "| 1 | 74 | 30 | 16.5 | not stable |" in text
    assert "| 2 | 120 |  | 9.2 |  |" in text


def test_the_goal_line_adds_the_ratio_to_the_revision_before():
    results = [_round(1, "zkconsumer", 1.0), _round(1, "zkconsumer-before", 1.2),
               _round(1, "bare", 1.0), _round(2, "zkconsumer", 1.0),
               _round(2, "zkconsumer-before", 0.9), _round(2, "bare", 1.0)]
    assert goal_line(results).endswith("; / `zkconsumer-before` 1.05 (0.90–1.20).")


def test_left_out_passes_are_grouped_by_consumer_and_reason():
    lines = ["round 1: pykafka: pykafka exited 1 without a result; its log: x/pykafka.log",
             "round 3: pykafka: pykafka exited 1 without a result; its log: x/pykafka.log",
             "round 2: original, 4 short reads"]
    assert left_out_summary(lines) == (
        "pykafka in rounds 1, 3 (pykafka exited 1 without a result); "
        "original in round 2 (4 short reads)")
