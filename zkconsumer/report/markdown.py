"""The subset of markdown the lab's summaries use, as HTML: headings, paragraphs, lists, code
blocks, pipe tables, inline code and bold. Everything is escaped; the page adds the only links
(references to docs/)."""

from __future__ import annotations

import html
import re

_INLINE_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")


def inline(text: str) -> str:
    out = html.escape(text, quote=False)
    out = _INLINE_CODE.sub(lambda m: f"<code>{m.group(1)}</code>", out)
    return _BOLD.sub(lambda m: f"<strong>{m.group(1)}</strong>", out)


def table(head: list[str] | None, rows: list[list[str]], raw: bool = False) -> str:
    """An HTML table (no header row when ``head`` is None); cells are escaped unless ``raw``
    (already HTML)."""
    cell = (lambda c: c) if raw else inline
    parts = ["<table>"]
    if head is not None:
        parts.append("<thead><tr>" + "".join(f"<th>{cell(h)}</th>" for h in head)
                     + "</tr></thead>")
    parts.append("<tbody>")
    parts += ["<tr>" + "".join(f"<td>{cell(c)}</td>" for c in row) + "</tr>" for row in rows]
    parts += ["</tbody>", "</table>"]
    return "\n".join(parts)


def _split_row(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def to_html(text: str) -> str:
    lines = text.splitlines()
    out: list[str] = []
    para: list[str] = []
    i = 0

    def flush() -> None:
        if para:
            out.append("<p>" + inline(" ".join(para)) + "</p>")
            para.clear()

    while i < len(lines):
        line = lines[i]
        if not line.strip():
            flush()
            i += 1
        elif line.startswith("#"):
            flush()
            level = min(len(line) - len(line.lstrip("#")) + 2, 6)  # the page owns h1/h2
            out.append(f"<h{level}>{inline(line.lstrip('#').strip())}</h{level}>")
            i += 1
        elif line.startswith("    ") or line.startswith("```"):
            flush()
            block: list[str] = []
            if line.startswith("```"):
                i += 1
                while i < len(lines) and not lines[i].startswith("```"):
                    block.append(lines[i])
                    i += 1
                i += 1
            else:
                while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                    block.append(lines[i][4:])
                    i += 1
            out.append("<pre><code>" + html.escape("\n".join(block).strip("\n")) + "</code></pre>")
        elif line.lstrip().startswith("|") and i + 1 < len(lines) \
                and set(lines[i + 1].replace("|", "").strip()) <= set("-: "):
            flush()
            head = _split_row(line)
            i += 2
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(_split_row(lines[i]))
                i += 1
            out.append(table(head, rows))
        elif re.match(r"^\s*[-*] ", line):
            flush()
            items = []
            while i < len(lines) and re.match(r"^\s*[-*] ", lines[i]):
                items.append("<li>" + inline(re.sub(r"^\s*[-*] ", "", lines[i])) + "</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
        else:
            para.append(line.strip())
            i += 1
    flush()
    return "\n".join(out)
