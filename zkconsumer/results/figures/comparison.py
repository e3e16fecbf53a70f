"""docs/comparison.md: the rebalance lab on Apache Kafka 2.4.1 and on Tansu 0.6.0, side by side.

Every block reads ``results/comparison/``: compact ``experiment compare`` runs
(:mod:`zkconsumer.results.comparison_data`), one folder per chunk with its ``meta.json``, whose
``broker`` decides the column group a run lands in (never mixed); the Kafka profile's check
(``kafka-model-check``) and the simulator's two broker profiles (``sim-profiles``), both written
by ``zkconsumer sim kafka-check results/comparison``.
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
from zkconsumer.scenarios.protocols import COMPARED

SOURCE = "results/comparison"
KAFKA, TANSU = "apache-kafka-2.4.1", "tansu-0.6.0"
LABELS = {KAFKA: "Apache Kafka 2.4.1", TANSU: "Tansu 0.6.0"}
PROTOCOLS = COMPARED
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
    return [n] + [with_range(ok, key) if key == "time_to_stable_s" else num(median_of(ok, key))
                  for key, _ in COLUMNS]


def with_range(runs: Sequence[dict[str, Any]], key: str) -> str:
    """The median and, when the runs differ, their range: a lone run is shown as it is."""
    values = [float(v) for r in runs if (v := r["metrics"].get(key)) is not None]
    if not values:
        return "—"
    med, lo, hi = num(statistics.median(values)), num(min(values)), num(max(values))
    return med if lo == hi else f"{med} ({lo}–{hi})"


def conflict_runs(runs: Sequence[dict[str, Any]], protocol: str, event: str) -> tuple[int, int]:
    """(runs that met an owner-znode conflict, measured runs) of one ZooKeeper cell."""
    ok = [r for r in select(runs, protocol, event) if r["status"] == "ok"]
    return sum(1 for r in ok if (r["metrics"].get("conflicts") or 0) > 0), len(ok)


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
    lines += ["", "Medians of the `n` runs; `stable s` with the runs' range when they differ."]
    races = []
    for b in brokers:
        cells = [f"{event} {hit} of {total}" for event in EVENTS
                 for hit, total in [conflict_runs(by[b], "zk-range", event)] if total]
        races.append(f"{LABELS[b]}: " + ", ".join(cells))
    lines += ["", "`zk-range` runs that met an owner-znode conflict (a claim before the previous "
              "owner released: a rollback, then the 1 s backoff): " + "; ".join(races) + "."]
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
    rows = []
    for folder in folders(ctx, "compare-") + folders(ctx, "kip-"):
        meta = read_provenance(folder)
        spec = json.loads((folder / RESULTS_FILE).read_text()).get("spec") or {}
        load, end = meta.machine.get("loadavg") or ["?"], meta.machine.get("loadavg_end") or ["?"]
        rows.append(f"| `{SOURCE}/{folder.name}/` | {LABELS.get(meta.broker, meta.broker)} | "
                    f"{spec_text(spec)} | `{meta.short_revision}` | {meta.date[:16]} | "
                    f"{load[0]} → {end[0]} |")
    if not rows:
        return "_No comparison results committed yet._"
    return "\n".join(["| chunk | broker | N, P, events, runs | revision | date | load (1 min) "
                      "start → end |", "|---|---|---|---|---|---|", *rows])


def spec_text(spec: dict[str, Any]) -> str:
    """A chunk's cells as its spec names them: group size, partitions, events, repeats."""
    events = ", ".join(spec.get("events") or [])
    repeat = spec.get("repeat", "?")
    runs = "one run per cell" if repeat == 1 else f"{repeat} runs per cell"
    return f"N = {spec.get('members', '?')}, P = {spec.get('partitions', '?')}, {events}, {runs}"


def kip_median(runs: Sequence[dict[str, Any]], protocol: str, event: str, key: str,
               detail: bool = False) -> float | None:
    """Median of a metric (or of a run detail, e.g. ``partitions_stopped``) over a cell."""
    sel = select(runs, protocol, event)
    if detail:
        return median_of(sel, key, lambda run: (run.get("details") or {}).get(key))
    return median_of(sel, key)


KIP_CELLS = (("static-range", "rolling-bounce"), ("eager-range", "rolling-bounce"),
             ("cooperative-sticky", "join"), ("eager-range", "join"))


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
            "runs": min((len(select(at, p, e)) for p, e in KIP_CELLS), default=0),
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


def kip_heading(sizes: Sequence[int]) -> str:
    """The section's heading, its range of N taken from the runs it shows."""
    if not sizes:
        return "## KIP-345 and KIP-429 on the real coordinator"
    lo, hi = min(sizes), max(sizes)
    span = f"N = {lo}" if lo == hi else f"N = {lo} to {hi}"
    return f"## KIP-345 and KIP-429 on the real coordinator, {span}"


@figure("comparison-kip-heading", source=SOURCE)
def comparison_kip_heading(ctx: Context) -> str:
    return kip_heading([r["n"] for r in kip_rows(ctx)])


