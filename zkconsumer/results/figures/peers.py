"""docs/peers.md: the ZooKeeper-era consumers side by side (``benchmarks/peers.py`` runs).

One block per committed run under ``results/benchmarks/peers-*/``: per consumer the median and
range over rounds of its steady rate, its CPU per message and its per-round ratios to the
original (Kafka 0.10.2.2's ``ConsumerPerformance --zookeeper``) and to the bare confluent-kafka
client, then the rounds themselves with the machine's load when each pass started.
"""

from __future__ import annotations

import csv
import json
import re

from zkconsumer.results.figures.benchmarks import Goal, shown
from zkconsumer.results.peer_throughput import (
    PeerSummary,
    RoundResult,
    Spread,
    ratios,
    read_rounds,
    summarise,
)
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure

KAFKA = "benchmarks/peers-kafka-0.10.2"
KAFKA_PREFETCH = "benchmarks/peers-kafka-0.10.2-prefetch"
KAFKA_STREAM = "benchmarks/peers-kafka-0.10.2-stream"
TANSU = "benchmarks/peers-tansu"

LABELS = {
    "original": "original (0.10.2.2 `ConsumerPerformance --zookeeper`)",
    "original-stream": "original (0.10.2.2 connector, `java/OriginalStream.java`)",
    "zkconsumer": "zkconsumer (`ZookeeperConsumerConnector`)",
    "zkconsumer-before": "zkconsumer at the revision before (below)",
    "pykafka": "pykafka 2.8 `BalancedConsumer`",
    "pykafka-rdkafka": "pykafka 2.8 `BalancedConsumer`, `use_rdkafka=True`",
    "bare": "bare confluent-kafka `Consumer`",
}


def spread(s: Spread | None, digits: int = 2, rate: bool = False) -> str:
    """``median (low–high)``; a blank cell for a missing value."""
    if s is None:
        return ""
    if rate:
        return f"{s.median:,.0f} ({s.low:,.0f}–{s.high:,.0f})"
    return f"{s.median:.{digits}f} ({s.low:.{digits}f}–{s.high:.{digits}f})"


def summary_table(results: list[RoundResult]) -> list[str]:
    """One row per consumer: what it read, rate, CPU per message and the two ratios."""
    summaries: list[PeerSummary] = summarise(results)
    reads = {r.peer: r.messages for r in results}
    original = any(s.vs_original is not None for s in summaries)
    stream = any(s.vs_original_stream is not None for s in summaries)
    lines = ["| consumer | messages read | msgs/s, median (range) | CPU µs/msg "
             + ("| / original " if original else "")
             + ("| / original-stream " if stream else "") + "| / bare |",
             "|---|---:|---:|---:|" + ("---:|" if original else "")
             + ("---:|" if stream else "") + "---:|"]
    for s in summaries:
        lines.append(f"| {LABELS.get(s.peer, s.peer)} | {reads[s.peer]:,} | "
                     f"{spread(s.rate, rate=True)} | {spread(s.cpu_us)} | "
                     + (f"{spread(s.vs_original)} | " if original else "")
                     + (f"{spread(s.vs_original_stream)} | " if stream else "")
                     + f"{spread(s.vs_bare)} |")
    return lines


def left_out_summary(lines: list[str]) -> str:
    """``round N: peer: reason`` lines as one phrase per peer and reason, rounds listed."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for line in lines:
        head, _, rest = line.partition(": ")
        peer, _, reason = rest.partition(": " if ": " in rest else ", ")
        reason = reason.split("; its log:")[0] or "no reason given"
        grouped.setdefault((peer, reason), []).append(head.removeprefix("round "))
    return "; ".join(f"{peer} in round{'s' if len(r) > 1 else ''} {', '.join(r)} ({reason})"
                     for (peer, reason), r in grouped.items())


def rounds_table(results: list[RoundResult]) -> list[str]:
    """The rounds as run: each pass's place in its round, rate, CPU and the load at its start."""
    lines = ["| round | place | consumer | msgs/s | CPU µs/msg | load (1 min) |",
             "|---:|---:|---|---:|---:|---:|"]
    for r in sorted(results, key=lambda x: (x.round, x.order)):
        lines.append(f"| {r.round} | {r.order + 1} | {r.peer} | {r.rate:,.0f} | "
                     f"{r.cpu_us_per_message:.2f} | {r.load1:.2f} |")
    return lines


