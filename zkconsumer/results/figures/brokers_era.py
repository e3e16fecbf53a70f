"""docs/brokers.md: the herd and split-brain experiments on the 0.10.2 coordinator next to Tansu.

Sources: ``results/brokers/herd-<broker>/`` (``zkconsumer experiment herd`` on the broker-side
protocols, one folder per broker), ``results/brokers/split-<scenario>-<broker>/`` (the
split-brain scenarios on Apache Kafka), and the Tansu runs of the same scenarios already committed
under ``results/lab/split-<scenario>/`` (the rows of the broker-side protocols). Every row names
the broker its run used, read from the folder's ``meta.json``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zkconsumer.lab.runs import RunResult, RunStatus
from zkconsumer.lab.splitbrain.report import COLUMNS as SPLIT_COLUMNS
from zkconsumer.results.compact import COMPACT_FILE
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure
from zkconsumer.scenarios.protocols import BROKER, SPLIT_BRAIN, of_family
from zkconsumer.tables import fmt, median

SOURCE = "results/brokers"
# The broker-side protocols of the runs at scale (the herd and split-brain sweeps).
BROKER_PROTOCOLS = of_family(SPLIT_BRAIN, BROKER)
HERD_COLUMNS = (
    ("coordination_requests", "requests (clients)"), ("JoinGroup", "JoinGroup"),
    ("SyncGroup", "SyncGroup"), ("Heartbeat", "Heartbeat"),
    ("rebalance_attempts", "attempts"), ("members_rebalanced", "rebalanced"),
    ("members_paused", "paused"), ("time_to_stable_s", "stable s"),
    ("coordination_s", "coord. s"),
)
# Tansu's runs of each scenario, committed with docs/experiments.md (all protocols; the broker
# ones are shown here).
TANSU_SPLIT = {"zombie": "lab/split-zombie", "stale-view": "lab/split-stale"}


def load_runs(folder: Path) -> tuple[list[RunResult], dict[str, Any]]:
    doc = json.loads((folder / COMPACT_FILE).read_text(encoding="utf-8"))
    return [RunResult.from_json(r) for r in doc["runs"]], doc


def ordered_by_broker(folders: Sequence[Path]) -> list[Path]:
    """Tansu first, then Apache Kafka: the order every table of the page uses."""
    return sorted(folders, key=lambda p: (not read_provenance(p).broker.startswith("tansu"),
                                          read_provenance(p).broker))


def provenance_table(results: Path, folders: Sequence[Path]) -> str:
    lines = ["| results | broker | date | revision | cores | load at start → end | command |",
             "|---|---|---|---|---|---|---|"]
    for folder in folders:
        p = read_provenance(folder)
        load, end = p.machine.get("loadavg") or [], p.machine.get("loadavg_end") or []
        load_text = (f"{load[0]:.1f} → {end[0]:.1f}" if load and end  # type: ignore[index]
                     else "?")
        lines.append(f"| `results/{folder.relative_to(results)}` | {p.broker} | {p.date} | "
                     f"`{p.short_revision}` | {p.machine.get('cores', '?')} | {load_text} | "
                     f"`{p.command}` |")
    return "\n".join(lines) + "\n"


# --- herd ------------------------------------------------------------------------------------

def herd_cell(run: RunResult, metric: str) -> str:
    if metric in ("JoinGroup", "SyncGroup", "Heartbeat"):
        return fmt((run.metrics.get("requests_by_type") or {}).get(metric, 0))
    return fmt(run.metrics.get(metric))


def herd_table(by_broker: Sequence[tuple[str, list[RunResult]]]) -> str:
    head = ["protocol", "event", "N", "broker", *[t for _, t in HERD_COLUMNS]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    keys = sorted({(r.protocol, r.event, r.members) for _, runs in by_broker for r in runs},
                  key=lambda k: (BROKER_PROTOCOLS.index(k[0]) if k[0] in BROKER_PROTOCOLS
                                 else 9, k[1], k[2]))
    notes = []
    for protocol, event, n in keys:
        for broker, runs in by_broker:
            for r in runs:
                if (r.protocol, r.event, r.members) != (protocol, event, n):
                    continue
                if r.status != RunStatus.OK.value:
                    cells = [f"**{r.status}**"] + [""] * (len(HERD_COLUMNS) - 1)
                    notes.append(f"- {protocol}/{event} at N={n} on {broker}: {r.reason}")
                else:
                    cells = [herd_cell(r, m) for m, _ in HERD_COLUMNS]
                lines.append("| " + " | ".join([protocol, event, str(n), broker, *cells]) + " |")
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def herd_fits(by_broker: Sequence[tuple[str, dict[str, Any]]]) -> str:
    lines = ["| protocol/event | broker | slope (clients) | r² | points [N, requests] |",
             "|---|---|---|---|---|"]
    keys = sorted({k for _, fits in by_broker for k in fits})
    for key in keys:
        for broker, fits in by_broker:
            if key in fits:
                f = fits[key]
                r2 = "—" if f.get("r2") is None else f"{f['r2']:.3f}"
                lines.append(f"| {key} | {broker} | {f['slope']:.2f} | {r2} | {f['points']} |")
    return "\n".join(lines) + "\n"


@figure("brokers-herd", source=SOURCE)
def render_herd(ctx: Context) -> str:
    folders = ordered_by_broker([p for p in (ctx.results / "brokers").glob("herd-*")
                                 if (p / COMPACT_FILE).is_file() and (p / "meta.json").is_file()])
    if not folders:
        return "(no herd runs under results/brokers yet)\n"
    loaded = [(read_provenance(f).broker, *load_runs(f)) for f in folders]
    runs = [(b, [r for r in rs if r.protocol in BROKER_PROTOCOLS]) for b, rs, _ in loaded]
    fits = [(b, {k: v for k, v in (doc.get("fits") or {}).items()
                 if k.split("/")[0] in BROKER_PROTOCOLS}) for b, _, doc in loaded]
    return "\n".join([herd_table(runs), "Fitted log-log slopes of requests per event:", "",
                      herd_fits(fits), provenance_table(ctx.results, folders)])


# --- split brain -----------------------------------------------------------------------------

def split_cell(values: list[Any]) -> str:
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return f"{sum(present)}/{len(present)}"
    return fmt(median(present), 2)


def split_table(scenario: str, by_broker: Sequence[tuple[str, list[RunResult]]]) -> str:
    cols = SPLIT_COLUMNS[scenario]
    head = ["protocol", "broker", "n", *[t for _, t in cols]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes = []
    for protocol in BROKER_PROTOCOLS:
        for broker, runs in by_broker:
            mine = [r for r in runs if r.protocol == protocol]
            if not mine:
                continue
            ok = [r for r in mine if r.status == RunStatus.OK.value]
            n = f"{len(ok)}/{len(mine)}"
            if not ok:
                cells = [f"**{mine[0].status}**"] + [""] * (len(cols) - 1)
                notes.append(f"- {protocol} on {broker}: {mine[0].reason}")
            else:
                cells = [split_cell([r.metrics.get(k) for r in ok]) for k, _ in cols]
            lines.append("| " + " | ".join([protocol, broker, n, *cells]) + " |")
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def refusals(runs: Sequence[RunResult]) -> str:
    """The error codes the zombie's late commits got in the broker-side runs, as recorded."""
    seen: dict[str, None] = {}
    for r in runs:
        if r.protocol in BROKER_PROTOCOLS:
            for code in ((r.details or {}).get("zombie_view") or {}).get("rejections") or []:
                seen[str(code)] = None
    return ", ".join(f"`{c}`" for c in seen) or "none"


