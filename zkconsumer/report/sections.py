"""Find the lab's artefacts in a folder tree and turn each result folder into a report section.

A result folder is one holding any of ``results.json`` (compare, herd, split brain),
``report.json`` (chaos), ``sweep.csv`` (Spark herd and split-brain sweeps, validation), or
``summary.md``. Per-run sub-folders (``runs/``, ``members/``) are the raw material of those
files and are not sections of their own.
"""

from __future__ import annotations

import base64
import csv
import html
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zkconsumer.report import plots
from zkconsumer.report.markdown import table, to_html

log = logging.getLogger(__name__)

MARKERS = ("results.json", "report.json", "sweep.csv", "summary.md")
RAW_DIRS = {"runs", "members", "run", "records"}
MAX_ROWS = 200


@dataclass
class Section:
    title: str
    kind: str
    provenance: list[tuple[str, str]] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)  # HTML fragments
    figures: int = 0
    tables: int = 0

    def add_table(self, fragment: str) -> None:
        self.blocks.append(fragment)
        self.tables += fragment.count("<table>")

    def add_figure(self, caption: str, inner: str) -> None:
        self.blocks.append(f"<figure>{inner}<figcaption>{html.escape(caption)}</figcaption>"
                           "</figure>")
        self.figures += 1


def result_folders(root: Path) -> list[Path]:
    found = []
    for folder in sorted([root, *[p for p in root.rglob("*") if p.is_dir()]]):
        if RAW_DIRS & set(folder.relative_to(root).parts):
            continue
        if any((folder / m).is_file() for m in MARKERS):
            found.append(folder)
    return found


def kind_of(folder: Path) -> str:
    if (folder / "report.json").is_file():
        return "chaos"
    if (folder / "sweep.csv").is_file():
        return "spark sweep"
    if (folder / "results.json").is_file():
        try:
            doc = json.loads((folder / "results.json").read_text())
        except (OSError, ValueError):
            return "results"
        scenario = doc.get("scenario") or next(
            (r.get("scenario") for r in doc.get("runs", []) if r.get("scenario")), "compare")
        return str(scenario)
    return "summary"


def _provenance(folder: Path) -> list[tuple[str, str]]:
    meta = folder / "meta.json"
    if meta.is_file():
        try:
            data = json.loads(meta.read_text())
            machine = data.get("machine", {})
            load = f"{machine.get('loadavg', '?')} -> {machine.get('loadavg_end', '?')}"
            rows = [("command", data.get("command", "")), ("revision", data.get("revision", "")),
                    ("date", data.get("date", "")), ("broker", data.get("broker", "") or "none"),
                    ("machine", f"{machine.get('cores', '?')} cores, load {load}")]
            return [(k, str(v)) for k, v in rows]
        except (OSError, ValueError) as exc:
            log.warning("unreadable %s: %s", meta, exc)
    summary = folder / "summary.md"
    if summary.is_file():  # older outputs: the summary's own reproduce line
        lines = summary.read_text().splitlines()
        for i, line in enumerate(lines):
            if line.startswith("    zkconsumer ") and i and "eproduce" in " ".join(lines[:i]):
                return [("command", line.strip()), ("revision", "not recorded")]
    return [("command", "not recorded"), ("revision", "not recorded")]


def _image(path: Path) -> str:
    if path.suffix == ".svg":
        text = path.read_text()
        return plots.inline_svg(text) if "<svg" in text else ""
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<img alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}">'


def _csv_table(path: Path) -> str:
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return ""
    body = rows[1:MAX_ROWS + 1]
    note = (f"<p>first {MAX_ROWS} of {len(rows) - 1} rows of {html.escape(path.name)}</p>"
            if len(rows) - 1 > MAX_ROWS else "")
    return table(rows[0], body) + note


def _flat(doc: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for key, value in doc.items():
        if isinstance(value, dict):
            rows += _flat(value, f"{prefix}{key}.")
        elif isinstance(value, list) and len(value) > 12:
            rows.append((f"{prefix}{key}", f"{len(value)} items"))
        else:
            rows.append((f"{prefix}{key}", json.dumps(value) if not isinstance(value, str)
                         else value))
    return rows


def build_section(folder: Path, root: Path) -> Section:
    kind = kind_of(folder)
    rel = folder.relative_to(root)
    section = Section(title=f"{kind}: {rel}" if str(rel) != "." else kind, kind=kind,
                      provenance=_provenance(folder))
    summary = folder / "summary.md"
    if summary.is_file():
        section.add_table(to_html(summary.read_text()))
    if kind == "chaos":
        doc = json.loads((folder / "report.json").read_text())
        section.add_table(table(["field", "value"], [list(r) for r in _flat(doc)]))
    elif kind == "spark sweep":
        section.add_table(_csv_table(folder / "sweep.csv"))
    elif (folder / "results.json").is_file():
        doc = json.loads((folder / "results.json").read_text())
        svg = plots.time_to_stable(doc.get("runs", []))
        if svg:
            section.add_figure("time to stable per protocol (median over repeats)", svg)
        if doc.get("fits"):
            svg = plots.requests_vs_n(doc["fits"])
            if svg:
                section.add_figure("requests per event against N, log-log, fitted slopes", svg)
    for other in sorted(folder.glob("*.csv")):
        if other.name != "sweep.csv":
            section.add_table(f"<h4>{html.escape(other.name)}</h4>" + _csv_table(other))
    for image in sorted([*folder.glob("*.png"), *folder.glob("*.svg")]):
        section.add_figure(image.name, _image(image))
    return section
