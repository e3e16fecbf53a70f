"""``zkconsumer figures``: apply every renderer to the generated blocks of ``docs/``.

The renderer modules are imported here by name (:data:`RENDERER_MODULES`); a new area's module
joins the list, and a generated block without a renderer fails :func:`regenerate`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from zkconsumer.results.blocks import BlockError, find_blocks, replace_blocks
from zkconsumer.results.figures import (
    benchmarks,
    brokers,
    brokers_era,
    comparison,
    comparison_kafka4,
    coverage_validation,
    draws_validation,
    fetcher_stop_validation,
    findings,
    findings_outcome,
    findings_splitbrain,
    findings_summary,
    findings_today,
    formation_original,
    formation_validation,
    herd200_validation,
    herd_ops,
    kip848_scale,
    kip848_validation,
    lab,
    migration,
    original,
    peers,
    peers_kill,
    placement,
    producer_validation,
    rank_validation,
    reliability,
    reliability_mixed,
    scale,
    scale_distributions,
    scale_findings,
    scale_fit,
    schedule_validation,
    settle_validation,
    speed_validation,
    splitbrain,
    splitbrain_findings,
    splitbrain_formation,
    splitbrain_validation,
    straggler_split,
    straggler_validation,
)
from zkconsumer.results.registry import Context, Figure, registered

# Each registers its blocks' renderers (zkconsumer.results.registry.figure) at import.
RENDERER_MODULES = (
    benchmarks,
    brokers,
    brokers_era,
    comparison,
    comparison_kafka4,
    coverage_validation,
    draws_validation,
    fetcher_stop_validation,
    findings,
    findings_outcome,
    findings_splitbrain,
    findings_summary,
    findings_today,
    formation_original,
    formation_validation,
    herd200_validation,
    herd_ops,
    kip848_scale,
    kip848_validation,
    lab,
    migration,
    original,
    peers,
    peers_kill,
    placement,
    producer_validation,
    rank_validation,
    reliability,
    reliability_mixed,
    scale,
    scale_distributions,
    scale_findings,
    scale_fit,
    schedule_validation,
    settle_validation,
    speed_validation,
    splitbrain,
    splitbrain_findings,
    splitbrain_formation,
    splitbrain_validation,
    straggler_split,
    straggler_validation,
)


def all_figures() -> dict[str, Figure]:
    """Every renderer, by block name (each module of :data:`RENDERER_MODULES` registered its
    own when it was imported)."""
    return registered()


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
