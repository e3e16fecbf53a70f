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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure

ASSIGNORS = "benchmarks/assignors"
THROUGHPUT = "benchmarks/throughput"
THROUGHPUT_BEFORE = "benchmarks/throughput-before"
INSTRUCTIONS = "benchmarks/throughput-callgrind"
SIM = "benchmarks/sim-speed"


@dataclass(frozen=True)
class Goal:
    """A benchmark's goal: ``value >= threshold`` (``at_least``) or ``value < threshold``.

    One rule for every block and every figure: the verdict is taken on the unrounded value,
    and :func:`shown` prints enough digits that a value on the wrong side of the threshold
    never reads as the threshold itself."""

    threshold: float
    at_least: bool
    unit: str = ""

    def met(self, value: float) -> bool:
        return value >= self.threshold if self.at_least else value < self.threshold

    def describe(self) -> str:
        return f"{'≥' if self.at_least else '<'} {self.threshold:g}{self.unit}"

    def verdict(self, value: float) -> str:
        return "met" if self.met(value) else "**not met**"


def shown(value: float, goal: Goal, digits: int = 2) -> str:
    """``value`` with at least ``digits`` decimals, more while its rounding would print the
    threshold for a value that differs from it (0.946 against a goal of 0.95 is not "0.95")."""
    for d in range(digits, 7):
        text = f"{value:.{d}f}"
        if value == goal.threshold or float(text) != goal.threshold:
            return text
    return repr(value)


ASSIGNOR_TIME = Goal(2.0, at_least=False, unit=" s")
ASSIGNOR_RATIO = Goal(20.0, at_least=False, unit="x range")
SIM_BIG_CPU = Goal(60.0, at_least=False, unit=" s of CPU")
SIM_GRID_WALL = Goal(900.0, at_least=False, unit=" s")


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def provenance(folder: Path, source: str) -> str:
    meta = read_provenance(folder)
    return (f"`results/{source}/` (revision `{meta.short_revision}`; date, machine and load in "
            f"its `meta.json`); reproduce: `{meta.command}`.")


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
            met = ASSIGNOR_TIME.met(t) and ratio is not None and ASSIGNOR_RATIO.met(ratio)
            targets.append(f"`{r['strategy']}` {t * 1000:.0f} ms ({ratio:.2f}x range): "
                           f"{'met' if met else '**not met**'}")
    if targets:
        lines += ["", "Goal (sticky and cooperative-sticky at 1,000 members and 10,000 "
                  f"partitions, identical subscriptions: time {ASSIGNOR_TIME.describe()} and "
                  f"{ASSIGNOR_RATIO.describe()}; best of the repeats): "
                  + "; ".join(targets) + "."]
    return "\n".join(lines) + "\n"


@figure("benchmarks/throughput", source=THROUGHPUT)
def throughput(ctx: Context) -> str:
    return _throughput(ctx, THROUGHPUT)


@figure("benchmarks/throughput-before", source=THROUGHPUT_BEFORE)
def throughput_before(ctx: Context) -> str:
    return _throughput(ctx, THROUGHPUT_BEFORE)


def throughput_goal(summary: dict[str, Any]) -> Goal:
    """The throughput goal the run was made against: connector / bare at least ``target``
    (``benchmarks/throughput.py`` judges it with ``>=`` on the same median)."""
    return Goal(float(summary["target"]), at_least=True)


