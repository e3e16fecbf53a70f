"""docs/scale.md's opening: how one membership change's cost grows with N, per design.

One table and one plot over every committed herd curve, real and simulated, told apart:

* real: ``results/lab/herd-zk`` (``experiment herd``: the legacy ``zk-range`` and the leader
  mode) and ``results/brokers/herd-*`` (the same verb on broker-side groups, one folder per
  broker); one run per group size;
* simulated: ``results/scale/sim-sweep`` (``spark herd --mode sim``), several seeds per size.

The N-law is the least-squares slope of log(requests) on log(N) over every size, and the
local slope between the two largest sizes (where the constant and linear terms weigh least).
Where the leader mode's own defect is named, it is read from the ancestry record of its fix
(``results/splitbrain/fix-leader-watch``), not typed here.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from zkconsumer.lab.runs import RunResult, RunStatus
from zkconsumer.results.compact import COMPACT_FILE
from zkconsumer.results.figures.placement import placement_line
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure

REAL_ZK = "lab/herd-zk"
REAL_BROKERS = "brokers"
SIM = "scale/sim-sweep"
FIX = "splitbrain/fix-leader-watch"
DESIGNS = {"zk-range": "legacy", "zk-leader-range": "leader mode",
           "eager-range": "broker, eager", "cooperative-sticky": "broker, cooperative",
           "kip848": "KIP-848 (model)"}
BROKER_NAMES = {"tansu-0.6.0": "Tansu 0.6.0", "apache-kafka-0.10.2.2": "Kafka 0.10.2"}


@dataclass(frozen=True)
class Curve:
    """Requests of one event against N for one protocol from one source.

    ``points`` holds, per N, every observation (one per run or simulator seed); ``kind`` is
    ``real`` or ``simulated``."""

    protocol: str
    kind: str
    where: str  # the broker or model, for the reader
    partitions: int
    event: str
    points: dict[int, tuple[float, ...]]
    times: dict[int, tuple[float, ...]]
    folder: str

    def medians(self) -> list[tuple[int, float]]:
        return [(n, statistics.median(v)) for n, v in sorted(self.points.items())]

    @property
    def draws(self) -> int:
        return min(len(v) for v in self.points.values())


def loglog_slope(points: Sequence[tuple[float, float]]) -> float:
    """Least-squares slope of log(y) on log(x): the exponent k of y ~ x^k."""
    if len(points) < 2:
        raise ValueError(f"a slope needs two points or more, got {list(points)}")
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(y) for _, y in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    if den == 0:
        raise ValueError(f"a slope needs two different N, got {list(points)}")
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den


def local_slope(points: Sequence[tuple[float, float]]) -> float:
    """The exponent between the two largest N."""
    (n1, q1), (n2, q2) = sorted(points)[-2:]
    return math.log(q2 / q1) / math.log(n2 / n1)


def count_phrase(n: int, unit: str = "run") -> str:
    """How many observations a figure rests on: a single one is never called a median."""
    return f"one {unit}" if n == 1 else f"median of {n} {unit}s"


def spread(values: Sequence[float], fmt: str = ",.0f") -> str:
    """A median with its range when there is more than one observation."""
    med, lo, hi = (format(x, fmt) for x in (statistics.median(values), min(values), max(values)))
    return med if lo == hi else f"{med} ({lo}–{hi})"


def _real_curves(folder: Path, rel: str, where: str) -> list[Curve]:
    doc = json.loads((folder / COMPACT_FILE).read_text(encoding="utf-8"))
    runs = [RunResult.from_json(r) for r in doc["runs"]]
    out = []
    for protocol, event in sorted({(r.protocol, r.event) for r in runs}):
        pts: dict[int, list[float]] = {}
        tts: dict[int, list[float]] = {}
        parts = set()
        for r in runs:
            if (r.protocol, r.event) != (protocol, event) or r.status != RunStatus.OK.value:
                continue
            req = r.metrics.get("coordination_requests")
            if req:
                pts.setdefault(r.members, []).append(float(req))
                parts.add(r.partitions)
            if r.metrics.get("time_to_stable_s") is not None:
                tts.setdefault(r.members, []).append(float(r.metrics["time_to_stable_s"]))
        if len(pts) >= 2:
            out.append(Curve(protocol, "real", where, min(parts), event,
                             {n: tuple(v) for n, v in pts.items()},
                             {n: tuple(v) for n, v in tts.items()}, rel))
    return out


def _sim_curves(folder: Path, rel: str) -> list[Curve]:
    with open(folder / "sweep.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = []
    for protocol, event, p in sorted({(r["protocol"], r["event"], int(r["partitions"]))
                                      for r in rows}):
        pts: dict[int, list[float]] = {}
        tts: dict[int, list[float]] = {}
        for r in rows:
            if (r["protocol"], r["event"], int(r["partitions"])) != (protocol, event, p):
                continue
            pts.setdefault(int(r["members"]), []).append(float(r["coordination_requests"]))
            if r["time_to_stable_s"]:
                tts.setdefault(int(r["members"]), []).append(float(r["time_to_stable_s"]))
        out.append(Curve(protocol, "simulated", "calibrated model", p, event,
                         {n: tuple(v) for n, v in pts.items()},
                         {n: tuple(v) for n, v in tts.items()}, rel))
    return out


def curves(results: Path) -> list[Curve]:
    """Every committed herd curve, real first, legacy and leader before broker groups."""
    out: list[Curve] = []
    if (results / REAL_ZK / COMPACT_FILE).is_file():
        out += _real_curves(results / REAL_ZK, REAL_ZK, "one ZooKeeper")
    for folder in sorted((results / REAL_BROKERS).glob("herd-*")):
        if (folder / COMPACT_FILE).is_file():
            broker = read_provenance(folder).broker
            out += _real_curves(folder, f"{REAL_BROKERS}/{folder.name}",
                                BROKER_NAMES.get(broker, broker))
    if (results / SIM / "sweep.csv").is_file():
        out += _sim_curves(results / SIM, SIM)
    order = list(DESIGNS)
    return sorted(out, key=lambda c: (order.index(c.protocol) if c.protocol in order else 99,
                                      c.kind != "real", c.where, c.event))


def _seconds(values: Sequence[float]) -> str:
    med = statistics.median(values)
    text = spread(values, ",.0f" if med >= 100 else ".2f") + " s"
    return text + " (stable throughout)" if max(values) == 0 else text


def findings_table(cs: Sequence[Curve]) -> list[str]:
    lines = ["| design | source | P | N | per N | requests per event, smallest → largest N | "
             "exponent: all N / two largest N | time to stable at the largest N |",
             "|---|---|---|---|---|---|---|---|"]
    for c in cs:
        meds = c.medians()
        (n0, _), (n1, _) = meds[0], meds[-1]
        unit = "run" if c.kind == "real" else "draw"
        design = DESIGNS.get(c.protocol, c.protocol)
        tts = c.times.get(n1)
        lines.append(
            f"| {design} (`{c.protocol}`) {c.event} | {c.kind}, {c.where} | {c.partitions} | "
            f"{n0:,}–{n1:,} | {count_phrase(c.draws, unit)} | "
            f"{spread(c.points[n0])} → {spread(c.points[n1])} | "
            f"{loglog_slope(meds):.2f} / {local_slope(meds):.2f} | "
            f"{_seconds(tts) if tts else '—'} |")
    return lines


def leader_defect(results: Path) -> str:
    meta = results / FIX / "meta.json"
    if not meta.is_file():
        return ""
    extra = json.loads(meta.read_text())["extra"]
    return (f"What the leader mode does not remove: a defect of its own, found by the real "
            f"runs at N = 100 ([split-brain-at-scale.md](split-brain-at-scale.md)) and fixed "
            f"by `{extra['commit'][:10]}`, \"{extra['subject']}\": before it, a member could "
            f"miss every later assignment and leave partitions without an owner.")


def model_trust(results: Path) -> str:
    """How many held-out cells the simulator's latest scorings passed."""
    parts = []
    scores = sorted((results / "scale").glob("validation-*/score.json"))
    if scores:
        checks = json.loads(scores[-1].read_text())["checks"]
        parts.append(f"{sum(c['ok'] for c in checks)} of {len(checks)} held-out cells of the "
                     f"herd model (`{scores[-1].parent.name}`)")
    distributions = "validation-distributions.md"
    for plan, what, page in (
            (3, "Tansu, Apache Kafka 2.4.1 and 4.0.2", distributions),
            (4, "Tansu, with a source-rule profile beside the fitted one", distributions),
            (5, "fresh Tansu and Apache Kafka 2.4.1 runs, formation phases in the broker "
                "models", distributions),
            (6, "the Kafka 2.4 profile alone, on fresh Apache Kafka 2.4.1 runs", distributions),
            (7, "plan 5's cells on fresh runs, after its fixes and the Tansu build's rules",
             "validation-plan-7.md"),
            (8, "plan 7's models at new sizes, N = 8 and 32", "validation-plan-7.md"),
            (9, "plan 7's cells on fresh runs, with the formation-tied statistics ticks and the "
                "leaves measured under traffic", "validation-plan-9.md"),
            (10, "plan 9's models unchanged, on 10 fresh runs a cell", "validation-plan-10.md"),
            (11, "the KIP-848 profile on Apache Kafka 4.0.2, heartbeats of 5000 and 1000 ms",
             "validation-plan-11.md"),
            (12, "the Kafka 2.4 profile's static membership on Apache Kafka 2.4.1",
             "validation-plan-12.md"),
            (13, "the legacy model with each owner's fetcher stop drawn as measured, on fresh "
                 "zk-range runs; not kept", "validation-plan-13.md"),
            (14, "the leader model with its requests counted as the connector sends them",
             "validation-plan-14.md"),
            (15, "the KIP-848 profile, unchanged, on consumer-range (Apache Kafka 4.0.2's "
                 "server-side range assignor)", "validation-plan-15.md"),
            (16, "the KIP-848 model's static members on Apache Kafka 4.0.2",
             "validation-plan-16.md"),
            (17, "the KIP-848 range model on fresh consumer-range runs",
             "validation-plan-17.md"),
            (18, "the KIP-848 range model under the lab's observer, on fresh consumer-range "
                 "runs", "validation-plan-18.md"),
            (19, "the KIP-848 range model, its runs judged apart by whether anything moved",
             "validation-plan-19.md"),
            (20, "the legacy model with its stops on the producer's schedule, on fresh zk-range "
                 "runs", "validation-plan-20.md"),
            (21, "plan 10's cells on fresh runs, the Tansu formation as recorded",
             "validation-plan-21.md"),
            (22, "plan 21's cells on fresh runs, with the Tansu formation's stragglers and the "
                 "leader mode's stops one per partition", "validation-plan-22.md"),
            (23, "plan 22's cells on fresh runs, the Tansu classic cells judged apart by "
                 "whether their formation left stragglers", "validation-plan-23.md"),
            (24, "plan 23's cells on fresh runs, the legacy events placed on the producer's "
                 "cycle as the lab placed them and Tansu's eager cells by its source rules",
                 "validation-plan-24.md"),
            (25, "plan 24's Tansu cells on fresh runs, each set drawn at its own speed and "
                 "with its own formations' stragglers", "validation-plan-25.md"),
            (26, "plan 25's Tansu cells and plan 24's Apache Kafka 2.4.1 cells on fresh runs, "
                 "the stragglers drawn by creation rank and each cell at its own speed",
                 "validation-plan-26.md"),
            (27, "the legacy cells on fresh runs, the model drawn 200 times a cell",
             "validation-plan-27.md"),
            (28, "the legacy model unchanged on Apache Kafka 2.4.1, and three protocols at "
                 "N = 96 on Tansu", "validation-plan-28.md"),
            (29, "the ZooKeeper cells at N = 96 under a settle rule that waits for every "
                 "rebalance, and two zk-range N = 12 sets of one session",
             "validation-plan-29.md"),
            (30, "zk-range and zk-leader-range at N = 200 on Tansu", "validation-plan-30.md")):
        scoring = results / "scale" / f"validation-{plan}" / "scoring" / "scoring.json"
        if scoring.is_file():
            judged = [c for c in json.loads(scoring.read_text())["cells"] if c["judged"]]
            parts.append(f"{sum(c['ok'] for c in judged)} of {len(judged)} judged cells of "
                         f"plan {plan} (real and model distributions, {what}; [{page}]({page}))")
    kafka = results / "comparison" / "kafka-model-check" / "checks.json"
    if kafka.is_file():
        cells = [c for c in json.loads(kafka.read_text())["cells"] if c.get("held_out", True)]
        parts.append(f"{sum(c['ok'] for c in cells)} of {len(cells)} held-out cells of the "
                     "Kafka 2.4 coordinator profile")
    if not parts:
        return ""
    listed = parts[0] if len(parts) == 1 else "; ".join(parts[:-1]) + "; and " + parts[-1]
    return ("How far the simulated rows can be trusted: " + listed + " are within "
            "the tolerances fixed before the runs ([validation.md](validation.md#herd-and-scale)"
            "); the simulated figures beyond the real sizes are the model's, not measurements.")


