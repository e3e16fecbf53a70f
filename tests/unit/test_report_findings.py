"""``zkconsumer report``: the page says what it found. A findings box first, captions that say
how many runs back a number and from which instant time counts, provenance with versions,
no metric drawn as 0 for a protocol that lacks it, and the broker's known distortion named."""

from __future__ import annotations

import json
import re
from pathlib import Path

from zkconsumer.lab.compare.report import write_results, write_summary
from zkconsumer.lab.runs import RunResult
from zkconsumer.report import build_report
from zkconsumer.report.findings import compare_finding
from zkconsumer.report.meta import read_meta
from zkconsumer.report.plots import metric_panels
from zkconsumer.report.reference import kafka_reference
from zkconsumer.results import capture, write_provenance
from zkconsumer.tables import fmt

VERSIONS = {"zkconsumer": "0.1.0", "zookeeper": "3.9.2"}


def _run(protocol: str, event: str, stable: float, repeat: int = 0,
         watches: int | None = None) -> RunResult:
    metrics = {"time_to_stable_s": stable, "coordination_requests": 50, "members_paused": 3,
               "lost": 0, "watch_notifications": watches}
    return RunResult(protocol=protocol, members=3, partitions=2, event=event, repeat=repeat,
                     metrics=metrics, scenario="compare", params={"members": 3},
                     details={"session_timeout_ms": 4000},
                     records_dir=f"/elsewhere/runs/{protocol}-{event}-r{repeat}")


def _compare(root: Path, broker: str = "tansu-0.6.0", repeats: int = 1) -> Path:
    folder = root / "compare"
    folder.mkdir(parents=True)
    runs = [_run(p, e, s + r / 10, r, w) for r in range(repeats)
            for p, e, s, w in (("zk-range", "join", 0.1, 3), ("eager-range", "join", 4.0, None),
                               ("zk-range", "crash", 5.1, 2), ("eager-range", "crash", 7.4, None))]
    write_results(runs, folder / "results.json")
    write_summary(runs, folder / "summary.md", command="zkconsumer experiment compare "
                  "--zookeeper 127.0.0.1:40123 --parallel 4")
    with (folder / "summary.md").open("a") as f:
        f.write("\nBroker: Tansu 0.6.0 at 127.0.0.1:54691.\n")
    write_provenance(folder, capture("zkconsumer experiment compare --members 3 --parallel 4",
                                     broker=broker, versions=VERSIONS))
    for p in ("zk-range", "eager-range"):  # the Gantt's data: fetching intervals per run
        run_dir = folder / "runs" / f"{p}-join-r0"
        run_dir.mkdir(parents=True)
        gap = (1.0, 4.0) if p == "eager-range" else (0.05, 0.1)
        fetching = [{"member": "m00", "incarnation": 0, "partition": q, "start": -3.0,
                     "end": gap[0]} for q in (0, 1)]
        fetching += [{"member": "m01", "incarnation": 0, "partition": q, "start": gap[1],
                      "end": 6.0} for q in (0, 1)]
        (run_dir / "timeline.json").write_text(json.dumps(
            {"event_s": 0.0, "stable_s": gap[1], "end_s": 6.0, "fetching": fetching,
             "assigned": fetching}))
    return folder


