"""Generated blocks inside hand-written markdown.

A block is the text between ``<!-- generated: NAME -->`` and ``<!-- /generated: NAME -->``; the
prose around it stays the author's. Pure text functions: the figure registry decides contents.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from zkconsumer.errors import ZkConsumerError

_OPEN = re.compile(r"<!-- generated: ([A-Za-z0-9_.\-/]+) -->\n")


class BlockError(ZkConsumerError):
    """A malformed generated block (unclosed, nested or unknown)."""


@dataclass(frozen=True)
class Block:
    name: str
    start: int  # offset of the first character after the opening marker's newline
    end: int    # offset of the closing marker


def closing(name: str) -> str:
    return f"<!-- /generated: {name} -->"


def opening(name: str) -> str:
    return f"<!-- generated: {name} -->"


def find_blocks(text: str, where: str = "<text>") -> list[Block]:
    blocks: list[Block] = []
    pos = 0
    while (m := _OPEN.search(text, pos)) is not None:
        name = m.group(1)
        end = text.find(closing(name), m.end())
        if end < 0:
            raise BlockError(f"{where}: generated block {name!r} is never closed")
        inner = _OPEN.search(text, m.end(), end)
        if inner is not None:
            raise BlockError(f"{where}: generated block {inner.group(1)!r} opens inside {name!r}")
        blocks.append(Block(name, m.end(), end))
        pos = end
    return blocks


def replace_blocks(text: str, render: Callable[[str], str], where: str = "<text>") -> str:
    """``text`` with every block's body replaced by ``render(name)`` (ending in one newline)."""
    out: list[str] = []
    pos = 0
    for block in find_blocks(text, where):
        body = render(block.name).rstrip("\n") + "\n"
        out.append(text[pos:block.start])
        out.append(body)
        pos = block.end
    out.append(text[pos:])
    return "".join(out)
