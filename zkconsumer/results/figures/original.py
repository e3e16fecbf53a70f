"""docs/original.md: the original 0.10.2 connector's members, zkconsumer's and the peers'.

Sources: ``results/brokers/compare-original-<broker>/`` (``benchmarks/era_compare.py`` on the
original-zk-* protocols next to zk-range, ``runs.csv`` + ``meta.json``), the peers' rows
(the broker-side protocols) from ``results/brokers/compare-<broker>/`` of the same broker, and
``results/original/herd-<broker>/`` and ``results/original/split-<scenario>-<broker>/`` (the
herd and the zombie and stale-view scenarios with original members, as the CLI writes them),
and ``results/original/spark-split-brain-<broker>/`` (``zkconsumer spark split-brain --mode
real`` with original members: ``sweep.csv``, ``summary.md``, ``meta.json``).
Every row names its broker and who implements its members; a metric the original's JVM does
not report is "—", never a zero.
"""

from __future__ import annotations

import csv
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from zkconsumer.lab.drivers.original import UNOBSERVED
from zkconsumer.lab.runs import RunResult, RunStatus
from zkconsumer.lab.splitbrain.report import COLUMNS as SPLIT_COLUMNS
from zkconsumer.results.compact import COMPACT_FILE
from zkconsumer.results.exclusions import SWEEP_FILE, formation_verdict, sweep_rows
from zkconsumer.results.figures.brokers_era import load_runs, provenance_table, split_cell
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure
from zkconsumer.scenarios.protocols import PROTOCOL_TABLE
from zkconsumer.tables import fmt

SOURCE = "results/brokers/compare-original-*"
ORIGINAL_PREFIX = "compare-original-"
# The broker-side protocols shown next to the two ZooKeeper implementations.
PEERS = ("eager-range", "cooperative-sticky")
EVENT_ORDER = ("join", "leave", "crash", "rolling-bounce")
COLUMNS = (("time_to_stable_s", "stable s"), ("partition_seconds_unavailable", "part·s unavail."),
           ("members_paused", "paused"), ("group_rebalances", "rebalances"),
           ("rebalance_attempts", "attempts"), ("conflicts", "conflicts"),
           ("coordination_requests", "requests (clients)"),
           ("zk_packets_received", "ZK packets (server)"), ("duplicates", "dups"),
           ("lost", "lost"))


def implementation(protocol: str) -> str:
    """Who runs the members: the original's JVMs or this project (librdkafka for the peers)."""
    p = PROTOCOL_TABLE.get(protocol)
    if p is None:
        return "?"
    if p.original:
        return "original 0.10.2 (JVM)"
    return "zkconsumer" if p.family == "zookeeper" else "confluent-kafka"


def observed(protocol: str, metric: str, value: Any) -> Any:
    """``value``, or None where the original's members do not report ``metric`` (runs recorded
    before the lab marked it as not observed hold a zero there)."""
    p = PROTOCOL_TABLE.get(protocol)
    return None if p is not None and p.original and metric in UNOBSERVED else value


def read_runs(folder: Path) -> list[dict[str, str]]:
    with open(folder / "runs.csv", newline="") as f:
        return list(csv.DictReader(f))


def median_cell(rows: Sequence[dict[str, str]], metric: str) -> str:
    """Median over the ok repeats; "—" where no repeat has the metric (not observed)."""
    values = [float(r[metric]) for r in rows
              if r["status"] == "ok" and r.get(metric) not in (None, "")]
    if not values:
        return "—"
    m = statistics.median(values)
    return f"{m:.2f}" if metric.endswith("_s") or metric.startswith("partition_") else f"{m:g}"


def run_folders(area: Path, pattern: str, data_file: str) -> list[Path]:
    """The folders of ``area`` matching ``pattern`` that hold ``data_file`` and a meta.json (a
    run still being written has neither yet)."""
    return [p for p in sorted(area.glob(pattern))
            if (p / data_file).is_file() and (p / "meta.json").is_file()]


def original_folders(results: Path) -> list[Path]:
    return run_folders(results / "brokers", ORIGINAL_PREFIX + "*", "runs.csv")


def peer_folder(results: Path, folder: Path) -> Path | None:
    """The same broker's compare folder (its broker-side protocols are the peers' rows)."""
    peer = results / "brokers" / ("compare-" + folder.name[len(ORIGINAL_PREFIX):])
    return peer if (peer / "runs.csv").is_file() and (peer / "meta.json").is_file() else None


