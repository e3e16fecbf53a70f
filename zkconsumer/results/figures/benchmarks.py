"""docs/benchmarks.md: assignor timings, consumption throughput and simulator speed.

Each from a ``benchmarks/*.py --results DIR`` run committed under ``results/benchmarks/``.
Throughput is judged by the median of the per-round ratios connector / bare (the rounds run
side by side, so a swing of the machine's load hits both); best-of is shown as an extra.
"""

from __future__ import annotations

import csv
import json
import statistics
from collections import defaultdict
from pathlib import Path

from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure

ASSIGNORS = "benchmarks/assignors"
THROUGHPUT = "benchmarks/throughput"
SIM = "benchmarks/sim-speed"


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def provenance(folder: Path, source: str) -> str:
    meta = read_provenance(folder)
    m = meta.machine
    load = " / ".join(map(str, m.get("loadavg") or []))
    load_end = " / ".join(map(str, m.get("loadavg_end") or []))
    return (f"Measured {meta.date} at revision `{meta.revision[:12]}`, {m.get('cores')} cores, "
            f"Python {m.get('python')}, load average (1/5/15 min) {load} at the start and "
            f"{load_end} at the end; raw data `results/{source}/`. Reproduce with "
            f"`{meta.command}`.")


def _missing(ctx: Context, source: str, name: str) -> str | None:
    if not (ctx.results / source / name).exists():
        return f"No committed run yet (`results/{source}/`).\n"
    return None


@figure("benchmarks/assignors", source=ASSIGNORS)
def assignors(ctx: Context) -> str:
    if (msg := _missing(ctx, ASSIGNORS, "times.csv")) is not None:
        return msg
    folder = ctx.results / ASSIGNORS
    rows = _rows(folder / "times.csv")
    base = {(r["members"], r["partitions"], r["subscriptions"]): float(r["best_s"])
            for r in rows if r["strategy"] == "range" and r["best_s"]}
    lines = [provenance(folder, ASSIGNORS), "",
             "| members | partitions | subscriptions | strategy | best of | time (ms) "
             "| vs range |", "|---:|---:|---|---|---:|---:|---:|"]
    targets = []
    for r in rows:
        key = (r["members"], r["partitions"], r["subscriptions"])
        if not r["best_s"]:
            lines.append(f"| {r['members']} | {r['partitions']} | {r['subscriptions']} | "
                         f"{r['strategy']} | {r['repeats']} | refused | - |")
            continue
        t = float(r["best_s"])
        ratio = t / base[key] if base.get(key) else None
        lines.append(f"| {r['members']} | {r['partitions']} | {r['subscriptions']} | "
                     f"{r['strategy']} | {r['repeats']} | {t * 1000:.2f} | "
                     f"{'-' if ratio is None else f'{ratio:.2f}x'} |")
        if key == ("1000", "10000", "identical") and "sticky" in r["strategy"]:
            met = t < 2.0 and ratio is not None and ratio <= 20.0
            targets.append(f"`{r['strategy']}` {t * 1000:.0f} ms ({ratio:.2f}x range): "
                           f"{'met' if met else '**missed**'}")
    if targets:
        lines += ["", "Target (sticky and cooperative-sticky at 1,000 members and 10,000 "
                  "partitions, identical subscriptions: under 2 s and within 20x of `range`): "
                  + "; ".join(targets) + "."]
    return "\n".join(lines) + "\n"


@figure("benchmarks/throughput", source=THROUGHPUT)
def throughput(ctx: Context) -> str:
    if (msg := _missing(ctx, THROUGHPUT, "rounds.csv")) is not None:
        return msg
    folder = ctx.results / THROUGHPUT
    summary = json.loads((folder / "summary.json").read_text())
    n = int(summary["messages"])
    rounds: dict[int, dict[str, tuple[float, float, float]]] = defaultdict(dict)
    for r in _rows(folder / "rounds.csv"):
        rounds[int(r["round"])][r["path"]] = (float(r["steady_s"]), float(r["end_to_end_s"]),
                                              float(r["cpu_s"]))
    paths = list(dict.fromkeys(p for rr in rounds.values() for p in rr))
    conn = summary["connector_path"]
    others = [p for p in paths if p not in ("bare",)]
    head = ["round", *[f"{p} (msgs/s)" for p in paths], *[f"{p} / bare" for p in others],
            "CPU µs/msg bare", f"CPU µs/msg {conn}"]
    lines = [provenance(folder, THROUGHPUT), "",
             f"{n:,} values of {summary['value_bytes']} B in {summary['partitions']} "
             f"partitions, {summary['rounds']} rounds; records built by "
             f"{'the C extension' if summary['c_extension'] else 'pure Python'} in "
             f"`{conn}`" + (" and pure Python in `conn-py`" if "conn-py" in paths else "")
             + "; steady rates (first to last message).", "",
             "| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    ratios: dict[str, list[float]] = defaultdict(list)
    cpu_ratio: list[float] = []
    for i in sorted(rounds):
        rr = rounds[i]
        bare = rr["bare"][0]
        cells = [str(i), *[f"{n / rr[p][0]:,.0f}" for p in paths]]
        for p in others:
            ratios[p].append(bare / rr[p][0])
            cells.append(f"{bare / rr[p][0]:.2f}")
        cells += [f"{rr['bare'][2] / n * 1e6:.2f}", f"{rr[conn][2] / n * 1e6:.2f}"]
        cpu_ratio.append(rr["bare"][2] / rr[conn][2])
        lines.append("| " + " | ".join(cells) + " |")
    median = statistics.median(ratios[conn])
    target = float(summary["target"])
    best = {p: min(rounds[i][p][0] for i in rounds) for p in paths}
    lines += ["", f"**{conn} / bare, median of the per-round ratios: {median:.2f}** "
              f"(target ≥ {target:.2f}: {'met' if median >= target else '**not met**'})"
              + (f"; pure Python (`conn-py`): {statistics.median(ratios['conn-py']):.2f}"
                 if "conn-py" in ratios else "")
              + f". CPU per message bare / {conn}, median of the per-round ratios: "
              f"{statistics.median(cpu_ratio):.2f}. Extra, best round of each path: "
              f"{conn} / bare {best['bare'] / best[conn]:.2f}."]
    return "\n".join(lines) + "\n"


@figure("benchmarks/sim-speed", source=SIM)
def sim_speed(ctx: Context) -> str:
    if (msg := _missing(ctx, SIM, "speed.csv")) is not None:
        return msg
    folder = ctx.results / SIM
    lines = [provenance(folder, SIM), "",
             "| run | protocol | N | P | configurations | wall s | CPU s | requests simulated "
             "| events | target |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in _rows(folder / "speed.csv"):
        big = r["run"] == "big-join"
        target = ("CPU < 60 s: " + ("met" if float(r["cpu_s"]) < 60 else "**missed**")
                  if big else "< 15 min: " + ("met" if float(r["wall_s"]) < 900
                                              else "**missed**"))
        cpu = f"{float(r['cpu_s']):.2f}" if r["cpu_s"] else ""
        lines.append(f"| {r['run']} | {r['protocol']} | {_num(r['members'])} | "
                     f"{_num(r['partitions'])} | {r['configs']} | {float(r['wall_s']):.2f} | "
                     f"{cpu} | {_num(r['requests'])} | {_num(r['events'])} | {target} |")
    return "\n".join(lines) + "\n"


def _num(text: str) -> str:
    return f"{int(text):,}" if text not in ("", "0") else ""
