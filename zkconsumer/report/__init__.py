"""``zkconsumer report DIR``: one self-contained HTML page for any lab output folder.

Every artefact the lab writes (compare, herd, split brain, chaos, Spark sweeps, validation) is
found by its file names. The page opens with its findings (one line per experiment: the key
numbers and their caveats: how many runs, side by side on how many cores, which broker and what
its coordinator is known to distort), then a section per folder with the provenance (revision,
date, versions, command), the summary and figures drawn for the page's width with captions
that say what is plotted and from which instant time counts. Plots are inlined (SVG text or PNG
data), so the page opens anywhere without a network; only doc references link out, to the
checkout's docs/.
"""

from zkconsumer.report.page import build_report, write_report

__all__ = ["build_report", "write_report"]
