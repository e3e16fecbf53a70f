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
    lines = ["| leave | partitions owned | wake ms | shutdown ms | registration gone ms |",
             "|---|---|---|---|---|"]
    for i, s in enumerate(leaves, 1):
        gone = "—" if s["gone_ms"] is None else f"{s['gone_ms']:.1f}"
        lines.append(f"| {i} | {s['partitions']} | {s['wake_ms']:.1f} | {s['shutdown_ms']:.1f} "
                     f"| {gone} |")
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


def _scores(ctx: Context) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for d in sorted((ctx.results / SCALE).glob("validation-*")):
        if (d / "score.json").is_file():
            out.append((d.name, _json(d / "score.json")))
    return out


def _flags(c: dict[str, Any]) -> str:
    if c["ok"]:
        return "pass"
    return "".join(f for f, ok in (("R", c["requests_ok"]), ("A", c["attempts_ok"]),
                                   ("T", c["tts_ok"])) if not ok)


@figure("scale-validation-compare", source=f"results/{SCALE}/validation-*")
def scorings(ctx: Context) -> str:
    scores = _scores(ctx)
    names = [n for n, _ in scores]
    by_cell: dict[tuple[Any, ...], dict[str, str]] = defaultdict(dict)
    for name, score in scores:
        for c in score["checks"]:
            by_cell[tuple(c[k] for k in CELL)][name] = _flags(c)
    lines = ["| protocol | N | P | event | " + " | ".join(f"`{n}`" for n in names) + " |",
             "|---|---|---|---|" + "---|" * len(names)]
    for cell in sorted(by_cell):
        lines.append("| " + " | ".join(str(x) for x in cell) + " | "
                     + " | ".join(by_cell[cell].get(n, "—") for n in names) + " |")
    totals = ", ".join(f"`{n}`: {sum(c['ok'] for c in s['checks'])} of {len(s['checks'])} "
                       f"(calibration: {s['calibration_source'].split(' against ')[0]})"
                       for n, s in scores)
    lines += ["", f"Cells within tolerance: {totals}. R, A, T: requests, attempts, time to "
              "stable out of tolerance."]
    return "\n".join(lines)


@figure("scale-request-types", source=f"results/{TYPES}/request-types.csv")
def request_types(ctx: Context) -> str:
    path = ctx.results / TYPES / "request-types.csv"
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    counts: dict[tuple[Any, ...], dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    counted: dict[str, bool] = {}
    for r in rows:
        cell = (r["protocol"], int(r["members"]), int(r["partitions"]), r["event"])
        counts[cell][r["request"]].append(int(r["count"]))
        counted[r["request"]] = r["counted"] == "True"
    prov = read_provenance(path.parent)
    lines = [f"Medians over each cell's real runs (`{path.relative_to(ctx.results.parent)}`: "
             f"`{prov.command}` at revision `{prov.short_revision}`, {prov.date}; the raw "
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
