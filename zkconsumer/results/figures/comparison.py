"""docs/comparison.md: the rebalance lab on Apache Kafka 2.4.1 and on Tansu 0.6.0, side by side.

Every block reads ``results/comparison/``: compact ``experiment compare`` runs
(:mod:`zkconsumer.results.comparison_data`), one folder per chunk with its ``meta.json``, whose
``broker`` decides the column group a run lands in (never mixed); the Kafka profile's check
(``kafka-model-check``) and the simulator's two broker profiles (``sim-profiles``), both written
by ``python -m zkconsumer.sim.kafka_check results/comparison``.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from zkconsumer.results.comparison_data import RESULTS_FILE, load_runs
from zkconsumer.results.plotting import pyplot, save_svg
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure

SOURCE = "results/comparison"
KAFKA, TANSU = "apache-kafka-2.4.1", "tansu-0.6.0"
LABELS = {KAFKA: "Apache Kafka 2.4.1", TANSU: "Tansu 0.6.0"}
PROTOCOLS = ("zk-range", "zk-leader-range", "eager-range", "cooperative-sticky", "static-range")
EVENTS = ("join", "leave", "crash", "rolling-bounce")
COLUMNS = (("time_to_stable_s", "stable s"), ("members_paused", "paused"),
           ("members_idle", "idle"), ("partition_seconds_unavailable", "part·s"),
           ("coordination_requests", "reqs"), ("group_rebalances", "rebal."),
           ("duplicates", "dups"))


def folders(ctx: Context, prefix: str) -> list[Path]:
    root = ctx.results / "comparison"
    return sorted(p for p in root.glob(f"{prefix}*") if (p / RESULTS_FILE).is_file())


def runs_by_broker(ctx: Context, prefix: str) -> dict[str, list[dict[str, Any]]]:
    """Runs of the folders named ``prefix*``, keyed by the broker their meta.json names."""
    out: dict[str, list[dict[str, Any]]] = {}
    for folder in folders(ctx, prefix):
        out.setdefault(read_provenance(folder).broker, []).extend(load_runs(folder))
    return out


def num(value: float | None) -> str:
    if value is None:
        return "—"
    if abs(value - round(value)) < 1e-9 and abs(value) >= 10:
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else f"{value:.0f}"


def median_of(runs: Sequence[dict[str, Any]], key: str,
              get: Callable[[dict[str, Any]], Any] | None = None) -> float | None:
    values = [(get(r) if get else r["metrics"].get(key)) for r in runs]
    present = [float(v) for v in values if v is not None]
    return statistics.median(present) if present else None


def cell_text(runs: Sequence[dict[str, Any]]) -> list[str]:
    """One broker's columns for one (protocol, event): n, then medians, or why none."""
    if not runs:
        return ["not run"] + [""] * len(COLUMNS)
    ok = [r for r in runs if r["status"] == "ok"]
    n = f"{len(ok)}/{len(runs)}"
    if not ok:
        status = runs[0]["status"]
        return [n, f"**{status}**"] + [""] * (len(COLUMNS) - 1)
    return [n] + [num(median_of(ok, key)) for key, _ in COLUMNS]


def select(runs: Sequence[dict[str, Any]], protocol: str, event: str) -> list[dict[str, Any]]:
    return [r for r in runs if r["protocol"] == protocol and r["event"] == event]


