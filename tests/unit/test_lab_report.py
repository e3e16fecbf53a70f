"""Summary, results file and CLI parsing of the lab, from made-up results (no servers)."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from zkconsumer.cli import experiment
from zkconsumer.lab.compare.plots import metric_bars
from zkconsumer.lab.compare.report import (
    medians,
    read_results,
    summary_table,
    write_results,
    write_summary,
)
from zkconsumer.lab.compare.spec import ExperimentSpec
from zkconsumer.lab.progress import Progress
from zkconsumer.lab.runs import METRIC_NAMES, RunResult

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def ok(protocol: str, event: str, repeat: int, stable: float, paused: int) -> RunResult:
    metrics = dict.fromkeys(METRIC_NAMES, 0)
    metrics.update(time_to_stable_s=stable, members_paused=paused)
    return RunResult(protocol, 4, 8, event, repeat, metrics=metrics)


def results() -> list[RunResult]:
    return [
        ok("zk-range", "join", 0, 1.0, 4), ok("zk-range", "join", 1, 3.0, 4),
        ok("zk-range", "join", 2, 2.0, 3),
        RunResult("static-range", 4, 8, "join", 0, status="unsupported",
                  reason="Tansu 0.6.0 at 127.0.0.1:1 accepts group.instance.id but does not "
                         "honour it"),
        RunResult("eager-range", 4, 8, "join", 0, status="failed", reason="RunError('boom')"),
    ]


def test_medians_are_taken_over_repeats() -> None:
    cell = medians(results())[("zk-range", "join")]
    assert (cell["time_to_stable_s"], cell["members_paused"], cell["_n"]) == (2.0, 4, 3)


def test_summary_says_why_a_run_has_no_numbers() -> None:
    table = summary_table(results())
    assert "| static-range | join | 0/1 | **unsupported**" in table
    assert "Tansu 0.6.0" in table
    assert "| eager-range | join | 0/1 | **failed**" in table
    assert "| zk-range | join | 3/3 | 2 | 4 |" in table


def test_results_round_trip_through_the_json_file(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    write_results(results(), path, ExperimentSpec())
    assert read_results(path) == results()


def test_metric_bars_write_a_png(tmp_path: Path) -> None:
    path = metric_bars(results(), tmp_path / "metrics.png")
    assert path is not None and path.read_bytes()[:8] == PNG_MAGIC


def test_progress_bar_redraws_in_place_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    p = Progress(4, stream=out)
    p.advance("zk-range/join/r0")
    p.advance("eager-range/join/r0")
    p.note("eager-range/join/r0 failed: boom")
    p.close()
    text = out.getvalue()
    assert "\x1b[" in text, "a terminal gets cursor control, not a new line per update"
    assert "2/4" in text and "eager-range/join/r0" in text and "eta" in text
    assert "eager-range/join/r0 failed: boom" in text


def test_progress_off_a_terminal_is_one_plain_line_per_update_with_eta() -> None:
    out = io.StringIO()
    p = Progress(4, stream=out)
    p.advance("zk-range/join/r0")
    p.advance("eager-range/join/r0")
    p.note("eager-range/join/r0 failed: boom")
    p.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 3 and "\x1b" not in out.getvalue()
    assert lines[0].startswith("1/4 ") and lines[0].endswith("zk-range/join/r0")
    assert " eta " in lines[1] and lines[2] == "eager-range/join/r0 failed: boom"


def test_disabled_progress_writes_nothing() -> None:
    out = io.StringIO()
    p = Progress(2, enabled=False, stream=out)
    p.advance("a")
    p.note("b")
    p.close()
    assert out.getvalue() == ""


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="zkconsumer")
    experiment.register(parser.add_subparsers(dest="verb"))
    return parser.parse_args(list(argv))


def test_compare_parses_the_documented_command_line() -> None:
    args = parse("experiment", "compare", "--members", "10", "--partitions", "30", "--events",
                 "join,leave,crash", "--protocols", "zk-range,eager-range,cooperative-sticky",
                 "--repeat", "3", "--out", "DIR", "--json", "FILE")
    assert args.func is experiment.run_compare
    assert args.events == ("join", "leave", "crash")
    assert args.protocols == ("zk-range", "eager-range", "cooperative-sticky")
    assert (args.members, args.partitions, args.repeat) == (10, 30, 3)
    assert "--members 10 --partitions 30" in experiment.reproduce_command(args)


def test_compare_rejects_an_unknown_protocol_naming_the_choices(capsys) -> None:
    with pytest.raises(SystemExit):
        parse("experiment", "compare", "--protocols", "zk-range,kip848", "--out", "x")
    assert "cooperative-sticky" in capsys.readouterr().err


@pytest.mark.parametrize(("repeat", "basis"), [(1, "One run per cell"),
                                               (3, "Medians over repeats")])
def test_the_summary_calls_a_single_run_one_run(tmp_path: Path, repeat: int, basis: str) -> None:
    path = tmp_path / "summary.md"
    write_summary(results(), path, ExperimentSpec(repeat=repeat))
    text = path.read_text()
    assert basis in text
    assert ("Medians over repeats" in text) == (repeat > 1)
