"""Summary tables: rich on a terminal, the markdown itself anywhere else."""

from __future__ import annotations

import io

from zkconsumer.cli.console import show

TABLE = "title\n\n| protocol | stable s |\n|---|---|\n| zk-range | 1.05 |\n| eager-range | 4.01 |\n"


def test_off_a_terminal_the_markdown_is_printed_unchanged() -> None:
    out = io.StringIO()
    show(TABLE, out)
    assert out.getvalue() == TABLE


def test_on_a_terminal_the_table_is_drawn_with_aligned_columns() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    show(TABLE, out)
    text = out.getvalue()
    assert "|---|" not in text and "title" in text
    rows = [line for line in text.splitlines() if "zk-range" in line or "eager-range" in line]
    assert len(rows) == 2
    # right-aligned numbers end in the same column
    plain = [__import__("re").sub(r"\x1b\[[0-9;]*m", "", r) for r in rows]
    assert plain[0].index("1.05") + 4 == plain[1].index("4.01") + 4
