"""The figure registry: one renderer per generated block, and the command that applies them all.

A renderer reads committed raw results (``results/``) and returns the block's markdown; it may
also draw plots, written as SVG under ``docs/figures/`` so that the same data and library give the
same bytes. Renderers live in :mod:`zkconsumer.results.figures`, one module per area, each calling
:func:`figure` at import; :mod:`zkconsumer.results.regenerate` imports every one of them by name
and applies them to the docs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from zkconsumer.results.blocks import BlockError

Renderer = Callable[["Context"], str]


@dataclass(frozen=True)
class Context:
    """Where a renderer reads raw results and writes plots."""

    results: Path  # the repository's results/ folder
    figures: Path  # docs/figures/, for plots the block links to

    def plot_link(self, name: str) -> str:
        return f"figures/{name}"


@dataclass(frozen=True)
class Figure:
    name: str
    render: Renderer
    source: str  # the results/ sub-folder it is computed from, for the reader


_FIGURES: dict[str, Figure] = {}


def figure(name: str, source: str) -> Callable[[Renderer], Renderer]:
    """Register ``fn`` as the renderer of the generated block ``name``."""

    def wrap(fn: Renderer) -> Renderer:
        if name in _FIGURES and _FIGURES[name].render is not fn:
            raise BlockError(f"two renderers for the generated block {name!r}")
        _FIGURES[name] = Figure(name, fn, source)
        return fn

    return wrap


def registered() -> dict[str, Figure]:
    """The renderers registered so far, by block name."""
    return dict(_FIGURES)