def split_folders(results: Path, scenario: str) -> list[Path]:
    kafka = [p for p in (results / "brokers").glob(f"split-{scenario}-*")
             if (p / COMPACT_FILE).is_file() and (p / "meta.json").is_file()]
    tansu = results / TANSU_SPLIT[scenario]
    return ordered_by_broker(([tansu] if (tansu / COMPACT_FILE).is_file() else []) + kafka)


def render_split(scenario: str, ctx: Context) -> str:
    folders = split_folders(ctx.results, scenario)
    if not folders:
        return f"(no {scenario} runs under results/ yet)\n"
    by_broker = [(read_provenance(f).broker, load_runs(f)[0]) for f in folders]
    parts = [split_table(scenario, by_broker)]
    if scenario == "zombie":
        parts.append("Refusals the zombie's late commits got: " + "; ".join(
            f"on {broker}, {refusals(runs)}" for broker, runs in by_broker) + ".\n")
    return "\n".join([*parts, provenance_table(ctx.results, folders)])


@figure("brokers-zombie", source=SOURCE)
def render_zombie(ctx: Context) -> str:
    return render_split("zombie", ctx)


@figure("brokers-stale-view", source=SOURCE)
def render_stale(ctx: Context) -> str:
    return render_split("stale-view", ctx)
