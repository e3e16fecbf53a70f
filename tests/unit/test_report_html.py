"""``zkconsumer report``: every result folder becomes a section with its tables, figures and
provenance, and the page references nothing outside itself."""

from __future__ import annotations

import csv
import json
import re
from html.parser import HTMLParser
from pathlib import Path

from zkconsumer.lab.compare.report import write_results, write_summary
from zkconsumer.lab.runs import RunResult
from zkconsumer.report import build_report
from zkconsumer.results import capture, write_provenance


class Page(HTMLParser):
    """Counts per section: tables, figures, svgs, images; and every URL-bearing attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[dict[str, object]] = []
        self.urls: list[str] = []
        self.css = ""
        self._in_style = False
        self._h2 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("src", "href", "xlink:href", "data", "action") and value:
                self.urls.append(value)
        if tag == "section":
            self.sections.append({"title": "", "table": 0, "figure": 0, "svg": 0, "img": 0})
        elif tag == "h2":
            self._h2 = True
        elif tag == "style":
            self._in_style = True
        elif self.sections and tag in ("table", "figure", "svg", "img"):
            self.sections[-1][tag] += 1  # type: ignore[operator]

    def handle_endtag(self, tag: str) -> None:
        self._h2 = self._h2 and tag != "h2"
        self._in_style = self._in_style and tag != "style"

    def handle_data(self, data: str) -> None:
        if self._h2 and self.sections:
            self.sections[-1]["title"] = str(self.sections[-1]["title"]) + data
        if self._in_style:
            self.css += data


def _run(protocol: str, event: str, stable: float, n: int = 4, scenario: str = "compare",
         requests: int = 100) -> RunResult:
    return RunResult(protocol=protocol, members=n, partitions=8, event=event, repeat=0,
                     metrics={"time_to_stable_s": stable, "coordination_requests": requests},
                     scenario=scenario, params={"n": n})


def _lab_tree(root: Path) -> None:
    compare = root / "compare"
    compare.mkdir(parents=True)
    runs = [_run("zk-range", "join", 1.0), _run("eager-range", "join", 4.0),
            _run("zk-range", "crash", 6.0), _run("eager-range", "crash", 9.3)]
    write_results(runs, compare / "results.json")
    write_summary(runs, compare / "summary.md", command="zkconsumer experiment compare --x 1")
    write_provenance(compare, capture("zkconsumer experiment compare --x 1",
                                      broker="apache-kafka-2.4.1"))
    herd = root / "herd"
    herd.mkdir()
    hruns = [_run("zk-range", "join", 1.0, n, "herd", int(7 * n ** 1.4)) for n in (4, 8, 16)]
    fits = {"zk-range/join": {"slope": 1.4, "intercept": 1.9, "r2": 1.0,
                              "points": [[n, int(7 * n ** 1.4)] for n in (4, 8, 16)]}}
    (herd / "results.json").write_text(json.dumps(
        {"scenario": "herd", "runs": [r.to_json() for r in hruns], "fits": fits}))
    chaos = root / "chaos"
    chaos.mkdir()
    (chaos / "report.json").write_text(json.dumps({"lost": 0, "duplicates": 12,
                                                   "verify_ok": True, "actions": {"kill": 3}}))
    sweep = root / "spark"
    sweep.mkdir()
    with (sweep / "sweep.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["mode", "protocol", "n", "requests"])
        w.writerows([["sim", "zk-range", n, 7 * n] for n in (4, 8)])
    (root / "compare" / "runs" / "zk-range-join-r0").mkdir(parents=True)
    (root / "compare" / "runs" / "zk-range-join-r0" / "summary.md").write_text("# raw\n")


def test_each_result_folder_is_a_section_with_its_tables_and_figures(tmp_path: Path) -> None:
    _lab_tree(tmp_path)
    html, sections = build_report(tmp_path)
    page = Page()
    page.feed(html)
    by_title = {str(s["title"]): s for s in page.sections}
    assert sorted(by_title) == ["chaos: chaos", "compare: compare", "herd: herd",
                                "spark sweep: spark"]
    # compare: provenance table + summary table; time to stable and the metric panels
    assert by_title["compare: compare"]["table"] == 2
    assert by_title["compare: compare"]["figure"] == 2
    assert by_title["compare: compare"]["svg"] == 2
    # herd: one figure, requests (log-log) and time to stable against N side by side
    assert by_title["herd: herd"]["figure"] == 1
    assert by_title["chaos: chaos"]["table"] == 2
    assert by_title["spark sweep: spark"]["table"] == 2
    assert [s.kind for s in sections] == ["chaos", "compare", "herd", "spark sweep"]
    assert "apache-kafka-2.4.1" in html and "zkconsumer experiment compare --x 1" in html
    assert "slope 1.40" in html


def test_the_page_references_nothing_outside_itself_but_the_docs(tmp_path: Path) -> None:
    _lab_tree(tmp_path)
    (tmp_path / "compare" / "metrics.png").write_bytes(
        b"\x89PNG\r\n\x1a\n" + b"\x00" * 16)
    (tmp_path / "compare" / "extra.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16)
    html, _ = build_report(tmp_path)
    page = Page()
    page.feed(html)
    assert any(u.startswith("data:image/png") for u in page.urls), "the inlined PNG"
    docs = [u for u in page.urls if not u.startswith(("data:", "#"))]
    assert docs, "the summary's docs/comparison.md is a link"
    for url in docs:  # relative links into this checkout's docs/, each to a file that exists
        assert "://" not in url and not url.startswith("/"), url
        assert (tmp_path / url).resolve().is_file(), url
        assert (tmp_path / url).resolve().parent.name == "docs", url
    assert "url(" not in page.css and "@import" not in page.css
    assert not re.search(r"<(script|link|iframe)\b", html)


def test_the_lab_plots_the_report_redraws_are_not_shown_twice(tmp_path: Path) -> None:
    _lab_tree(tmp_path)
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
    (tmp_path / "compare" / "metrics.png").write_bytes(png)
    (tmp_path / "herd" / "herd-requests.png").write_bytes(png)
    html, _ = build_report(tmp_path)
    page = Page()
    page.feed(html)
    by_title = {str(s["title"]): s for s in page.sections}
    assert by_title["compare: compare"]["img"] == 0
    assert by_title["herd: herd"]["img"] == 0


def test_an_empty_folder_gives_a_page_that_says_so(tmp_path: Path) -> None:
    html, sections = build_report(tmp_path)
    assert sections == [] and "No lab results found" in html
