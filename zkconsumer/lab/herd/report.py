"""What ``experiment herd`` leaves in ``--out``: results.json (with fits), summary.md, two plots.

``results.json`` has the lab's shape (``{"runs": [...], "spec": {...}}``, each run a RunResult
with ``scenario: "herd"`` and ``params``) plus the top-level ``"fits"``:
``{"<protocol>/<event>": {"slope", "intercept", "r2", "points": [[N, requests], ...],
"server_slope"}}``.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zkconsumer.lab.herd.spec import SCENARIO, HerdResult, HerdSpec, fit_runs
from zkconsumer.lab.runs import RunResult, RunStatus
from zkconsumer.results.plotting import pyplot, save_png
from zkconsumer.results.portable import portable_command
from zkconsumer.tables import fmt

log = logging.getLogger(__name__)

# (metric, column title) in the order the summary shows them.
COLUMNS = (
    ("coordination_requests", "requests (clients)"),
    ("zk_requests_server", "ZK server (mntr)"),
    ("requests_disagreement", "disagree"),
    ("watch_notifications", "watch notif."),
    ("watch_notifications_server", "ZK server notif."),
    ("rebalance_attempts", "attempts"),
    ("members_rebalanced", "rebalanced"),
    ("conflicts", "conflicts"),
    ("rollbacks", "rollbacks"),
    ("time_to_stable_s", "stable s"),
    ("coordination_s", "coord. s"),
    ("failed_rebalances", "failed"),
    ("conflicting_decisions", "conflicting dec."),
)


# Movement columns, after "rebalanced": shown when the runs measured partitions_moved (sweeps
# recorded before it keep the table they were published with).
MOVEMENT_COLUMNS = (
    ("members_paused", "paused"),
    ("members_idle", "idle"),
    ("partitions_revoked", "revoked"),
    ("partitions_moved", "moved"),
)


def columns_of(runs: Sequence[RunResult]) -> tuple[tuple[str, str], ...]:
    """The summary's columns for these runs."""
    if not any("partitions_moved" in r.metrics for r in runs):
        return COLUMNS
    at = [m for m, _ in COLUMNS].index("members_rebalanced") + 1
    return (*COLUMNS[:at], *MOVEMENT_COLUMNS, *COLUMNS[at:])


def write_herd_results(result: HerdResult, path: Path) -> None:
    doc: dict[str, Any] = {"scenario": SCENARIO, "runs": [r.to_json() for r in result.runs],
                           "spec": result.spec.to_json(), "fits": result.fits}
    path.write_text(json.dumps(doc, indent=2, default=str) + "\n", encoding="utf-8")


def read_herd_results(path: Path) -> tuple[list[RunResult], dict[str, Any]]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    runs = [RunResult.from_json(r) for r in doc["runs"]]
    return runs, doc.get("fits") or fit_runs(runs)


def _cell(run: RunResult, metric: str) -> str:
    value = run.metrics.get(metric)
    if metric == "requests_disagreement" and value is not None:
        return f"{100 * value:.1f}%"
    return fmt(value)


