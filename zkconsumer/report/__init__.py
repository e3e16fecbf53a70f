"""``zkconsumer report DIR``: one self-contained HTML page for any lab output folder.

Every artefact the lab writes (compare, herd, split brain, chaos, Spark sweeps, validation) is
found by its file names, shown with the command, revision and broker that produced it, and its
plots are inlined (SVG text or PNG data), so the page opens anywhere without a network.
"""

from zkconsumer.report.page import build_report, write_report

__all__ = ["build_report", "write_report"]