VS_ORIGINAL = Goal(1.0, at_least=True)
VS_BARE = Goal(0.95, at_least=True)


def goal_line(results: list[RoundResult]) -> str:
    """The data path's goal against this run: zkconsumer's median per-round ratio to each
    original present (goal >= 1) and to bare (goal >= 0.95); empty without zkconsumer."""
    s = next((x for x in summarise(results) if x.peer == "zkconsumer"), None)
    if s is None:
        return ""
    parts = []
    for name, spread_, goal in (("`ConsumerPerformance`", s.vs_original, VS_ORIGINAL),
                                ("`original-stream`", s.vs_original_stream, VS_ORIGINAL),
                                ("bare", s.vs_bare, VS_BARE)):
        if spread_ is not None:
            parts.append(f"/ {name} {shown(spread_.median, goal)} (goal "
                         f"{goal.describe()}: {goal.verdict(spread_.median)})")
    before = ratios(results, "zkconsumer", "zkconsumer-before")
    if before is not None:
        parts.append(f"/ `zkconsumer-before` {spread(before)}")
    return ("**zkconsumer, median of the per-round ratios**: " + "; ".join(parts) + "."
            if parts else "")


def render_run(ctx: Context, source: str, with_rounds: bool = True) -> str:
    folder = ctx.results / source
    if not all((folder / f).exists() for f in ("rounds.csv", "summary.json", "meta.json")):
        return f"No committed run yet (`results/{source}/`).\n"
    meta = read_provenance(folder)
    summary = json.loads((folder / "summary.json").read_text())
    results = read_rounds((folder / "rounds.csv").read_text())
    extra = meta.extra
    venv = extra.get("pykafka_venv") if isinstance(extra.get("pykafka_venv"), dict) else {}
    assert isinstance(venv, dict)
    head = (f"`results/{source}/` (revision `{meta.short_revision}`, {meta.date}, broker "
            f"{meta.broker}, {meta.machine.get('cores', '?')} cores, load average "
            f"{meta.load_text()} at the start and {meta.load_text('loadavg_end')} at the end; "
            f"confluent-kafka {extra.get('confluent_kafka', '?')} with librdkafka "
            f"{extra.get('librdkafka', '?')}"
            + (f"; pykafka {venv['pykafka']} with kazoo {venv['kazoo']}" if venv else "")
            + f"); reproduce: `{meta.command}`."
            + (f" `zkconsumer-before`: the connector at revision "
               f"`{str(extra['before_revision'])[:12]}`, side by side in the same rounds."
               if extra.get("before_revision") else ""))
    text = [head, "",
            f"{summary['messages']:,} values of {summary['value_bytes']} B in "
            f"{summary['partitions']} partitions, {summary['rounds']} rounds, one stream, a "
            "fresh group and process per pass; steady rates (first to last message); ratios "
            "are per round, then median (range).", "", *summary_table(results)]
    left_out = summary.get("left_out") or []
    if left_out:
        text += ["", "Passes left out (no result): " + left_out_summary(left_out) + "."]
    goal = goal_line(results)
    if goal:
        text += ["", goal]
    if with_rounds:
        text += ["", *rounds_table(results)]
    return "\n".join(text) + "\n"


@figure("peers/throughput-kafka-0.10.2", source=KAFKA)
def throughput_kafka(ctx: Context) -> str:
    return render_run(ctx, KAFKA)


@figure("peers/throughput-kafka-0.10.2-stream", source=KAFKA_STREAM)
def throughput_kafka_stream(ctx: Context) -> str:
    return render_run(ctx, KAFKA_STREAM)


@figure("peers/prefetch-kafka-0.10.2", source=KAFKA_PREFETCH)
def prefetch_kafka(ctx: Context) -> str:
    return render_run(ctx, KAFKA_PREFETCH)


@figure("peers/throughput-tansu", source=TANSU)
def throughput_tansu(ctx: Context) -> str:
    return render_run(ctx, TANSU)




ZNODES = "peers/znodes"
_STAMP = re.compile(r"^\[[0-9-]+ [0-9:,]+\] ")
_ALONE = (("alone-original", "original 0.10.2.2"), ("alone-zkconsumer", "zkconsumer"),
          ("alone-pykafka", "pykafka 2.8"))
_MIXED = (("mixed-original", "an original member, then a pykafka member"),
          ("mixed-zkconsumer", "a zkconsumer member, then a pykafka member"))