@figure("comparison-kip", source=SOURCE)
def comparison_kip(ctx: Context) -> str:
    rows = kip_rows(ctx)
    if not rows:
        return "_No Kafka 2.4.1 runs committed yet._"
    lines = ["| N | runs per cell | rolling bounce: group rebalances static / dynamic (2N) | "
             "members paused static / dynamic | stable s static / dynamic | join: partitions "
             "stopped cooperative / eager | partitions moved | members paused cooperative / "
             "eager | cooperative rebalances |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        runs = "one run" if r["runs"] == 1 else f"median of {r['runs']}"
        lines.append(
            f"| {r['n']} | {runs} | {num(r['static_rebalances'])} / {num(r['eager_rebalances'])} "
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


def real_label(rows: Sequence[dict[str, Any]]) -> str:
    """How many real runs the points at each N are, for a plot's title."""
    by_count: dict[int, list[int]] = {}
    for r in rows:
        by_count.setdefault(r["runs"], []).append(r["n"])
    parts = [("one run" if c == 1 else f"median of {c} runs") + " at N = "
             + ", ".join(str(n) for n in ns) for c, ns in sorted(by_count.items(), reverse=True)]
    return "real: " + "; ".join(parts)


def _plot_kip(ctx: Context, rows: list[dict[str, Any]]) -> None:
    plt = pyplot()
    ns = [r["n"] for r in rows]

    def series(key: str) -> list[float]:
        return [float("nan") if r[key] is None else r[key] for r in rows]

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.plot(ns, [2 * n for n in ns], ":", color="grey", label="2N (a leave and a join each)")
    real = real_label(rows)
    ax.plot(ns, series("eager_rebalances"), "o-", label="dynamic members (eager-range), real")
    ax.plot(ns, series("static_rebalances"), "s-", label="static members (static-range), real")
    ax.set_xscale("log", base=2)
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.set_xlabel("group size N")
    ax.set_ylabel("group rebalances in one rolling bounce")
    ax.set_title(f"Rolling bounce on Apache Kafka 2.4.1\n{real}", fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_svg(fig, ctx.figures / "kip345-bounce.svg")

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.plot(ns, [2 * n for n in ns], ":", color="grey", label="all partitions (P = 2N)")
    ax.plot(ns, series("eager_stopped"), "o-", label="eager-range: stopped, real")
    ax.plot(ns, series("coop_stopped"), "s-", label="cooperative-sticky: stopped, real")
    ax.plot(ns, series("coop_moved"), "x--", label="cooperative-sticky: moved, real")
    ax.set_xscale("log", base=2)
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.set_xlabel("group size N before the join")
    ax.set_ylabel("partitions")
    ax.set_title(f"One member joins, Apache Kafka 2.4.1\n{real}", fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_svg(fig, ctx.figures / "kip429-join.svg")


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def members_after(members: int, event: str) -> int:
    """The group's size once the event is over: a join adds one, a leave or crash removes one."""
    return members + {"join": 1, "leave": -1, "crash": -1}.get(event, 0)


def attempts_per_member(cell: dict[str, Any]) -> str:
    """Real and simulated rebalance attempts, per member both: the lab sums the JoinGroups
    of every member, the simulator reports the busiest member's count."""
    size = members_after(int(cell["members"]), cell["event"])
    real = float(cell["real_attempts"])
    return (f"{real / size:.2f} ({num(real)} ÷ {size}) / {num(cell['sim_attempts'])}")


def model_check_block(folder: Path) -> str:
    """Every cell of one check; the verdict counts the held-out cells only."""
    path = folder / "checks.json"
    if not path.is_file():
        return "_The Kafka profile has not been checked yet: its figures are **modelled**._"
    doc = json.loads(path.read_text())
    cells = doc["cells"]
    lines = ["| protocol | N | P | event | runs | requests real / sim (error) | stable s real / "
             "sim (error) | paused real / sim | JoinGroups per member: real mean / sim busiest "
             "member | verdict |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for c in cells:
        verdict = "pass" if c["ok"] else "**fail**"
        if not c.get("held_out", True):
            verdict += " (seen, not counted)"
        lines.append(
            f"| {c['protocol']} | {c['members']} | {c['partitions']} | {c['event']} | "
            f"{'one run' if c['runs'] == 1 else c['runs']} | {num(c['real_requests'])} / "
            f"{num(c['sim_requests'])} "
            f"({_pct(c['requests_error'])}) | {num(c['real_tts'])} / {num(c['sim_tts'])} "
            f"({_pct(c['tts_error'])}) | {num(c['real_paused'])} / {num(c['sim_paused'])} | "
            f"{attempts_per_member(c)} | {verdict} |")
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
    lines += ["", "Real: median of the cell's runs (`runs`; one run is one run, not a median); "
              "simulated: median of the seeds' draws. JoinGroups per member: the lab counts "
              "every member's JoinGroups (real, divided here by the members after the event), "
              "the simulator the busiest member's; attempts are not scored.",
              "", f"{passed} of {len(counted)} held-out cells within both tolerances "
              f"(requests {_pct(tol['requests'])}, time to stable "
              f"{_pct(tol['time_to_stable'])}; simulator medians over seeds "
              f"{doc['seeds'][0]}–{doc['seeds'][-1]}; `{prov.command}` at revision "
              f"`{prov.short_revision}`), {verdict}."]
    return "\n".join(lines)


@figure("kafka-profile-check", source=f"{SOURCE}/kafka-model-check")
def kafka_profile_check(ctx: Context) -> str:
    return model_check_block(ctx.results / "comparison" / "kafka-model-check")


@figure("kafka-profile-first-check", source=f"{SOURCE}/kafka-model-check-v1")
def kafka_profile_first_check(ctx: Context) -> str:
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

