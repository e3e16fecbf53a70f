"""The docs' generated blocks equal what the committed results give, and the block rules hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from zkconsumer.results.blocks import BlockError, find_blocks, replace_blocks
from zkconsumer.results.regenerate import RENDERER_MODULES, all_figures, regenerate

REPO = Path(__file__).resolve().parents[2]


def test_every_generated_block_in_docs_matches_the_committed_results() -> None:
    stale = [o for o in regenerate(REPO, check=True) if o.changed]
    assert not stale, "stale docs; run `make figures`:\n" + "".join(o.diff for o in stale)


def test_every_block_in_docs_has_a_renderer() -> None:
    names = set(all_figures())
    for doc in sorted((REPO / "docs").rglob("*.md")):
        for block in find_blocks(doc.read_text(), str(doc)):
            assert block.name in names, f"{doc}: {block.name}"


def test_every_module_with_a_renderer_is_imported_by_name() -> None:
    """A renderer module missing from RENDERER_MODULES would never register its blocks."""
    listed = {m.__name__.rpartition(".")[2] for m in RENDERER_MODULES}
    with_renderers = {p.stem for p in (REPO / "zkconsumer/results/figures").glob("*.py")
                      if "@figure(" in p.read_text()}
    assert listed == with_renderers


def test_replace_keeps_the_prose_and_swaps_only_the_body() -> None:
    text = ("intro\n<!-- generated: t -->\nold 1\nold 2\n<!-- /generated: t -->\nafter\n"
            "<!-- generated: u -->\n<!-- /generated: u -->\n")
    new = replace_blocks(text, lambda name: f"| {name} |")
    assert new == ("intro\n<!-- generated: t -->\n| t |\n<!-- /generated: t -->\nafter\n"
                   "<!-- generated: u -->\n| u |\n<!-- /generated: u -->\n")


def test_an_unclosed_block_is_an_error_naming_it() -> None:
    with pytest.raises(BlockError, match="'t' is never closed"):
        find_blocks("<!-- generated: t -->\nbody\n", "doc.md")


def test_a_block_opened_inside_another_is_an_error() -> None:
    text = "<!-- generated: a -->\n<!-- generated: b -->\n<!-- /generated: a -->\n"
    with pytest.raises(BlockError, match="'b' opens inside 'a'"):
        find_blocks(text, "doc.md")


def test_provenance_records_command_revision_and_machine(tmp_path: Path) -> None:
    import json
    import os
    import subprocess

    from zkconsumer.results import capture, read_provenance, write_provenance

    write_provenance(tmp_path, capture("zkconsumer experiment x --seed 1", broker="tansu-0.6.0"))
    meta = json.loads((tmp_path / "meta.json").read_text())
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True,
                          text=True).stdout.strip()
    assert meta["revision"].removesuffix("-dirty") == head
    assert meta["machine"]["cores"] == os.cpu_count()
    assert len(meta["machine"]["loadavg"]) == 3 and len(meta["machine"]["loadavg_end"]) == 3
    assert read_provenance(tmp_path).command == "zkconsumer experiment x --seed 1"
    assert read_provenance(tmp_path).broker == "tansu-0.6.0"


def test_the_conditions_phrase_names_every_fact_and_marks_what_was_not_recorded() -> None:
    from zkconsumer.results import Provenance

    prov = Provenance(command="c", revision="0123456789abcdef", date="2026-11-25T10:00:00Z",
                      machine={"cores": 2, "python": "3.11.7", "loadavg": [1.5, 2.0, 3.25]},
                      broker="apache-kafka-0.10.2.2")
    assert prov.conditions() == (
        "2026-11-25T10:00:00Z, revision `0123456789ab`, 2 cores, Python 3.11.7, load average "
        "(1/5/15 min) 1.5 / 2.0 / 3.25 at the start and ? at the end, broker "
        "apache-kafka-0.10.2.2")
    assert Provenance("c", "r", "d", {}).conditions().endswith("? at the end, broker none")


def test_a_dirty_revision_stays_visible_when_shortened() -> None:
    from zkconsumer.results.provenance import short_revision

    assert short_revision("0123456789abcdef0123-dirty") == "0123456789ab-dirty"
    assert short_revision("0123456789abcdef0123") == "0123456789ab"