def _cell(text: str) -> str:
    """A znode's data or a log line as a table cell: code, pipes escaped, one line."""
    return "`" + text.replace("|", "\\|").replace("\n", " ").replace("`", "'") + "`"


def distinct_errors(lines: list[str], limit: int = 4) -> list[str]:
    """A member's error lines without their timestamps, each once, in order of appearance."""
    seen: dict[str, None] = {}
    for line in lines:
        seen.setdefault(_STAMP.sub("", line).strip(), None)
    return list(seen)[:limit]


@figure("peers/znodes", source=ZNODES)
def znodes(ctx: Context) -> str:
    folder = ctx.results / ZNODES
    if not (folder / "znodes.json").exists():
        return f"No committed run yet (`results/{ZNODES}/`).\n"
    meta = read_provenance(folder)
    found = json.loads((folder / "znodes.json").read_text())
    groups = found["groups"]
    lines = [f"`results/{ZNODES}/` (revision `{meta.short_revision}`, {meta.date}, broker "
             f"{meta.broker}, pykafka {found['pykafka_venv']['pykafka']} with kazoo "
             f"{found['pykafka_venv']['kazoo']}); reproduce: `{meta.command}`.", "",
             f"One topic `{found['topic']}` of {found['partitions']} partitions. What each "
             "consumer writes when it is alone in its group: the data of its registration "
             "znode, and the path (under `/consumers/<g>/owners/`) and data of its first "
             "owner znode:", "",
             "| consumer | registration data | first owner znode | its data |",
             "|---|---|---|---|"]
    for key, label in _ALONE:
        g = groups.get(key, {})
        ids = list(g.get("ids", {}).values())
        owners = sorted(g.get("owners", {}).items())
        path, data = owners[0] if owners else ("", "")
        lines.append(f"| {label} | {_cell(ids[0]) if ids else 'none'} | "
                     f"{_cell(path) if path else 'none'} | {_cell(data) if data else ''} |")
    lines += ["", "Mixed groups, after the second member had time to settle: who the owner "
              "znodes name, and what each member logged as errors (each line once, first "
              "four), and the partitions the pykafka member held when it stopped:", "",
              "| group | members | owner znodes | errors logged | pykafka held |",
              "|---|---:|---|---|---|"]
    for key, label in _MIXED:
        g = groups.get(key)
        if g is None:
            continue
        owners = "<br>".join(f"{_cell(tp)} → {_cell(v)}"
                             for tp, v in sorted(g.get("owners", {}).items())) or "none"
        errors = "<br>".join(f"{who}: {_cell(e)}" for who, errs in sorted(
            g.get("errors", {}).items()) for e in distinct_errors(errs)) or "none"
        held = [x.removeprefix("HELD ") for x in g.get("held", {}).get("pykafka", [])]
        lines.append(f"| {label} | {len(g.get('ids', {}))} | {owners} | {errors} | "
                     f"{held[-1] if held else '?'} |")
    return "\n".join(lines) + "\n"


HERD = "peers/herd"


@figure("peers/herd", source=HERD)
def herd(ctx: Context) -> str:
    """Per join of a member into a group of N - 1: the server's requests and time to stable,
    pykafka beside zkconsumer."""
    folder = ctx.results / HERD
    if not all((folder / f).exists() for f in ("joins.csv", "meta.json")):
        return f"No committed run yet (`results/{HERD}/`).\n"
    meta = read_provenance(folder)
    with open(folder / "joins.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    sizes = sorted({int(r["members"]) for r in rows})
    by = {(r["kind"], int(r["members"])): r for r in rows}
    head = ["members after the join",
            *[f"{k}: requests" for k in kinds], *[f"{k}: s to stable" for k in kinds]]
    lines = [f"`results/{HERD}/` (revision `{meta.short_revision}`, {meta.date}, broker "
             f"{meta.broker}, {meta.machine.get('cores', '?')} cores, load average "
             f"{meta.load_text()} at the start and {meta.load_text('loadavg_end')} at the "
             f"end); reproduce: `{meta.command}`.", "",
             f"One run, {rows[0]['partitions']} partitions, members joining one at a time.",
             "", "| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for n in sizes:
        cells = [str(n)]
        for k in kinds:
            r = by.get((k, n))
            cells.append(r["requests"] if r else "")
        for k in kinds:
            r = by.get((k, n))
            cells.append((f"{float(r['stable_s']):.1f}" if r["stable_s"] else "not stable")
                         if r else "")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
