"""Assemble the sections into one HTML page with inline style and no external reference."""

from __future__ import annotations

import html
from datetime import datetime, timezone
from pathlib import Path

from zkconsumer.report.markdown import table
from zkconsumer.report.sections import Section, build_section, result_folders

STYLE = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:.8em 0;font-size:.85em}
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}
th{background:#f3f3f3} td:first-child,th:first-child{text-align:left}
figure{margin:1em 0} figure svg,figure img{max-width:100%;height:auto}
figcaption{font-size:.85em;color:#555} code,pre{background:#f6f6f6}
pre{padding:.6em;overflow-x:auto} section{border-top:2px solid #ddd;margin-top:2em}
.prov td{text-align:left;font-family:monospace}
"""


def _section_html(s: Section, anchor: str) -> str:
    prov = table(["", ""], [[k, v] for k, v in s.provenance]).replace("<table>",
                                                                    '<table class="prov">', 1)
    return "\n".join([f'<section id="{anchor}"><h2>{html.escape(s.title)}</h2>', prov,
                      *s.blocks, "</section>"])


def build_report(root: Path) -> tuple[str, list[Section]]:
    """The page's HTML and its sections; an empty folder gives a page that says so."""
    folders = result_folders(root)
    sections = [build_section(f, root) for f in folders]
    toc = "".join(f'<li><a href="#s{i}">{html.escape(s.title)}</a></li>'
                  for i, s in enumerate(sections))
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body = [f"<h1>zkconsumer lab report: {html.escape(root.name or str(root))}</h1>",
            f"<p>{len(sections)} result folder(s) under <code>{html.escape(str(root))}</code>, "
            f"built {when}.</p>"]
    if sections:
        body.append(f"<ul>{toc}</ul>")
    else:
        body.append("<p>No lab results found (results.json, report.json, sweep.csv or "
                    "summary.md).</p>")
    body += [_section_html(s, f"s{i}") for i, s in enumerate(sections)]
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>zkconsumer report: {html.escape(root.name)}</title><style>{STYLE}</style>"
            "</head><body>\n" + "\n".join(body) + "\n</body></html>\n")
    return page, sections


def write_report(root: Path, out: Path | None = None) -> Path:
    page, _ = build_report(root)
    target = out or root / "report.html"
    target.write_text(page, encoding="utf-8")
    return target
