"""Find the lab's artefacts in a folder tree and turn each result folder into a report section.

A result folder is one holding any of ``results.json`` (compare, herd, split brain),
``report.json`` (chaos), ``sweep.csv`` (Spark herd and split-brain sweeps, validation), or
``summary.md``. Per-run sub-folders (``runs/``, ``members/``) are the raw material of those
files and are not sections of their own.
"""

from __future__ import annotations

import csv
import html
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zkconsumer.report import figures
from zkconsumer.report.findings import (
    Finding,
    compare_finding,
    generic_finding,
    herd_finding,
    zombie_finding,
)
from zkconsumer.report.markdown import table, to_html
from zkconsumer.report.meta import NOT_RECORDED, RunMeta, read_meta, summary_command
from zkconsumer.report.reference import Reference

log = logging.getLogger(__name__)

MARKERS = ("results.json", "report.json", "sweep.csv", "summary.md")
RAW_DIRS = {"runs", "members", "run", "records"}
MAX_ROWS = 200


@dataclass
class Section:
    title: str
    kind: str
    anchor: str
    provenance: list[tuple[str, str]] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)  # HTML fragments
    finding: Finding | None = None
    figures: int = 0
    tables: int = 0

    def add_table(self, fragment: str) -> None:
        if fragment:
            self.blocks.append(fragment)
            self.tables += fragment.count("<table>")

    def add_figure(self, figure: figures.Figure) -> None:
        self.blocks.append(f"<figure>{figure.inner}<figcaption>{html.escape(figure.caption)}"
                           "</figcaption></figure>")
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
        if scenario == "split-brain":
            event = next((r.get("event") for r in doc.get("runs", []) if r.get("event")), "")
            return f"split brain ({event})" if event else "split brain"
        return str(scenario)
    return "summary"


def provenance_rows(folder: Path, meta: RunMeta | None) -> list[tuple[str, str]]:
    if meta is not None:
        return meta.rows()
    rows = RunMeta(command=summary_command(folder)).rows()
    return [(k, v if k == "command" else f"{NOT_RECORDED} (no meta.json)") for k, v in rows]


def _csv_rows(path: Path) -> list[list[str]]:
    with path.open(newline="") as f:
        return list(csv.reader(f))


def _csv_table(path: Path) -> str:
    rows = _csv_rows(path)
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


def _results_doc(folder: Path) -> dict[str, Any]:
    try:
        return dict(json.loads((folder / "results.json").read_text()))
    except (OSError, ValueError) as exc:
        log.warning("unreadable %s: %s", folder / "results.json", exc)
        return {}


def build_section(folder: Path, root: Path, anchor: str, reference: Reference | None
                  ) -> Section:
    kind = kind_of(folder)
    rel = folder.relative_to(root)
    title = f"{kind}: {rel}" if str(rel) != "." else kind
    meta = read_meta(folder)
    section = Section(title=title, kind=kind, anchor=anchor,
                      provenance=provenance_rows(folder, meta))
    drawn: set[str] = set()
    found: list[figures.Figure] = []
    summary = folder / "summary.md"
    if summary.is_file():
        section.add_table(to_html(summary.read_text()))
    if kind == "chaos":
        doc = json.loads((folder / "report.json").read_text())
        flat = _flat(doc)
        section.finding = generic_finding(title, anchor, [
            f"{k} {v}" for k, v in flat if k in ("lost", "duplicates", "verify_ok")], meta)
        section.add_table(table(["field", "value"], [list(r) for r in flat]))
    elif kind == "spark sweep":
        rows = _csv_rows(folder / "sweep.csv")
        section.finding = generic_finding(title, anchor, [
            f"{max(len(rows) - 1, 0)} rows of sweep.csv: {', '.join(rows[0]) if rows else ''}"],
            meta)
        section.add_table(_csv_table(folder / "sweep.csv"))
    elif (folder / "results.json").is_file():
        doc = _results_doc(folder)
        if kind == "compare":
            section.finding = compare_finding(title, anchor, doc, meta, reference)
            found, drawn = figures.compare_figures(folder, doc)
        elif kind == "herd":
            section.finding = herd_finding(title, anchor, doc, meta)
            found, drawn = figures.herd_figures(doc)
        elif kind == "split brain (zombie)":
            section.finding = zombie_finding(title, anchor, doc, meta)
            found, drawn = figures.zombie_figures(folder, doc)
    for fig in found:
        section.add_figure(fig)
    for other in sorted(folder.glob("*.csv")):
        if other.name != "sweep.csv":
            section.add_table(f"<h4>{html.escape(other.name)}</h4>" + _csv_table(other))
    for image in sorted([*folder.glob("*.png"), *folder.glob("*.svg")]):
        if image.name not in drawn:
            section.add_figure(figures.lab_image(image))
    if section.finding is None:
        section.finding = generic_finding(title, anchor, [], meta)
    return section