def _throughput(ctx: Context, source: str) -> str:
    if (msg := _missing(ctx, source, "rounds.csv")) is not None:
        return msg
    folder = ctx.results / source
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
    lines = [provenance(folder, source), "",
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
    goal = throughput_goal(summary)
    best = {p: min(rounds[i][p][0] for i in rounds) for p in paths}
    lines += ["", f"**{conn} / bare, median of the {len(rounds)} per-round ratios: "
              f"{shown(median, goal)}**: goal {goal.verdict(median)}"
              + (f"; pure Python (`conn-py`): {statistics.median(ratios['conn-py']):.2f}"
                 if "conn-py" in ratios else "")
              + f". CPU per message bare / {conn}, median of the per-round ratios: "
              f"{statistics.median(cpu_ratio):.2f}. Extra, best round of each path: "
              f"{conn} / bare {best['bare'] / best[conn]:.2f}."]
    return "\n".join(lines) + "\n"


@figure("benchmarks/throughput-instructions", source=INSTRUCTIONS)
def throughput_instructions(ctx: Context) -> str:
    """Instructions per message by path, before and after, from callgrind (load-independent)."""
    if (msg := _missing(ctx, INSTRUCTIONS, "after/instructions.csv")) is not None:
        return msg
    # Two runs each way (the second one also wrote functions.csv): the counts of the threads
    # that run Python still move with how librdkafka batches, so both are shown.
    labels = {"before": "before 1", "functions-before": "before 2", "after": "after 1",
              "functions-after": "after 2"}
    runs = [labels[name] for name in labels
            if (ctx.results / INSTRUCTIONS / name / "instructions.csv").exists()]
    folders = {label: name for name, label in labels.items()}
    per: dict[str, dict[str, tuple[float, float]]] = {}
    lines = []
    for name in runs:
        folder = ctx.results / INSTRUCTIONS / folders[name]
        per[name] = _per_message(_rows(folder / "instructions.csv"))
        lines += [f"*{name}*: " + provenance(folder, f"{INSTRUCTIONS}/{folders[name]}").strip(),
                  ""]
    paths = list(dict.fromkeys(p for r in runs for p in per[r]))
    head = ["path"] + [f"{r}: Python threads" for r in runs] + [f"{r}: / bare" for r in runs] \
        + [f"{r}: librdkafka threads" for r in runs]
    lines += ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for path in paths:
        cells = [f"`{path}`"]
        cells += [f"{per[r][path][0]:,.0f}" if path in per[r] else "" for r in runs]
        cells += [f"{per[r][path][0] / per[r]['bare'][0]:.3f}" if path in per[r] else ""
                  for r in runs]
        cells += [f"{per[r][path][1]:,.0f}" if path in per[r] else "" for r in runs]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


@figure("benchmarks/throughput-functions", source=INSTRUCTIONS)
def throughput_functions(ctx: Context) -> str:
    """Self cost per message by function, before and after, for the functions that moved."""
    runs = [name for name in ("before", "after")
            if (ctx.results / INSTRUCTIONS / f"functions-{name}" / "functions.csv").exists()]
    if not runs:
        return f"No committed run yet (`results/{INSTRUCTIONS}/functions-*/`).\n"
    tables = {r: _rows(ctx.results / INSTRUCTIONS / f"functions-{r}" / "functions.csv")
              for r in runs}
    lines = []
    for r in runs:
        lines += [f"*{r}*: " + provenance(ctx.results / INSTRUCTIONS / f"functions-{r}",
                                         f"{INSTRUCTIONS}/functions-{r}").strip(), ""]
    columns = [(r, p) for r in runs for p in list(tables[r][0])[1:]]
    values: dict[str, dict[tuple[str, str], float]] = defaultdict(dict)
    for r in runs:
        for row in tables[r]:
            for p in list(row)[1:]:
                values[row["function"]][(r, p)] = float(row[p])
    lines += ["| function | " + " | ".join(f"{r}: `{p}`" for r, p in columns) + " |",
              "|---|" + "---:|" * len(columns)]
    for fn in sorted(values, key=lambda f: -max(abs(v) for v in values[f].values())):
        lines.append(f"| `{fn}` | " + " | ".join(
            f"{values[fn][c]:,.0f}" if c in values[fn] else "" for c in columns) + " |")
    return "\n".join(lines) + "\n"


def _per_message(rows: list[dict[str, str]]) -> dict[str, tuple[float, float]]:
    """(Python threads, library threads) instructions of one more message, per path."""
    by_path: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in rows:
        by_path[r["path"]].append(r)
    out = {}
    for path, rr in by_path.items():
        small, large = sorted(rr, key=lambda r: int(r["messages"]))
        dn = int(large["messages"]) - int(small["messages"])
        out[path] = ((int(large["python_threads_ir"]) - int(small["python_threads_ir"])) / dn,
                     (int(large["library_threads_ir"]) - int(small["library_threads_ir"])) / dn)
    return out


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
        target = (f"CPU {SIM_BIG_CPU.describe()}: {SIM_BIG_CPU.verdict(float(r['cpu_s']))}"
                  if big else f"wall {SIM_GRID_WALL.describe()}: "
                  f"{SIM_GRID_WALL.verdict(float(r['wall_s']))}")
        cpu = f"{float(r['cpu_s']):.2f}" if r["cpu_s"] else ""
        lines.append(f"| {r['run']} | {r['protocol']} | {_num(r['members'])} | "
                     f"{_num(r['partitions'])} | {r['configs']} | {float(r['wall_s']):.2f} | "
                     f"{cpu} | {_num(r['requests'])} | {_num(r['events'])} | {target} |")
    return "\n".join(lines) + "\n"


def _num(text: str) -> str:
    return f"{int(text):,}" if text not in ("", "0") else ""