def summary_table(runs: Sequence[RunResult]) -> str:
    columns = columns_of(runs)
    head = ["protocol", "event", "N", "group", *[title for _, title in columns]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes: list[str] = []
    order = {p: i for i, p in enumerate(dict.fromkeys(r.protocol for r in runs))}
    for r in sorted(runs, key=lambda r: (order[r.protocol], r.event, r.members)):
        sizes = (f"{r.params.get('size_before', '?')}→{r.params.get('size_after', '?')}"
                 if r.params else "")
        if r.status != RunStatus.OK.value:
            lines.append("| " + " | ".join([r.protocol, r.event, str(r.members), sizes,
                                            f"**{r.status}**"] + [""] * (len(columns) - 1))
                         + " |")
            notes.append(f"- {r.protocol}/{r.event} at N={r.members}: {r.status}: {r.reason}")
            continue
        lines.append("| " + " | ".join([r.protocol, r.event, str(r.members), sizes,
                                        *[_cell(r, m) for m, _ in columns]]) + " |")
        if r.reason:
            notes.append(f"- {r.protocol}/{r.event} at N={r.members}: {r.reason}")
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def fits_table(fits: dict[str, dict[str, Any]]) -> str:
    lines = ["| protocol/event | slope (clients) | slope (ZK server) | r² | points [N, requests] |",
             "|---|---|---|---|---|"]
    for key, fit in fits.items():
        server, r2 = fit.get("server_slope"), fit.get("r2")
        server_text = "—" if server is None else f"{server:.2f}"
        r2_text = "—" if r2 is None else f"{r2:.3f}"
        client_text = "—" if fit.get("basis") == "server" else f"{fit['slope']:.2f}"
        lines.append(f"| {key} | {client_text} | {server_text} | {r2_text} | "
                     f"{fit['points']} |")
    return "\n".join(lines) + "\n"


def write_herd_summary(result: HerdResult, path: Path, command: str | None = None) -> None:
    spec = result.spec
    parts = ["# Herd effect: cost of one membership change vs group size", "",
             f"Group sizes N = {', '.join(map(str, spec.sizes))} on {spec.partitions} "
             f"partitions; events: {', '.join(spec.events)} (join: N → N+1; leave: the member "
             f"that joined leaves, N+1 → N). ZooKeeper session timeout "
             f"{spec.timing.session_timeout_ms} ms, rebalance.backoff.ms "
             f"{spec.timing.rebalance_backoff_ms}, members in threads, one growing group per "
             f"protocol, nothing produced.{_kip848_heartbeat(spec)}", ""]
    if command:
        parts += ["Reproduce with:", "", f"    {portable_command(command)}", ""]
    parts += ["## Requests per event against N (least squares of log requests on log N)", "",
              fits_table(result.fits), "",
              "## Every event", "", summary_table(result.runs), "",
              "Columns: requests the clients counted in the window (ZooKeeper operations; "
              "broker groups: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, "
              "OffsetFetch, FindCoordinator); the ZooKeeper server's count from mntr "
              "(packets received, minus pings estimated over a quiet window, session "
              "connects/closes and the mntr command itself) and how far it is from the "
              "clients' count; watch notifications members received, and the server's count of "
              "those it sent; rebalance attempts; "
              "members that ran a rebalance; members that stopped fetching some partition "
              "(paused) and that at some instant fetched nothing (idle), the leaver aside; "
              "partition stops (revoked) and partitions whose fetcher changed between the "
              "event and the end of the window (moved); owner conflicts; rollbacks; seconds "
              "until the "
              "group was stable (every partition fetched by one member, for good) and until "
              "its last coordination record (attempt, revoke, assign...); rebalances "
              "abandoned; members whose final decision in a round differed from the "
              "others'. — : not applicable (broker groups set no watches, talk to no "
              "ZooKeeper, and one leader decides). See docs/experiments.md.", ""]
    path.write_text("\n".join(parts), encoding="utf-8")


def _kip848_heartbeat(spec: HerdSpec) -> str:
    """The KIP-848 groups' heartbeat interval, when the sweep has any (a broker setting)."""
    from zkconsumer.lab.drivers import get_driver
    from zkconsumer.testing.kraft import DEFAULT_CONSUMER_HEARTBEAT_MS

    if not any(get_driver(p).option("group.protocol") == "consumer" for p in spec.protocols):
        return ""
    hb = spec.timing.consumer_heartbeat_interval_ms
    return (f" KIP-848 groups: heartbeat interval {hb or DEFAULT_CONSUMER_HEARTBEAT_MS} ms "
            f"(group.consumer.heartbeat.interval.ms{', the broker default' if hb is None else ''}"
            f"); their requests include the ConsumerGroupHeartbeat requests each member counted.")


def _size_ticks(ax: Any, sizes: Sequence[int]) -> None:
    """The sweep's sizes as the only x ticks of a log axis (no 6×10⁰ minor labels)."""
    from matplotlib.ticker import NullLocator

    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticks(list(sizes))
    ax.set_xticklabels([str(x) for x in sizes])


def _series(runs: Sequence[RunResult], metric: str) -> dict[str, list[tuple[int, float]]]:
    out: dict[str, list[tuple[int, float]]] = {}
    for r in runs:
        value = r.metrics.get(metric) if r.status == RunStatus.OK.value else None
        if value is not None:
            out.setdefault(f"{r.protocol}/{r.event}", []).append((r.members, float(value)))
    return {k: sorted(v) for k, v in out.items()}


def plot_requests(runs: Sequence[RunResult], fits: dict[str, dict[str, Any]], path: Path
                  ) -> Path | None:
    """Requests per event against N, log-log, each series with its fitted line and slope."""
    series = _series(runs, "coordination_requests")
    if not series:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 5.2))
    cmap = plt.get_cmap("tab10")
    for i, (key, pts) in enumerate(series.items()):
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        fit = fits.get(key)
        label = key if fit is None else f"{key}: slope {fit['slope']:.2f}"
        marker = "o" if key.endswith("/join") else "s"
        ax.plot(xs, ys, marker=marker, linestyle="none", color=cmap(i % 10), label=label)
        if fit is not None and len(xs) >= 2:
            lo, hi = min(xs), max(xs)
            fx = [lo * (hi / lo) ** (k / 20) for k in range(21)]
            ax.plot(fx, [math.exp(fit["intercept"]) * x ** fit["slope"] for x in fx],
                    color=cmap(i % 10), linewidth=1)
    all_x = sorted({p[0] for pts in series.values() for p in pts})
    if len(all_x) >= 2:
        lo, hi = all_x[0], all_x[-1]
        ref = max(p[1] for pts in series.values() for p in pts if p[0] == hi)
        ax.plot([lo, hi], [ref * (lo / hi) ** 2, ref], color="grey", linestyle=":",
                linewidth=1, label="slope 2 (reference)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    _size_ticks(ax, all_x)
    ax.set_xlabel("stable group size N before the event")
    ax.set_ylabel("coordination requests per event")
    ax.set_title("Requests per membership event (join ●, leave ■), log-log with fitted slope",
                 fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", linewidth=0.3)
    return save_png(fig, path)


def plot_time_to_stable(runs: Sequence[RunResult], path: Path) -> Path | None:
    """Time to stable (solid) and to the last coordination record (dotted) against N."""
    series = _series(runs, "time_to_stable_s")
    coordination = _series(runs, "coordination_s")
    if not series:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    cmap = plt.get_cmap("tab10")
    for i, (key, pts) in enumerate(series.items()):
        marker = "o" if key.endswith("/join") else "s"
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=cmap(i % 10),
                label=f"{key}: stable")
        coord = coordination.get(key)
        if coord:
            ax.plot([p[0] for p in coord], [p[1] for p in coord], marker=marker,
                    linestyle=":", fillstyle="none", color=cmap(i % 10),
                    label=f"{key}: coordination done")
    xs = sorted({p[0] for pts in series.values() for p in pts})
    ax.set_xscale("log")
    _size_ticks(ax, xs)
    ax.set_xlabel("stable group size N before the event")
    ax.set_ylabel("seconds from the event until stable")
    ax.set_title("After one membership change: until stable (solid), until the last "
                 "coordination record (dotted)", fontsize=9)
    ax.legend(fontsize=7, ncol=2)
    ax.grid(True, linewidth=0.3)
    return save_png(fig, path)


def write_herd_outputs(result: HerdResult, out_dir: Path, command: str | None = None,
                       json_file: Path | None = None) -> list[Path]:
    """``results.json``, ``summary.md``, ``herd-requests.png``, ``herd-time-to-stable.png``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [out_dir / "results.json", out_dir / "summary.md"]
    write_herd_results(result, written[0])
    write_herd_summary(result, written[1], command)
    if json_file is not None:
        write_herd_results(result, json_file)
        written.append(json_file)
    try:
        for p in (plot_requests(result.runs, result.fits, out_dir / "herd-requests.png"),
                  plot_time_to_stable(result.runs, out_dir / "herd-time-to-stable.png")):
            if p is not None:
                written.append(p)
    except Exception:  # plots are a view; the numbers are already on disk
        log.exception("plotting failed; results.json and summary.md are complete")
    return written


__all__ = ["HerdSpec", "read_herd_results", "write_herd_outputs", "write_herd_results"]