@figure("scale-findings", source="results/lab/herd-zk, results/brokers/herd-*, "
                                 "results/scale/sim-sweep")
def findings(ctx: Context) -> str:
    cs = curves(ctx.results)
    lines = findings_table(cs)
    sources = sorted({c.folder for c in cs})
    lines += ["", "Exponent k of requests ~ N^k (least squares over every N, and between the two "
              "largest N). Real: one run per N, members in threads of one process; simulated: "
              "the calibrated simulator, one draw per seed (range in brackets). A time of 0 "
              "means no partition moved (N ≥ P): the group was stable throughout. Sources: "
              + ", ".join(f"`results/{s}/`" for s in sources) + ".",
              "", placement_line(*(ctx.results / s for s in sources))]
    trust = model_trust(ctx.results)
    if trust:
        lines += ["", trust]
    defect = leader_defect(ctx.results)
    if defect:
        lines += ["", defect]
    lines += ["", _plot(ctx, cs)]
    return "\n".join(lines)


def _plot(ctx: Context, cs: Sequence[Curve]) -> str:
    from zkconsumer.results.plotting import pyplot, save_svg

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    colors = {p: f"C{i}" for i, p in enumerate(DESIGNS)}
    markers = {"one ZooKeeper": "o", "Tansu 0.6.0": "s", "Kafka 0.10.2": "^"}
    for c in cs:
        if c.event != "join":
            continue
        meds = c.medians()
        xs, ys = [n for n, _ in meds], [v for _, v in meds]
        color = colors.get(c.protocol, "grey")
        if c.kind == "real":
            ax.plot(xs, ys, linestyle="none", marker=markers.get(c.where, "o"), color=color,
                    label=f"{c.protocol}, real, {c.where}, P = {c.partitions} "
                          f"(one run per N)" if c.draws == 1 else
                          f"{c.protocol}, real, {c.where} (n = {c.draws} runs per N)")
        else:
            ax.plot(xs, ys, linestyle="-", color=color, alpha=0.7,
                    label=f"{c.protocol}, simulated, P = {c.partitions} "
                          f"(median of {c.draws} draws)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("members N before the join")
    ax.set_ylabel("coordination requests per join")
    ax.set_title("One join: real runs (markers) and the simulator (lines)", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6, loc="upper left")
    fig.tight_layout()
    save_svg(fig, ctx.figures / "scale-findings.svg")
    return f"![requests per join vs N, real and simulated]({ctx.plot_link('scale-findings.svg')})"