@figure("comparison-table", source=SOURCE)
def comparison_table(ctx: Context) -> str:
    by = runs_by_broker(ctx, "compare-")
    brokers = [b for b in (KAFKA, TANSU) if b in by]
    if not brokers:
        return "_No comparison results committed yet._"
    head = ["protocol", "event"]
    for b in brokers:
        head += [f"{LABELS[b]}: n"] + [f"{short}" for _, short in COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for event in EVENTS:
        for protocol in PROTOCOLS:
            cells = [protocol, event]
            for b in brokers:
                cells += cell_text(select(by[b], protocol, event))
            lines.append("| " + " | ".join(cells) + " |")
    lost = {b: sum(int(r["metrics"].get("lost") or 0) for r in by[b] if r["status"] == "ok")
            for b in brokers}
    ok = {b: sum(1 for r in by[b] if r["status"] == "ok") for b in brokers}
    lines.append("")
    lines.append("Records lost over every measured run: " + "; ".join(
        f"{LABELS[b]} {lost[b]} in {ok[b]} runs" for b in brokers) + ".")
    for b in (KAFKA, TANSU):
        if b not in by:
            lines += ["", f"{LABELS[b]}: no runs committed under `{SOURCE}/compare-{b}-*` yet, "
                      "so no column (figures without committed runs are not shown)."]
    reasons = sorted({r["reason"] for b in brokers for r in by[b]
                      if r["status"] == "unsupported" and r.get("reason")})
    for reason in reasons:
        lines.append("")
        lines.append(f"Unsupported: \"{reason}\".")
    return "\n".join(lines)


@figure("comparison-conditions", source=SOURCE)
def comparison_conditions(ctx: Context) -> str:
    lines = []
    for folder in folders(ctx, "compare-") + folders(ctx, "kip-"):
        meta = read_provenance(folder)
        lines.append(f"- `{folder.name}` ({meta.conditions()}): `{meta.command}`")
    return "\n".join(lines) if lines else "_No comparison results committed yet._"


def kip_median(runs: Sequence[dict[str, Any]], protocol: str, event: str, key: str,
               detail: bool = False) -> float | None:
    """Median of a metric (or of a run detail, e.g. ``partitions_stopped``) over a cell."""
    sel = select(runs, protocol, event)
    if detail:
        return median_of(sel, key, lambda run: (run.get("details") or {}).get(key))
    return median_of(sel, key)


def kip_rows(ctx: Context) -> list[dict[str, Any]]:
    """Per N: the rolling bounce (static vs dynamic) and the cooperative vs eager join."""
    runs = list(runs_by_broker(ctx, "compare-").get(KAFKA, []))
    runs += runs_by_broker(ctx, "kip-").get(KAFKA, [])
    rows = []
    for n in sorted({r["members"] for r in runs}):
        at = [r for r in runs if r["members"] == n and r["status"] == "ok"]

        def med(protocol: str, event: str, key: str, detail: bool = False,
                at: list[dict[str, Any]] = at) -> float | None:
            return kip_median(at, protocol, event, key, detail)

        rows.append({
            "n": n,
            "static_rebalances": med("static-range", "rolling-bounce", "group_rebalances"),
            "eager_rebalances": med("eager-range", "rolling-bounce", "group_rebalances"),
            "static_paused": med("static-range", "rolling-bounce", "members_paused"),
            "eager_paused": med("eager-range", "rolling-bounce", "members_paused"),
            "static_stable": med("static-range", "rolling-bounce", "time_to_stable_s"),
            "eager_stable": med("eager-range", "rolling-bounce", "time_to_stable_s"),
            "coop_stopped": med("cooperative-sticky", "join", "partitions_stopped", True),
            "coop_moved": med("cooperative-sticky", "join", "partitions_moved", True),
            "eager_stopped": med("eager-range", "join", "partitions_stopped", True),
            "eager_moved": med("eager-range", "join", "partitions_moved", True),
            "coop_paused": med("cooperative-sticky", "join", "members_paused"),
            "eager_join_paused": med("eager-range", "join", "members_paused"),
            "coop_rebalances": med("cooperative-sticky", "join", "group_rebalances"),
        })
    return rows


@figure("comparison-kip", source=SOURCE)
def comparison_kip(ctx: Context) -> str:
    rows = kip_rows(ctx)
    if not rows:
        return "_No Kafka 2.4.1 runs committed yet._"
    lines = ["| N | rolling bounce: group rebalances static / dynamic (2N) | members paused "
             "static / dynamic | stable s static / dynamic | join: partitions stopped "
             "cooperative / eager | partitions moved | members paused cooperative / eager | "
             "cooperative rebalances |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['n']} | {num(r['static_rebalances'])} / {num(r['eager_rebalances'])} "
            f"({2 * r['n']}) | {num(r['static_paused'])} / {num(r['eager_paused'])} | "
            f"{num(r['static_stable'])} / {num(r['eager_stable'])} | "
            f"{num(r['coop_stopped'])} / {num(r['eager_stopped'])} | "
            f"{num(r['coop_moved'])} | {num(r['coop_paused'])} / "
            f"{num(r['eager_join_paused'])} | {num(r['coop_rebalances'])} |")
    lines += ["",
              f"![KIP-345: rebalances in a rolling bounce]({ctx.plot_link('kip345-bounce.svg')})",
              f"![KIP-429: partitions stopped by a join]({ctx.plot_link('kip429-join.svg')})"]
    _plot_kip(ctx, rows)
    return "\n".join(lines)


def _plot_kip(ctx: Context, rows: list[dict[str, Any]]) -> None:
    plt = pyplot()
    ns = [r["n"] for r in rows]

    def series(key: str) -> list[float]:
        return [float("nan") if r[key] is None else r[key] for r in rows]

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.plot(ns, [2 * n for n in ns], ":", color="grey", label="2N (a leave and a join each)")
    ax.plot(ns, series("eager_rebalances"), "o-", label="dynamic members (eager-range)")
    ax.plot(ns, series("static_rebalances"), "s-", label="static members (static-range)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.set_xlabel("group size N")
    ax.set_ylabel("group rebalances in one rolling bounce")
    ax.set_title("Rolling bounce on Apache Kafka 2.4.1", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_svg(fig, ctx.figures / "kip345-bounce.svg")

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.plot(ns, [2 * n for n in ns], ":", color="grey", label="all partitions (P = 2N)")
    ax.plot(ns, series("eager_stopped"), "o-", label="eager-range: stopped")
    ax.plot(ns, series("coop_stopped"), "s-", label="cooperative-sticky: stopped")
    ax.plot(ns, series("coop_moved"), "x--", label="cooperative-sticky: moved")
    ax.set_xscale("log", base=2)
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.set_xlabel("group size N before the join")
    ax.set_ylabel("partitions")
    ax.set_title("One member joins, Apache Kafka 2.4.1", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_svg(fig, ctx.figures / "kip429-join.svg")


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def model_check_block(folder: Path) -> str:
    """Every cell of one check; the verdict counts the held-out cells only."""
    path = folder / "checks.json"
    if not path.is_file():
        return "_The Kafka profile has not been checked yet: its figures are **modelled**._"
    doc = json.loads(path.read_text())
    cells = doc["cells"]
    lines = ["| protocol | N | P | event | runs | requests real / sim (error) | stable s real / "
             "sim (error) | paused real / sim | attempts real / sim | verdict |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for c in cells:
        verdict = "pass" if c["ok"] else "**fail**"
        if not c.get("held_out", True):
            verdict += " (seen, not counted)"
        lines.append(
            f"| {c['protocol']} | {c['members']} | {c['partitions']} | {c['event']} | "
            f"{c['runs']} | {num(c['real_requests'])} / {num(c['sim_requests'])} "
            f"({_pct(c['requests_error'])}) | {num(c['real_tts'])} / {num(c['sim_tts'])} "
            f"({_pct(c['tts_error'])}) | {num(c['real_paused'])} / {num(c['sim_paused'])} | "
            f"{num(c['real_attempts'])} / {num(c['sim_attempts'])} | {verdict} |")
    counted = [c for c in cells if c.get("held_out", True)]
    passed = sum(1 for c in counted if c["ok"])
    seen_failing = [c for c in cells if not c.get("held_out", True) and not c["ok"]]
    tol = doc["tolerances"]
    if counted and passed == len(counted) and not seen_failing:
        verdict = "every cell within tolerance: the profile is **validated** on these cells"
    elif counted and passed == len(counted):
        verdict = (f"but {len(seen_failing)} cells it was corrected on still fail, so its "
                   "figures stay labelled **modelled**")
    else:
        verdict = "so the profile's figures stay labelled **modelled**"
    prov = read_provenance(folder)
    lines += ["", f"{passed} of {len(counted)} held-out cells within both tolerances "
              f"(requests {_pct(tol['requests'])}, time to stable "
              f"{_pct(tol['time_to_stable'])}; simulator medians over seeds "
              f"{doc['seeds'][0]}–{doc['seeds'][-1]}; `{prov.command}` at revision "
              f"`{prov.short_revision}`), {verdict}."]
    return "\n".join(lines)


@figure("comparison-model-check", source=f"{SOURCE}/kafka-model-check")
def comparison_model_check(ctx: Context) -> str:
    return model_check_block(ctx.results / "comparison" / "kafka-model-check")


@figure("comparison-model-check-v1", source=f"{SOURCE}/kafka-model-check-v1")
def comparison_model_check_v1(ctx: Context) -> str:
    return model_check_block(ctx.results / "comparison" / "kafka-model-check-v1")


@figure("comparison-sim-profiles", source=f"{SOURCE}/sim-profiles")
def comparison_sim_profiles(ctx: Context) -> str:
    path = ctx.results / "comparison" / "sim-profiles" / "rows.json"
    if not path.is_file():
        return "_Not simulated yet._"
    rows = json.loads(path.read_text())["rows"]
    lines = ["| N | event | protocol | requests: Tansu-timed model / Kafka 2.4 *modelled* | "
             "stable s: Tansu-timed model / Kafka 2.4 *modelled* | paused (both) |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        t, k = r["tansu"], r["kafka"]
        paused = (num(t["paused"]) if t["paused"] == k["paused"]
                  else f"{num(t['paused'])} / {num(k['paused'])}")
        lines.append(f"| {r['members']:,} | {r['event']} | {r['protocol']} | "
                     f"{num(t['requests'])} / {num(k['requests'])} | {num(t['tts'])} / "
                     f"{num(k['tts'])} | {paused} |")
    return "\n".join(lines)


ZOMBIE_ROWS = (("late_commits_accepted", "zombie's late commits accepted"),
               ("late_commits_rejected", "zombie's late commits rejected"),
               ("offset_regressions", "committed offset went back"),
               ("double_owned_intervals", "double-owned stretches"),
               ("delivered_by_two", "messages delivered by two members"),
               ("duplicates", "duplicates"), ("lost", "lost"))


@figure("comparison-zombie", source=f"{SOURCE}/zombie-apache-kafka-2.4.1")
def comparison_zombie(ctx: Context) -> str:
    by = runs_by_broker(ctx, "zombie-")
    if not by:
        return "_Not measured yet._"
    lines = []
    for broker, runs in sorted(by.items()):
        protocols = [p for p in PROTOCOLS if any(r["protocol"] == p for r in runs)]
        ok = {p: [r for r in runs if r["protocol"] == p and r["status"] == "ok"]
              for p in protocols}
        lines += [f"{LABELS.get(broker, broker)}, medians of the repeats:", "",
                  "| metric | " + " | ".join(protocols) + " |",
                  "|---|" + "---|" * len(protocols),
                  "| runs | " + " | ".join(
                      f"{len(ok[p])}/{sum(1 for r in runs if r['protocol'] == p)}"
                      for p in protocols) + " |"]
        for key, label in ZOMBIE_ROWS:
            lines.append(f"| {label} | " + " | ".join(
                num(median_of(ok[p], key)) for p in protocols) + " |")
        refusals = sorted({e for p in protocols for r in ok[p]
                           for e in ((r.get("details") or {}).get("zombie_view") or {})
                           .get("rejections", [])})
        if refusals:
            lines += ["", "Refusals the zombies' late commits got: " + ", ".join(
                f"`{e}`" for e in refusals) + "."]
        lines.append("")
    return "\n".join(lines).rstrip()


KAFKA4_PREFIX = "compare-apache-kafka-4"
KAFKA4_PROTOCOLS = ("zk-range", "zk-leader-range", "eager-range", "cooperative-sticky",
                    "static-range", "consumer-uniform", "consumer-range",
                    "static-consumer-uniform", "static-consumer-range")
KAFKA4_COLUMNS = (("time_to_stable_s", "stable s"), ("members_paused", "paused"),
                  ("members_idle", "idle"), ("partitions_revoked", "revoked"),
                  ("partition_seconds_unavailable", "part·s"),
                  ("group_rebalances", "rebal."), ("duplicates", "dups"), ("lost", "lost"))


def kafka4_value(run: dict[str, Any], key: str) -> Any:
    """A metric of a run, or one of its extras (``partitions_revoked``, ``members_idle``)."""
    if key in run["metrics"]:
        return run["metrics"][key]
    return ((run.get("details") or {}).get("extra_metrics") or {}).get(key)


def kafka4_table(runs: Sequence[dict[str, Any]]) -> list[str]:
    """Protocols x events of one Apache Kafka 4 chunk: medians over the repeats that ran."""
    protocols = [p for p in KAFKA4_PROTOCOLS if any(r["protocol"] == p for r in runs)]
    head = ["event", "protocol", "n"] + [short for _, short in KAFKA4_COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for event in EVENTS:
        for protocol in protocols:
            cell = select(runs, protocol, event)
            if not cell:
                continue
            ok = [r for r in cell if r["status"] == "ok"]
            values = ([num(median_of(ok, key, lambda r, k=key: kafka4_value(r, k)))
                       for key, _ in KAFKA4_COLUMNS] if ok
                      else [f"**{cell[0]['status']}**"] + [""] * (len(KAFKA4_COLUMNS) - 1))
            lines.append("| " + " | ".join([event, protocol, f"{len(ok)}/{len(cell)}",
                                            *values]) + " |")
    return lines


@figure("comparison-kafka4", source=f"{SOURCE}/{KAFKA4_PREFIX}*")
def comparison_kafka4(ctx: Context) -> str:
    """Every protocol, KIP-848's among them, against one Apache Kafka 4 broker: one table per
    committed chunk, headed by the KIP-848 heartbeat its broker gave the groups."""
    chunks = folders(ctx, KAFKA4_PREFIX)
    if not chunks:
        return "_No Apache Kafka 4 runs committed yet._"
    lines: list[str] = []
    for folder in chunks:
        meta = read_provenance(folder)
        runs = load_runs(folder)
        hb = meta.extra.get("consumer_heartbeat_interval_ms")
        source = meta.extra.get("consumer_heartbeat_source", "")
        ok = [r for r in runs if r["status"] == "ok"]
        lost = sum(int(r["metrics"].get("lost") or 0) for r in ok)
        lines += [f"`{folder.name}`: KIP-848 heartbeat {hb} ms"
                  + (f" ({source})" if source else "") + f"; {meta.conditions()}; "
                  f"`{meta.command}`", ""]
        lines += kafka4_table(runs)
        lines += ["", f"Records lost over the chunk's {len(ok)} measured runs: {lost}."]
        reasons = sorted({r["reason"] for r in runs if r["status"] != "ok" and r.get("reason")})
        lines += [f"Not measured: \"{reason}\"." for reason in reasons]
        lines.append("")
    return "\n".join(lines).rstrip()
