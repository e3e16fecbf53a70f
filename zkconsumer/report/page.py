"""Assemble the sections into one HTML page with inline style and no external reference.

The page opens with the findings (one line per experiment, its key numbers and caveats), then
a section per result folder: its provenance, its summary and its figures. References to
``docs/*.md`` become relative links to the docs folder of the checkout this package runs from
(``../docs/comparison.md`` for the demo's ``./demo-out``, the same path as in the repository's
tree); an installed package without that folder leaves them as text naming the repository's
file. Host:port pairs lose their port: the servers are gone and the ports were ephemeral.
"""

from __future__ import annotations

import html
import os
import re
from datetime import datetime, timezone
from pathlib import Path

from zkconsumer.report.findings import Finding
from zkconsumer.report.markdown import table
from zkconsumer.report.meta import drop_ports
from zkconsumer.report.reference import kafka_reference, repository_docs
from zkconsumer.report.sections import Section, build_section, result_folders

STYLE = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;
color:#222;line-height:1.4}
table{border-collapse:collapse;margin:.8em 0;font-size:.85em}
.scroll{overflow-x:auto;max-width:100%}
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}
th{background:#f3f3f3} td:first-child,th:first-child{text-align:left}
figure{margin:1.2em 0} figure svg{width:100%;height:auto;display:block}
figure img{max-width:100%;height:auto}
figcaption{font-size:.9em;color:#444;margin-top:.3em} code,pre{background:#f6f6f6}
pre{padding:.6em;overflow-x:auto} section{border-top:2px solid #ddd;margin-top:2em}
.prov td{text-align:left} .prov td:last-child{font-family:monospace;word-break:break-all}
#findings{border:2px solid #4a7;background:#f3faf5;padding:.4em 1.2em;margin:1em 0}
#findings li{margin:.5em 0} #findings .caveats{color:#555;font-size:.92em}
"""
_DOC_REF = re.compile(r"(?<![\w/.-])docs/([\w-]+\.md)\b")
_SVG = re.compile(r"(<svg\b.*?</svg>|<img\b[^>]*>)", re.DOTALL)


def docs_base(page_dir: Path) -> str | None:
    """Where ``docs/`` is from the page's folder, as a relative link; None without docs."""
    docs = repository_docs()
    if docs is None:
        return None
    return Path(os.path.relpath(docs, page_dir.resolve())).as_posix()


def link_docs(page: str, base: str | None) -> str:
    """``docs/NAME.md`` in the text (not inside figures) as a link to ``base/NAME.md``."""
    if base is None:
        return page

    def link(m: re.Match[str]) -> str:
        return f'<a href="{html.escape(base)}/{m.group(1)}">docs/{m.group(1)}</a>'

    parts = _SVG.split(page)
    return "".join(p if i % 2 else _DOC_REF.sub(link, p) for i, p in enumerate(parts))


def scrolling(fragment: str) -> str:
    """Every table in a box that scrolls sideways, so a wide table never widens the page."""
    return fragment.replace("<table", '<div class="scroll"><table').replace(
        "</table>", "</table></div>")


def findings_html(findings: list[Finding]) -> str:
    items = []
    for f in findings:
        numbers = "; ".join(html.escape(n) for n in f.numbers)
        caveats = "; ".join(html.escape(c) for c in f.caveats)
        items.append(f'<li><a href="#{f.anchor}"><strong>{html.escape(f.title)}</strong></a>: '
                     f'{numbers}.<br><span class="caveats">Caveats: {caveats}.</span></li>')
    return ('<aside id="findings"><h2>Findings</h2><ul>' + "".join(items) + "</ul></aside>")


def _section_html(s: Section) -> str:
    prov = table(None, [[k, v] for k, v in s.provenance]).replace(
        "<table>", '<table class="prov">', 1)
    return "\n".join([f'<section id="{s.anchor}"><h2>{html.escape(s.title)}</h2>', prov,
                      *s.blocks, "</section>"])


def build_report(root: Path, page_dir: Path | None = None) -> tuple[str, list[Section]]:
    """The page's HTML and its sections; an empty folder gives a page that says so.
    ``page_dir`` is where the page will be written (doc links are relative to it)."""
    folders = result_folders(root)
    reference = kafka_reference()
    sections = [build_section(f, root, f"s{i}", reference) for i, f in enumerate(folders)]
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    base = docs_base(page_dir or root)
    docs_note = ("references to docs/ link to this checkout's docs folder, relative to this "
                 "page" if base is not None else
                 "references to docs/ name files of the zkconsumer repository")
    body = [f"<h1>zkconsumer lab report: {html.escape(root.resolve().name)}</h1>",
            f"<p>{len(sections)} result folder(s), built {when}; {docs_note}.</p>"]
    if sections:
        body.append(findings_html([s.finding for s in sections if s.finding]))
    else:
        body.append("<p>No lab results found (results.json, report.json, sweep.csv or "
                    "summary.md).</p>")
    body += [scrolling(_section_html(s)) for s in sections]
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>zkconsumer report: {html.escape(root.resolve().name)}</title>"
            f"<style>{STYLE}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
    return link_docs(drop_ports(page), base), sections


def write_report(root: Path, out: Path | None = None) -> Path:
    target = out or root / "report.html"
    page, _ = build_report(root, target.parent)
    target.write_text(page, encoding="utf-8")
    return target
