"""docs/scale.md: the measured leave and spread, the scorings side by side, requests by type.

Reads committed files only:

* ``results/scale/calibration/measured.measurements.json`` (``zkconsumer calibrate``): the
  clean leaves and the durations ``jitter_cv`` is estimated from;
* ``results/scale/validation-*/score.json`` (``spark validate --json``): every scoring of the
  held-out runs;
* ``results/scale/validation-2/request-types.csv`` (``spark request-types``): the held-out
  runs' requests per type.
"""

from __future__ import annotations

import csv
import json
import logging
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from zkconsumer.results.figures.scale_findings import spread
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure

log = logging.getLogger(__name__)

SCALE = "scale"
CAL = f"{SCALE}/calibration"
TYPES = f"{SCALE}/validation-2"
CELL = ("protocol", "members", "partitions", "event")


def _json(path: Path) -> Any:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing (see zkconsumer/results/figures/scale_fit.py "
                                "for the command that writes it)")
    return json.loads(path.read_text())


@figure("scale-leave-jitter", source=f"results/{CAL}")
def leave_and_jitter(ctx: Context) -> str:
    raw = _json(ctx.results / CAL / "measured.measurements.json")
    cal = _json(ctx.results / CAL / "measured.json")
    leaves = raw["leaves"]
    gone = [x["gone_ms"] for x in leaves if x["gone_ms"] is not None]
    lines = ["| clean leaves | partitions owned | wake ms | shutdown ms | registration gone ms |",
             "|---|---|---|---|---|",
             f"| {len(leaves)} | {spread([x['partitions'] for x in leaves], 'g')} | "
             f"{spread([x['wake_ms'] for x in leaves], '.1f')} | "
             f"{spread([x['shutdown_ms'] for x in leaves], '.1f')} | "
             f"{spread(gone, '.1f') if gone else '—'} |",
             "", "Median (range) over the leaves; each leave is in "
             f"`results/{CAL}/measured.measurements.json`."]
    lines += ["", f"`leave_wake_ms` = {cal['leave_wake_ms']:g}, `leave_shutdown_ms` = "
              f"{cal['leave_shutdown_ms']:g} (the medians of {len(leaves)} leaves).", "",
              "| durations measured | samples | median ms | robust CV |", "|---|---|---|---|"]
    cvs = raw["jitter_cv_by_series"]
    for name, xs in sorted(raw["durations_ms"].items()):
        cv = f"{cvs[name]:.3f}" if name in cvs else "— (fewer than 4)"
        med = f"{statistics.median(xs):.3f}" if xs else "—"
        lines.append(f"| {name.replace('_', ' ')} | {len(xs)} | {med} | {cv} |")
    lines += ["", f"`jitter_cv` = {cal['jitter_cv']:g}: the median of the {len(cvs)} series' "
              "robust coefficients of variation."]
    return "\n".join(lines)


@figure("scale-request-types", source=f"results/{TYPES}/request-types.csv")
def request_types(ctx: Context) -> str:
    path = ctx.results / TYPES / "request-types.csv"
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    counts: dict[tuple[Any, ...], dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    counted: dict[str, bool] = {}
    seeds: dict[tuple[Any, ...], set[str]] = defaultdict(set)
    for r in rows:
        seeds[(r["protocol"], int(r["members"]), int(r["partitions"]), r["event"])].add(r["seed"])
        cell = (r["protocol"], int(r["members"]), int(r["partitions"]), r["event"])
        counts[cell][r["request"]].append(int(r["count"]))
        counted[r["request"]] = r["counted"] == "True"
    prov = read_provenance(path.parent)
    runs = sorted({len(s) for s in seeds.values()})
    n = f"{runs[0]} to {runs[-1]}" if runs[0] != runs[-1] else str(runs[0])
    lines = [f"Real runs only: median of {n} runs per cell "
             f"(`{path.relative_to(ctx.results.parent)}`; reproduce: `{prov.command}`; the raw "
             "records it reads are the runs' local output, not committed). Columns marked * "
             "are not in `coordination_requests` (offset commits); the counted columns of "
             "each run add up to its `coordination_requests` in the sweep (the command checks "
             "it).", ""]
    for family, test in (("broker", lambda p: p != "zk-range"), ("ZooKeeper",
                                                                  lambda p: p == "zk-range")):
        cells = sorted(c for c in counts if test(c[0]))
        types = sorted({t for c in cells for t in counts[c]}, key=lambda t: (not counted[t], t))
        if not cells:
            continue
        lines += [f"{family} protocols:", "",
                  "| protocol | N | P | event | " + " | ".join(
                      t + ("" if counted[t] else "*") for t in types) + " |",
                  "|---|---|---|---|" + "---|" * len(types)]
        for c in cells:
            vals = [counts[c].get(t) for t in types]
            lines.append("| " + " | ".join(str(x) for x in c) + " | " + " | ".join(
                "—" if not v else f"{statistics.median(v):g}" for v in vals) + " |")
        lines.append("")
    return "\n".join(lines).rstrip("\n")
