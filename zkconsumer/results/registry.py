"""The figure registry: one renderer per generated block, and the command that applies them all.

A renderer reads committed raw results (``results/``) and returns the block's markdown; it may
also draw plots, written as SVG under ``docs/figures/`` so that the same data and library give the
same bytes. Renderers live in :mod:`zkconsumer.results.figures`, one module per area, each calling
:func:`figure` at import; every module of that package is imported by :func:`all_figures`.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from zkconsumer.results.blocks import BlockError, find_blocks, replace_blocks

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


def all_figures() -> dict[str, Figure]:
    from zkconsumer.results import figures as package

    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")
    return dict(_FIGURES)


@dataclass(frozen=True)
class Outcome:
    doc: Path
    changed: bool
    diff: str


def regenerate(repo: Path, check: bool = False) -> list[Outcome]:
    """Rewrite (or, with ``check``, compare) every generated block of ``repo/docs/**/*.md``.

    In check mode plots are drawn into a scratch folder, so checking never touches the tree.
    """
    import tempfile

    figures = all_figures()
    docs = repo / "docs"
    scratch = Path(tempfile.mkdtemp(prefix="zkc-figures-")) if check else None
    ctx = Context(results=repo / "results", figures=scratch or docs / "figures")
    ctx.figures.mkdir(parents=True, exist_ok=True)
    outcomes: list[Outcome] = []
    for doc in sorted(docs.rglob("*.md")):
        text = doc.read_text()
        if not find_blocks(text, str(doc)):
            continue

        def render(name: str, _doc: Path = doc) -> str:
            fig = figures.get(name)
            if fig is None:
                raise BlockError(f"{_doc}: no renderer for the generated block {name!r}")
            return fig.render(ctx)

        new = replace_blocks(text, render, str(doc))
        diff = "".join(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                            str(doc), f"{doc} (from results/)"))
        if new != text and not check:
            doc.write_text(new)
        outcomes.append(Outcome(doc, new != text, diff))
    return outcomes
