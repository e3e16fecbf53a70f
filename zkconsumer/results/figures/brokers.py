"""docs/brokers.md: the lab's compare on Tansu and on Apache Kafka 0.10.2, side by side.

Source: ``results/brokers/compare-<broker>/`` (``runs.csv`` + ``meta.json``), written by
``benchmarks/era_compare.py``. Each cell gives the median over the repeats of one (protocol,
event) on one broker; unsupported runs show the reason the lab recorded. A
``results/brokers/static-<broker>/`` folder (the same script on ``--protocols static-range``)
holds a later verdict on static membership for that broker: its rows replace the compare
folder's ``static-range`` rows, and both folders are listed in the provenance table.
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

from zkconsumer.results.figures.brokers_era import provenance_table
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure

SOURCE = "results/brokers"
COLUMNS = (("time_to_stable_s", "stable s"), ("partition_seconds_unavailable", "part·s unavail."),
           ("members_paused", "paused"), ("coordination_requests", "coord. reqs"),
           ("group_rebalances", "group rebal."), ("duplicates", "dups"), ("lost", "lost"))
EVENT_ORDER = ("join", "leave", "crash")
# The runs.csv columns benchmarks/era_compare.py writes (the renderer reads these).
FIELDS_FOR_TESTS = ("protocol", "event", "repeat", "status", *(m for m, _ in COLUMNS), "reason")


def broker_folders(results: Path) -> list[Path]:
    """Compare folders, Tansu first, then Apache Kafka by version (the original's own run,
    ``compare-original-*``, has its page: docs/original.md)."""
    folders = [p for p in sorted((results / "brokers").glob("compare-*"))
               if (p / "runs.csv").is_file() and (p / "meta.json").is_file()
               and not p.name.startswith("compare-original-")]
    return sorted(folders, key=lambda p: (not p.name.startswith("compare-tansu"), p.name))


def static_folders(results: Path) -> dict[str, Path]:
    """Broker name -> its later static-membership verdict folder."""
    return {read_provenance(p).broker: p for p in sorted((results / "brokers").glob("static-*"))
            if (p / "runs.csv").is_file() and (p / "meta.json").is_file()}


def with_static_verdict(rows: list[dict[str, str]], static: Path | None) -> list[dict[str, str]]:
    if static is None:
        return rows
    return ([r for r in rows if r["protocol"] != "static-range"]
            + [r for r in read_runs(static) if r["protocol"] == "static-range"])


def read_runs(folder: Path) -> list[dict[str, str]]:
    with open(folder / "runs.csv", newline="") as f:
        return list(csv.DictReader(f))


def median_cell(rows: list[dict[str, str]], metric: str) -> str:
    values = [float(r[metric]) for r in rows if r["status"] == "ok" and r[metric] != ""]
    if not values:
        return "—"
    m = statistics.median(values)
    return f"{m:.2f}" if metric.endswith("_s") or metric.startswith("partition_") else f"{m:g}"


def compare_table(folders: list[Path], static: dict[str, Path] | None = None) -> str:
    names = [read_provenance(f).broker for f in folders]
    runs = {name: with_static_verdict(read_runs(f), (static or {}).get(name))
            for name, f in zip(names, folders, strict=True)}
    keys = sorted({(r["protocol"], r["event"]) for rs in runs.values() for r in rs},
                  key=lambda k: (EVENT_ORDER.index(k[1]) if k[1] in EVENT_ORDER else 9, k[0]))
    head = "| event | protocol | broker | n | " + " | ".join(c for _, c in COLUMNS) + " |"
    lines = [head, "|" + "---|" * (4 + len(COLUMNS))]
    notes: dict[str, str] = {}
    for protocol, event in keys:
        for name in names:
            rows = [r for r in runs[name] if (r["protocol"], r["event"]) == (protocol, event)]
            if not rows:
                continue
            ok = sum(r["status"] == "ok" for r in rows)
            if ok == 0:
                reason = next((r["reason"] for r in rows if r["reason"]), rows[0]["status"])
                notes.setdefault(f"{protocol} on {name}", reason)
                cells = [f"**{rows[0]['status']}**"] + [""] * (len(COLUMNS) - 1)
            else:
                cells = [median_cell(rows, m) for m, _ in COLUMNS]
            lines.append(f"| {event} | {protocol} | {name} | {ok}/{len(rows)} | "
                         + " | ".join(cells) + " |")
    out = "\n".join(lines)
    if notes:
        out += "\n\n" + "\n".join(f"- {k}: {v}" for k, v in sorted(notes.items()))
    return out


@figure("brokers-compare", source=SOURCE)
def render_compare(ctx: Context) -> str:
    folders = broker_folders(ctx.results)
    if not folders:
        return "(no results under results/brokers yet: run benchmarks/era_compare.py)"
    return compare_table(folders, static_folders(ctx.results))


@figure("brokers-provenance", source=SOURCE)
def render_provenance(ctx: Context) -> str:
    folders = broker_folders(ctx.results) + list(static_folders(ctx.results).values())
    return provenance_table(ctx.results, folders).rstrip("\n")