def rows_by_source(results: Path) -> list[tuple[str, list[dict[str, str]]]]:
    """(broker, runs) per folder: the original's run, then the peers' rows of its broker."""
    out: list[tuple[str, list[dict[str, str]]]] = []
    for folder in original_folders(results):
        out.append((read_provenance(folder).broker, read_runs(folder)))
        peer = peer_folder(results, folder)
        if peer is not None:
            out.append((read_provenance(peer).broker,
                        [r for r in read_runs(peer) if r["protocol"] in PEERS]))
    return out


def compare_table(sources: Sequence[tuple[str, list[dict[str, str]]]]) -> str:
    head = ["event", "protocol", "members", "broker", "n", *[c for _, c in COLUMNS]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    order = {p: i for i, p in enumerate(dict.fromkeys(
        r["protocol"] for _, rows in sources for r in rows))}
    keys = sorted({(r["event"], r["protocol"], broker) for broker, rows in sources
                   for r in rows},
                  key=lambda k: (EVENT_ORDER.index(k[0]) if k[0] in EVENT_ORDER else 9,
                                 order[k[1]], k[2]))
    notes: dict[str, str] = {}
    for event, protocol, broker in keys:
        rows = [r for b, rs in sources if b == broker for r in rs
                if (r["event"], r["protocol"]) == (event, protocol)]
        ok = sum(r["status"] == "ok" for r in rows)
        if ok == 0:
            notes.setdefault(f"{protocol}/{event} on {broker}",
                             next((r["reason"] for r in rows if r["reason"]), rows[0]["status"]))
            cells = [f"**{rows[0]['status']}**"] + [""] * (len(COLUMNS) - 1)
        else:
            cells = [median_cell(rows, m) for m, _ in COLUMNS]
        lines.append(f"| {event} | {protocol} | {implementation(protocol)} | {broker} | "
                     f"{ok}/{len(rows)} | " + " | ".join(cells) + " |")
    out = "\n".join(lines)
    if notes:
        out += "\n\n" + "\n".join(f"- {k}: {v}" for k, v in sorted(notes.items()))
    return out


@figure("original-compare", source=SOURCE)
def render_compare(ctx: Context) -> str:
    sources = rows_by_source(ctx.results)
    if not sources:
        return ("(no results under results/brokers/compare-original-* yet: run "
                "benchmarks/era_compare.py with --protocols original-zk-range,zk-range)")
    return compare_table(sources)


@figure("original-provenance", source=SOURCE)
def render_provenance(ctx: Context) -> str:
    folders: list[Path] = []
    for folder in original_folders(ctx.results):
        peer = peer_folder(ctx.results, folder)
        folders += [folder] + ([peer] if peer is not None else [])
    return provenance_table(ctx.results, folders).rstrip("\n")


# --- herd ------------------------------------------------------------------------------------

HERD_AREA = "original"
HERD_COLUMNS = (("coordination_requests", "requests (clients)"),
                ("zk_requests_server", "ZK server (mntr)"),
                ("watch_notifications_server", "ZK server notif."),
                ("rebalance_attempts", "attempts"), ("members_rebalanced", "rebalanced"),
                ("conflicts", "conflicts"), ("rollbacks", "rollbacks"),
                ("time_to_stable_s", "stable s"), ("pings_estimated", "pings taken out"))


def herd_folders(results: Path) -> list[Path]:
    return run_folders(results / HERD_AREA, "herd-*", COMPACT_FILE)


def herd_table(broker: str, runs: Sequence[RunResult]) -> str:
    head = ["protocol", "members", "event", "N", "broker", *[t for _, t in HERD_COLUMNS]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    order = {p: i for i, p in enumerate(dict.fromkeys(r.protocol for r in runs))}
    for r in sorted(runs, key=lambda r: (r.event, order[r.protocol], r.members)):
        if r.status != RunStatus.OK.value:
            cells = [f"**{r.status}**"] + [""] * (len(HERD_COLUMNS) - 1)
        else:
            server = r.details.get("zk_server") or {}
            cells = [fmt(server.get(m) if m == "pings_estimated"
                         else observed(r.protocol, m, r.metrics.get(m))) for m, _ in HERD_COLUMNS]
        lines.append(f"| {r.protocol} | {implementation(r.protocol)} | {r.event} | {r.members} "
                     f"| {broker} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def herd_slopes(broker: str, fits: dict[str, Any]) -> str:
    """Log-log slopes of requests per event against N, on the server's count for every row
    (the one count both implementations have) and on the clients' where they count."""
    lines = ["| protocol/event | broker | slope (ZK server) | slope (clients) | points [N, server "
             "requests] |", "|---|---|---|---|---|"]
    for key, fit in fits.items():
        clients = "—" if fit.get("basis") == "server" else f"{fit['slope']:.2f}"
        server = fit.get("server_slope")
        lines.append(f"| {key} | {broker} | {fmt(server, 2)} | {clients} | "
                     f"{fit['points'] if fit.get('basis') == 'server' else '(clients above)'} |")
    return "\n".join(lines) + "\n"


@figure("original-herd", source="results/original/herd-*")
def render_herd(ctx: Context) -> str:
    folders = herd_folders(ctx.results)
    if not folders:
        return "(no herd runs under results/original yet)\n"
    parts: list[str] = []
    for folder in folders:
        broker = read_provenance(folder).broker
        runs, doc = load_runs(folder)
        parts += [herd_table(broker, runs), "Fitted log-log slopes of requests per event:", "",
                  herd_slopes(broker, doc.get("fits") or {})]
    parts.append(provenance_table(ctx.results, folders))
    return "\n".join(parts).rstrip("\n")


# --- split brain -----------------------------------------------------------------------------

SPLIT_SCENARIOS = ("zombie", "stale-view")


def split_folders(results: Path, scenario: str) -> list[Path]:
    return run_folders(results / HERD_AREA, f"split-{scenario}-*", COMPACT_FILE)


def split_table(scenario: str, by_broker: Sequence[tuple[str, list[RunResult]]]) -> str:
    """One row per protocol and broker: the median over its ok runs of each metric."""
    cols = SPLIT_COLUMNS[scenario]
    head = ["protocol", "members", "broker", "n", *[t for _, t in cols]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes: list[str] = []
    for broker, runs in by_broker:
        for protocol in dict.fromkeys(r.protocol for r in runs):
            mine = [r for r in runs if r.protocol == protocol]
            ok = [r for r in mine if r.status == RunStatus.OK.value]
            if ok:
                cells = [split_cell([observed(protocol, k, r.metrics.get(k)) for r in ok])
                         for k, _ in cols]
            else:
                cells = [f"**{mine[0].status}**"] + [""] * (len(cols) - 1)
                notes.append(f"- {protocol} on {broker}: {mine[0].status}: {mine[0].reason}")
            lines.append(f"| {protocol} | {implementation(protocol)} | {broker} | "
                         f"{len(ok)}/{len(mine)} | " + " | ".join(cells) + " |")
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def _render_split(ctx: Context, scenario: str) -> str:
    folders = split_folders(ctx.results, scenario)
    if not folders:
        return f"(no {scenario} runs under results/original yet)\n"
    by_broker = [(read_provenance(f).broker, load_runs(f)[0]) for f in folders]
    return "\n".join([split_table(scenario, by_broker),
                      provenance_table(ctx.results, folders)]).rstrip("\n")


@figure("original-split-zombie", source="results/original/split-zombie-*")
def render_split_zombie(ctx: Context) -> str:
    return _render_split(ctx, "zombie")


@figure("original-split-stale-view", source="results/original/split-stale-view-*")
def render_split_stale_view(ctx: Context) -> str:
    return _render_split(ctx, "stale-view")


# --- spark split-brain -----------------------------------------------------------------------

SPARK_SPLIT_COLUMNS = (("double_owned_partition_s", "double-owned part·s"),
                       ("zombie_deliveries", "zombie deliveries"),
                       ("delivered_twice", "delivered twice"),
                       ("offsets_went_back", "offsets went back"),
                       ("zombie_commits_accepted", "late commits accepted"),
                       ("conflicts", "conflicts"), ("rollbacks", "rollbacks"),
                       ("rebalances_given_up", "given up"),
                       ("unowned_partition_s", "unowned part·s"),
                       ("time_to_stable_s", "stable s"))


def spark_split_folders(results: Path) -> list[Path]:
    return run_folders(results / HERD_AREA, "spark-split-brain-*", SWEEP_FILE)


def verdict(row: dict[str, str]) -> str:
    """A real row's verdict by the split-brain pages' rules: not formed (or failed), stuck (the
    verify tool failed or a repair was needed), lost records, or formed and delivered."""
    formed = formation_verdict(row)
    if formed is None:
        return f"**{row['reason'] or 'failed'}**"
    if not formed:
        return "did not form"
    words = ["formed"]
    if row.get("verify_ok") == "false" or row.get("repaired") == "true":
        words.append("stuck")
    if (num(row.get("lost")) or 0) > 0:
        words.append(f"{int(num(row['lost']) or 0)} lost")
    return ", ".join(words)


def num(text: str | None) -> float | None:
    return None if text in (None, "") else float(text)


def spark_split_table(broker: str, rows: Sequence[dict[str, str]]) -> str:
    """One row per run (scenario, protocol, seed); "—" where a metric is not observed (the
    original's JVM does not report it) or has no meaning for the scenario."""
    head = ["scenario", "protocol", "members", "N", "P", "seed", "broker", "retry budget",
            "verdict",
            *[t for _, t in SPARK_SPLIT_COLUMNS]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        if r.get("applicable") == "false":
            continue
        measured = formation_verdict(r)
        cells = [fmt(num(r.get(k)), 2) if measured else "" for k, _ in SPARK_SPLIT_COLUMNS]
        lines.append(f"| {r['scenario']} | {r['protocol']} | {implementation(r['protocol'])} | "
                     f"{r['members']} | {r['partitions']} | {r['seed']} | {broker} | "
                     f"{r.get('rebalance_max_retries') or '—'} | {verdict(r)} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def memory_line(folder: Path) -> str:
    """The job's own line on the original members' JVM memory, from its summary."""
    summary = folder / "summary.md"
    text = summary.read_text() if summary.is_file() else ""
    line = next((x.strip(" -") for x in text.splitlines() if "(a JVM each)" in x), "")
    return line or "(the run reported no original member's JVM memory)"


def spark_job_block(ctx: Context, folders: Sequence[Path], job: str,
                    table: Callable[[str, Sequence[dict[str, str]]], str]) -> str:
    """A Spark job's runs with original members: per folder its table and the JVMs' memory,
    then one provenance table."""
    if not folders:
        return f"(no spark {job} runs under results/original yet)\n"
    parts: list[str] = []
    for folder in folders:
        parts += [table(read_provenance(folder).broker, sweep_rows(folder)),
                  memory_line(folder), ""]
    parts.append(provenance_table(ctx.results, folders))
    return "\n".join(parts).rstrip("\n")


@figure("original-spark-split-brain", source="results/original/spark-split-brain-*")
def render_spark_split(ctx: Context) -> str:
    return spark_job_block(ctx, spark_split_folders(ctx.results), "split-brain",
                           spark_split_table)


# --- spark herd ------------------------------------------------------------------------------

SPARK_HERD_COLUMNS = (("coordination_requests", "requests"), ("watch_notifications", "notif."),
                      ("rebalance_attempts", "attempts"), ("conflicts", "conflicts"),
                      ("rollbacks", "rollbacks"), ("members_paused", "paused"),
                      ("time_to_stable_s", "stable s"), ("lost", "lost"))


def spark_herd_folders(results: Path) -> list[Path]:
    return run_folders(results / HERD_AREA, "spark-herd-*", SWEEP_FILE)


def spark_herd_table(broker: str, rows: Sequence[dict[str, str]]) -> str:
    """One row per run (event, N, protocol, seed). A metric the original's JVM does not report
    (requests, notifications, rollbacks: the job cannot read them from a JVM) is "—"; a run
    that did not settle says so instead of a time."""
    head = ["event", "N", "P", "protocol", "members", "seed", "broker",
            *[t for _, t in SPARK_HERD_COLUMNS]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    order = {e: i for i, e in enumerate(EVENT_ORDER)}
    for r in sorted(rows, key=lambda r: (order.get(r["event"], 99), int(r["members"]),
                                         r["protocol"], int(r["seed"]))):
        cells = []
        for key, _ in SPARK_HERD_COLUMNS:
            value = observed(r["protocol"], key, num(r.get(key)))
            if key == "time_to_stable_s" and r.get("settled") == "false":
                cells.append("not settled")
            elif key == "time_to_stable_s" or value is None:
                cells.append(fmt(value, 2))
            else:
                cells.append(fmt(int(value), thousands=True))   # a count
        lines.append(f"| {r['event']} | {r['members']} | {r['partitions']} | {r['protocol']} | "
                     f"{implementation(r['protocol'])} | {r['seed']} | {broker} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


@figure("original-spark-herd", source="results/original/spark-herd-*")
def render_spark_herd(ctx: Context) -> str:
    return spark_job_block(ctx, spark_herd_folders(ctx.results), "herd", spark_herd_table)
