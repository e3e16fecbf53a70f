"""``zkconsumer demo`` end to end, and its report.html as a reader sees it in a real browser.

One demo run for the module (it starts ZooKeeper, Tansu and, where a Kafka directory is at
hand, Apache Kafka for the comparison). The page is laid out by headless Chromium at 1,100 px;
a probe script added to a copy of the page measures what the layout gives (where the findings
box is, every figure's caption, the rendered size of every SVG label, each section's
provenance) and writes it into the DOM, which ``--dump-dom`` returns after layout.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from zkconsumer.cli.demo_compare import REFERENCE_KAFKA, compare_broker
from zkconsumer.report.meta import NOT_RECORDED
from zkconsumer.testing.kafka import find_kafka_home

WIDTH_PX = 1100
MIN_TEXT_PX = 10.0
SERVER_ENVS = ("ZKCONSUMER_ZK", "ZKCONSUMER_BOOTSTRAP")
PROBE = """
<script>
(() => {
  const top = el => el ? el.getBoundingClientRect().top + window.scrollY : null;
  const textPx = t => {
    const m = t.getScreenCTM();
    return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
  };
  const figures = [...document.querySelectorAll('figure')].map(f => {
    const texts = [...f.querySelectorAll('svg text')].filter(t => t.textContent.trim());
    const sizes = texts.map(textPx);
    return {section: f.closest('section') ? f.closest('section').id : null,
            caption: (f.querySelector('figcaption') || {textContent: ''}).textContent.trim(),
            svg: !!f.querySelector('svg'), img: !!f.querySelector('img'),
            width: f.getBoundingClientRect().width, texts: texts.length,
            minTextPx: sizes.length ? Math.min(...sizes) : null};
  });
  const sections = [...document.querySelectorAll('section')].map(s => ({
    id: s.id, title: s.querySelector('h2').textContent,
    provenance: Object.fromEntries([...s.querySelectorAll('table.prov tr')].map(
      r => [...r.cells].map(c => c.textContent.trim())))}));
  const out = {findingsTop: top(document.getElementById('findings')),
               firstTableTop: top(document.querySelector('table')),
               findings: [...document.querySelectorAll('#findings li')].map(
                 li => li.textContent.trim()),
               figures, sections, viewport: window.innerWidth,
               pageWidth: document.documentElement.scrollWidth};
  const pre = document.createElement('pre');
  pre.id = 'layout-probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


def _chromium() -> str:
    """The browser, or the test stops: failed in CI (``.ci/run`` installs it), set aside with
    the reason elsewhere, as the tests that need a Kafka build are."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is not None:
        return found
    reason = ("the report is checked in a real browser: install Debian's chromium "
              "(apt-get install -y chromium); .ci/run does")
    if os.environ.get("CI", "").strip().lower() in ("true", "1"):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def _demo_env() -> tuple[dict[str, str], str]:
    env = {k: v for k, v in os.environ.items() if k not in SERVER_ENVS}
    env["ZKCONSUMER_TEST_TAG"] = tag = uuid.uuid4().hex  # inherited by every server it starts
    return env, tag


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    env, tag = _demo_env()
    out = tmp_path_factory.mktemp("demo") / "demo-out"
    result = subprocess.run([sys.executable, "-m", "zkconsumer", "demo", "--messages", "200",
                             "--out", str(out)], capture_output=True, text=True, timeout=900,
                            env=env)
    return {"result": result, "out": out, "tag": tag, "env": env}


@pytest.fixture(scope="module")
def layout(demo: dict[str, Any]) -> dict[str, Any]:
    """The report laid out by Chromium at 1,100 px, as measured by the probe."""
    report = demo["out"] / "report.html"
    assert report.is_file(), demo["result"].stdout[-3000:] + demo["result"].stderr[-3000:]
    probe = demo["out"] / "report-probe.html"
    probe.write_text(report.read_text().replace("</body>", PROBE + "</body>"))
    dumped = subprocess.run(
        [_chromium(), "--headless=new", "--disable-gpu", "--no-sandbox",
         f"--window-size={WIDTH_PX},3000", "--virtual-time-budget=5000", "--dump-dom",
         probe.as_uri()], capture_output=True, text=True, timeout=300)
    found = re.search(r'<pre id="layout-probe">(.*?)</pre>', dumped.stdout, re.DOTALL)
    assert found is not None, dumped.stderr[-2000:]
    return dict(json.loads(html.unescape(found.group(1))))


@pytest.mark.timeout(1200)
def test_demo_tells_its_story_quietly_and_writes_one_report(demo: dict[str, Any]) -> None:
    result, out = demo["result"], demo["out"]
    assert result.returncode == 0, result.stderr + result.stdout[-3000:]
    assert "/brokers" in result.stdout and "(ephemeral)" in result.stdout
    assert '"leader":0' in result.stdout
    assert "consumed 200 of 200 messages" in result.stdout
    assert "Rebalance operation successful !" in result.stdout
    sections = [line[3:].split(" =")[0] for line in result.stdout.splitlines()
                if line.startswith("== ")]
    assert sections == ["servers", "topic demo-orders", "znodes a legacy consumer reads",
                        "a ZooKeeper-coordinated group consumes it",
                        "herd effect: every member rebalances on one join",
                        "split brain: a zombie keeps fetching partitions it no longer owns",
                        "the alternatives: one join and one crash, four protocols", "done"]
    compare_rows = {tuple(c.strip() for c in line.split("|")[1:3])
                    for line in result.stdout.splitlines() if line.startswith("| ")}
    for protocol in ("zk-range", "zk-leader-range", "eager-range", "cooperative-sticky"):
        assert (protocol, "join") in compare_rows and (protocol, "crash") in compare_rows
    # Each warning once on the console; every copy in the demo's log file.
    console = [line for line in (result.stdout + result.stderr).splitlines()
               if line.startswith(("WARNING", "ERROR"))]
    assert len(console) == len(set(console)), console
    assert "No broker partitions consumed" in (out / "demo.log").read_text()
    report = out / "report.html"
    assert result.stdout.rstrip().endswith(f"report: {report}")
    for folder in ("herd", "zombie", "compare"):
        assert (out / folder / "meta.json").is_file(), folder
    assert _servers_tagged(demo["tag"]) == set(), "the demo left a server process running"


@pytest.mark.timeout(1200)
def test_the_comparison_runs_on_kafka_when_a_kafka_directory_is_at_hand(
        demo: dict[str, Any]) -> None:
    stdout = demo["result"].stdout
    meta = json.loads((demo["out"] / "compare" / "meta.json").read_text())
    kafka = compare_broker(None, demo["env"],
                           find_kafka_home(REFERENCE_KAFKA, environ=demo["env"]))
    if kafka is not None:
        assert meta["broker"].startswith("apache-kafka-"), meta
        assert "so the broker protocols meet a real coordinator" in stdout
        assert "For comparison, Apache Kafka 2.4.1 in docs/comparison.md" in stdout
    else:
        assert meta["broker"] == "tansu-0.6.0", meta
        assert "broker timings are Tansu's: its coordinator holds every group round about " \
               "half a session timeout" in stdout
        assert "Beside them, Apache Kafka 2.4.1 in docs/comparison.md" in stdout
    # the Kafka 2.4.1 column beside the demo's, one row per cell
    rows = [line for line in stdout.splitlines() if line.startswith("| ")
            and line.count("|") == 5 and "protocol" not in line]
    assert len(rows) == 8, rows


@pytest.mark.timeout(1200)
def test_the_report_opens_with_its_findings(layout: dict[str, Any]) -> None:
    assert layout["findingsTop"] is not None and layout["firstTableTop"] is not None
    assert layout["findingsTop"] < layout["firstTableTop"]
    titles = [s["title"] for s in layout["sections"]]
    assert len(layout["findings"]) == len(titles) == 3
    for line, title in zip(layout["findings"], titles, strict=True):
        assert line.startswith(title) and "Caveats: n = 1" in line, line
    assert layout["pageWidth"] <= layout["viewport"], "a wide table widened the page"


@pytest.mark.timeout(1200)
def test_every_figure_has_a_caption_and_legible_text_at_page_width(
        layout: dict[str, Any]) -> None:
    figures = layout["figures"]
    assert figures
    for f in figures:
        assert len(f["caption"].split()) >= 8, f  # a sentence, not a file name
        assert f["svg"] and not f["img"], f  # drawn for the page, text measurable
        assert f["texts"] > 0 and f["minTextPx"] >= MIN_TEXT_PX, f
    gantts = [f for f in figures if f["caption"].startswith("Who fetched each partition")]
    assert len(gantts) == 2, [f["caption"][:60] for f in figures]  # the join and the crash
    for f in gantts:
        assert "Time counts from" in f["caption"] and f["width"] >= 0.9 * WIDTH_PX
    assert all("median" not in f["caption"] for f in figures if "one run" in f["caption"])


@pytest.mark.timeout(1200)
def test_every_section_shows_revision_date_and_versions(layout: dict[str, Any]) -> None:
    for section in layout["sections"]:
        prov = section["provenance"]
        for key in ("revision", "date", "zkconsumer", "ZooKeeper", "broker", "Python"):
            assert prov.get(key) and NOT_RECORDED not in prov[key], (section["title"], key)
        assert re.fullmatch(r"[0-9a-f]{12}(-dirty)?", prov["revision"]), prov
        assert not re.search(r"\d+\.\d+\.\d+\.\d+:\d+", json.dumps(prov)), prov


def _servers_tagged(tag: str) -> set[int]:
    """ZooKeeper, Tansu or Kafka processes whose environment carries ``tag``: started by the
    command under test and nobody else, whatever else runs on the machine."""
    found = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue
        if (b"ZooKeeperServerMain" in cmdline or b"tansu" in cmdline
                or b"kafka.Kafka" in cmdline) \
                and f"ZKCONSUMER_TEST_TAG={tag}".encode() in environ:
            found.add(int(proc.name))
    return found
