"""Tables on the console: drawn by ``rich`` on a terminal, plain markdown anywhere else.

The lab's summaries are markdown (they go into summary.md files and docs as they are); a person
at a terminal gets the same table with aligned columns, and a log or a pipe gets the markdown
unchanged so it can be pasted or parsed.
"""

from __future__ import annotations

import sys
from typing import TextIO


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _is_rule(line: str) -> bool:
    return line.lstrip().startswith("|") and set(line.replace("|", "").strip()) <= set("-: ")


def show(text: str, stream: TextIO | None = None) -> None:
    """Print ``text``; on a terminal its pipe tables become rich tables."""
    stream = stream or sys.stdout
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # a core install without the lab extra: the markdown is still a table
        Console = None  # noqa: N806
    if Console is None or not getattr(stream, "isatty", lambda: False)():
        stream.write(text if text.endswith("\n") else text + "\n")
        stream.flush()
        return

    console = Console(file=stream, force_terminal=True, highlight=False)
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("|") and i + 1 < len(lines) and _is_rule(lines[i + 1]):
            table = Table(show_lines=False)
            for head in _cells(lines[i]):
                table.add_column(head, justify="right" if head else "left", overflow="fold")
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                table.add_row(*_cells(lines[i]))
                i += 1
            console.print(table)
        else:
            console.print(lines[i], markup=False)
            i += 1
