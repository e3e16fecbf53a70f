"""Results as data: committed raw results with their provenance, and the figures built from them.

Every table and plot in ``docs/`` is computed from a folder under ``results/`` (the repository's
top level) by a renderer registered in :mod:`zkconsumer.results.figures`; ``zkconsumer figures``
rewrites the marked blocks of the docs, and ``zkconsumer figures --check`` fails when a committed
doc differs from what the committed data gives. A measured number is never typed into a doc.
"""

from zkconsumer.results.blocks import Block, find_blocks, replace_blocks
from zkconsumer.results.provenance import Provenance, capture, read_provenance, write_provenance

__all__ = ["Block", "Provenance", "capture", "find_blocks", "read_provenance", "replace_blocks",
           "write_provenance"]
