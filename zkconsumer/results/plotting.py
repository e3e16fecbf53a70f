"""Deterministic SVG plots for the docs: the same data and matplotlib give the same bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def pyplot() -> Any:
    """matplotlib's pyplot on the file-only backend, or an error naming the extra to install."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError("plots need matplotlib: pip install 'zkconsumer[lab]'") from None
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "zkconsumer"
    matplotlib.rcParams["svg.fonttype"] = "none"
    import matplotlib.pyplot as plt

    return plt


def save_svg(fig: Any, path: Path) -> Path:
    """Write ``fig`` without a date or tool version, then close it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="svg", metadata={"Date": None, "Creator": None})
    pyplot().close(fig)
    return path


def save_png(fig: Any, path: Path, *, title: str | None = None,
             rect: tuple[float, float, float, float] | None = None, dpi: int = 110,
             title_size: int = 9) -> Path:
    """The lab's PNG figures end alike: an optional title, a tight layout, saved, closed."""
    if title is not None:
        fig.suptitle(title, fontsize=title_size)
    fig.tight_layout(**({} if rect is None else {"rect": rect}))
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
    return path