def _texts(svg: str) -> list[str]:
    return [t.strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def _figcaptions(html: str) -> list[str]:
    return re.findall(r"<figcaption>(.*?)</figcaption>", html, re.DOTALL)


def test_the_findings_box_comes_first_with_one_line_per_experiment(tmp_path: Path) -> None:
    _compare(tmp_path)
    herd = tmp_path / "herd"
    herd.mkdir()
    (herd / "summary.md").write_text("# Herd\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    html, sections = build_report(tmp_path)
    box = re.search(r'<aside id="findings">(.*?)</aside>', html, re.DOTALL)
    assert box is not None
    assert html.index('<aside id="findings">') < html.index("<table")
    items = re.findall(r"<li>", box.group(1))
    assert len(items) == len(sections) == 2
    assert "eager-range 4 s (3 paused)" in box.group(1)
    assert "n = 1 per cell (one run each)" in box.group(1)
    assert "4 runs side by side on" in box.group(1)


def test_a_single_run_is_one_run_and_repeats_are_a_median(tmp_path: Path) -> None:
    _compare(tmp_path / "one")
    _compare(tmp_path / "three", repeats=3)
    one, _ = build_report(tmp_path / "one")
    three, _ = build_report(tmp_path / "three")
    assert all("median" not in c for c in _figcaptions(one)), _figcaptions(one)
    assert "each bar is one run" in _figcaptions(one)[0]
    assert "each bar is the median of 3 runs" in _figcaptions(three)[0]


def test_every_figure_says_from_which_instant_its_time_counts(tmp_path: Path) -> None:
    _compare(tmp_path)
    html, _ = build_report(tmp_path)
    captions = _figcaptions(html)
    timed = [c for c in captions if c.startswith("Seconds") or "around the" in c]
    assert len(timed) == 2
    assert timed and all("Time counts from" in c for c in timed), captions
    assert "crash: the instant the runner SIGKILLed the victim&#x27;s process" in captions[0]


def test_the_gantt_has_one_row_per_protocol_from_the_runs_timelines(tmp_path: Path) -> None:
    _compare(tmp_path)
    html, _ = build_report(tmp_path)
    gantt = next(f for f in re.findall(r"<figure>.*?</figure>", html, re.DOTALL)
                 if "around the join" in f)
    titles = [t for t in _texts(gantt) if ": stable " in t]
    assert titles == ["zk-range: stable 0.10 s after the join, 3 member(s) paused",
                      "eager-range: stable 4.00 s after the join, 3 member(s) paused"]


def test_a_metric_a_protocol_lacks_is_absent_not_zero(tmp_path: Path) -> None:
    runs = [r.to_json() for r in (_run("zk-range", "join", 0.1, watches=3),
                                  _run("eager-range", "join", 4.0))]
    drawn = metric_panels(runs, [("watch_notifications", "watches"), ("lost", "lost"),
                                 ("rollbacks", "rollbacks")])
    assert drawn is not None
    svg, zero, absent = drawn
    assert zero == ["lost"] and absent == ["rollbacks"]
    texts = _texts(svg)
    assert texts.count("n/a") == 1  # eager-range has no watches: labelled, no bar
    assert texts.count("watches") == 1 and "lost" not in texts


def test_tansu_timings_are_named_and_kafka_figures_set_beside(tmp_path: Path) -> None:
    _compare(tmp_path)
    html, sections = build_report(tmp_path)
    finding = sections[0].finding
    assert finding is not None
    caveats = " ".join(finding.caveats)
    assert "its coordinator holds every group round about half a session timeout (about " \
           "2.0 s of the 4000 ms here)" in caveats
    reference = kafka_reference()
    assert reference is not None, "the repository's results/comparison is in this checkout"
    expected = fmt(reference.stable_s[("eager-range", "join")])
    assert f"Apache Kafka 2.4.1 in docs/comparison.md: {reference.members} members" in caveats
    assert f"join: zk-range {fmt(reference.stable_s[('zk-range', 'join')])} s, " \
           f"eager-range {expected} s" in caveats


def test_kafka_timings_carry_no_coordinator_caveat(tmp_path: Path) -> None:
    _compare(tmp_path, broker="apache-kafka-2.4.1")
    _, sections = build_report(tmp_path)
    caveats = " ".join(sections[0].finding.caveats)  # type: ignore[union-attr]
    assert "broker apache-kafka-2.4.1" in caveats and "Tansu" not in caveats
    assert "medians of 3 runs: join: zk-range" in caveats  # the measured figures, for scale


def test_without_the_repository_results_the_finding_says_where_to_look(tmp_path: Path) -> None:
    folder = _compare(tmp_path)
    doc = json.loads((folder / "results.json").read_text())
    finding = compare_finding("compare", "s0", doc, read_meta(folder),
                              kafka_reference(tmp_path / "no-results"))
    assert finding.caveats[-1] == (
        "the Apache Kafka 2.4.1 figures are in docs/comparison.md of the zkconsumer "
        "repository (data: results/comparison/compare-apache-kafka-2.4.1-*); this install has "
        "no results/ folder")


def test_every_section_shows_revision_date_and_versions(tmp_path: Path) -> None:
    _compare(tmp_path)
    other = tmp_path / "older"
    other.mkdir()
    (other / "summary.md").write_text("Reproduce with:\n\n    zkconsumer experiment herd\n")
    _, sections = build_report(tmp_path)
    rows = {s.title: dict(s.provenance) for s in sections}
    compare = rows["compare: compare"]
    assert compare["zkconsumer"] == "0.1.0" and compare["ZooKeeper"] == "3.9.2"
    assert compare["broker"] == "tansu-0.6.0" and compare["Python"].count(".") == 2
    assert re.fullmatch(r"[0-9a-f]{12}(-dirty)?|unknown", compare["revision"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", compare["date"])
    older = rows["summary: older"]
    assert older["revision"] == older["date"] == "not recorded (no meta.json)"
    assert older["command"] == "zkconsumer experiment herd"


def test_no_port_and_every_table_scrolls(tmp_path: Path) -> None:
    _compare(tmp_path)
    html, _ = build_report(tmp_path)
    assert "Broker: Tansu 0.6.0 at 127.0.0.1." in html
    assert ":54691" not in html and ":40123" not in html
    assert html.count("<table") == html.count('<div class="scroll"><table') > 0
