"""docs/scale.md: calibration, held-out validation and the simulated sweep, from results/scale/.

Every block reads committed files only (no simulation here, so a block never changes when the
model does; re-scoring is a command whose output is committed beside the runs):

* ``results/scale/calibration/``: ``measured.json`` and ``measured.measurements.json``
  (``zkconsumer calibrate``), ``calibration.json`` and ``fit-report.json`` (``spark fit``);
* ``results/scale/validation-plan.json``: the cells and tolerances, fixed before the runs;
* ``results/scale/fitting/score.json``, ``results/scale/validation-*/score*.json``
  (``spark validate --json``) and the real sweeps beside them;
* ``results/scale/sim-sweep*/sweep.csv`` (``spark herd --mode sim``).
"""

from __future__ import annotations

import csv
import json
import logging
import re
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zkconsumer.results.provenance import read_provenance, short_revision
from zkconsumer.results.registry import Context, figure
from zkconsumer.tables import median

log = logging.getLogger(__name__)

_FIT_COMMAND = re.compile(r"fitted by `zkconsumer spark fit [^`]*`")
_MEASURED = re.compile(r"^measured by calibrate ")

SCALE = "scale"
CAL = f"{SCALE}/calibration"
SWEEP = f"{SCALE}/sim-sweep"
SWEEP3 = f"{SCALE}/sim-sweep-3servers"
HEADLINE_N = 10_000
HEADLINE_P = 128
JOIN_SIZES = (4, 64, 1000, 10_000)


def _json(path: Path) -> Any:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing (see zkconsumer/results/figures/scale.py for "
                                "the command that writes it)")
    return json.loads(path.read_text())


def _calibration_value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(f"{k:g}: {f:g}" for k, f in value)
    return str(value)


def _meta_line(folder: Path) -> str:
    p = read_provenance(folder)
    load = p.machine.get("loadavg", [])
    end = p.machine.get("loadavg_end", [])
    return (f"`{p.command}` at revision `{p.short_revision}`, {p.date}, {p.machine.get('cores')} "
            f"cores, load average {load[0] if load else '?'} at the start and "
            f"{end[0] if end else '?'} at the end")


@figure("scale-calibration", source=f"results/{CAL}")
def calibration_table(ctx: Context) -> str:
    cal = _json(ctx.results / CAL / "calibration.json")
    origins = cal.get("provenance", {})
    lines = [f"From `results/{CAL}/calibration.json`; measured by {_meta_line(ctx.results / CAL)}.",
             "", "| parameter | value | origin |", "|---|---|---|"]
    for name in sorted(k for k in cal if k not in ("version", "source", "provenance")):
        origin = _FIT_COMMAND.sub("fitted by `zkconsumer spark fit` (the command above)",
                                  origins.get(name, "NOT RECORDED"))
        origin = _MEASURED.sub("measured by `zkconsumer calibrate` (the command above), ",
                               origin)
        lines.append(f"| `{name}` | {_calibration_value(cal[name])} | {origin.replace('|', '/')} |")
    return "\n".join(lines)


@figure("scale-read-service", source=f"results/{CAL}")
def read_service(ctx: Context) -> str:
    raw = _json(ctx.results / CAL / "measured.measurements.json")
    cal = _json(ctx.results / CAL / "calibration.json")
    bursts = raw["read_service"]
    lines = ["| burst | reader processes x sessions | reads served | reads/s | server CPU s | "
             "server CPU per read (us) | server read latency, mean (ms) | load |",
             "|---|---|---|---|---|---|---|---|"]
    for i, b in enumerate(bursts):
        tag = "warm-up (not used)" if i == 0 else str(i)
        service = "—" if b["service_us"] is None else f"{b['service_us']:.1f}"
        lines.append(f"| {tag} | {b['processes']} x {b['clients'] // b['processes']} | "
                     f"{b['reads_served']:,} | {b['reads_per_s']:,.0f} | {b['server_cpu_s']} | "
                     f"{service} | {b['server_latency_avg_ms']:.2f} | {b['loadavg'][0]} |")
    service = cal["zk_read_service_us"]
    ensemble = service / 3
    lines += ["", f"**Measured**: `zk_read_service_us` = {service:g} us of server CPU per read "
              f"(the median of bursts 1-{len(bursts) - 1}): one core of this embedded server "
              f"serves at most ~{1e6 / service:,.0f} reads/s. **Extrapolated, not measured**: "
              f"a 3-server ensemble with the members spread evenly serves reads at all three "
              f"servers, {ensemble:.3g} us per read as the group sees it "
              f"(`spark herd --mode sim --zk-servers 3`)."]
    return "\n".join(lines)


@figure("scale-crowd", source=f"results/{CAL}")
def crowd(ctx: Context) -> str:
    raw = _json(ctx.results / CAL / "measured.measurements.json")
    pooled: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for s in raw["crowd"]:
        if s["busy"] == s["clients"]:
            pooled.setdefault((s["op"], s["clients"]), []).append(s)
    lines = ["| K busy clients | op | bursts | requests | CPU ms / request | wall ms / request / "
             "thread |", "|---|---|---|---|---|---|"]
    for (op, k), samples in sorted(pooled.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        requests = sum(s["requests"] for s in samples)
        cpu = sum(s["cpu_ms"] * s["requests"] for s in samples) / max(1, requests)
        wall = statistics.median(s["wall_ms"] for s in samples)
        lines.append(f"| {k} | {op} | {len(samples)} | {requests:,} | {cpu:.2f} | {wall:.1f} |")
    return "\n".join(lines)


@figure("scale-plan", source=f"results/{SCALE}/validation-plan.json")
def plan(ctx: Context) -> str:
    p = _json(ctx.results / SCALE / "validation-plan.json")
    t = p["tolerances"]
    fit, val = p["fitting"], p["validation"]
    shapes = ", ".join(f"N = {n} over P = {q}" for n, q in val["shapes"])
    return "\n".join([
        f"Written {p['written']} (`results/{SCALE}/validation-plan.json`).", "",
        "| set | protocols | cells | events | session timeout | real runs per cell |",
        "|---|---|---|---|---|---|",
        f"| fitting | {', '.join(fit['protocols'])} | N in {fit['members']} over P = "
        f"{fit['partitions']} | {', '.join(fit['events'])} | "
        f"{', '.join(str(s) for s in fit['session_timeout_ms'])} ms | {p['real_seeds']} |",
        f"| validation | {', '.join(val['protocols'])} | {shapes} | {', '.join(val['events'])} "
        f"| {', '.join(str(s) for s in val['session_timeout_ms'])} ms | {p['real_seeds']} |",
        "", f"Tolerances: requests within {t['requests']:.0%}, attempts "
        f"{'equal' if t['attempts'] == 0 else '±' + str(t['attempts'])}, time to stable within "
        f"{t['time_to_stable']:.0%}. Rule: {p['rule']}", "",
        f"Disjoint: {val['disjoint_from_fitting']}."])


def _score_table(score: dict[str, Any]) -> list[str]:
    checks = score["checks"]
    ok = sum(c["ok"] for c in checks)
    prov = score["provenance"]
    source = score["calibration_source"]
    source = source if len(source) <= 160 else source[:157] + "..."
    lines = [f"{ok} of {len(checks)} cells within tolerance; scored by `{prov['command']}` at "
             f"revision `{short_revision(prov['revision'])}` ({prov['date']}; calibration: "
             f"{source}).",
             "", "| protocol | N | P | event | session | real runs (settled) | requests real / "
             "sim (err) | attempts real / sim | time to stable real / sim s (err) | ok |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for c in checks:
        lines.append(
            f"| {c['protocol']} | {c['members']} | {c['partitions']} | {c['event']} | "
            f"{c['session_timeout_ms'] / 1000:g} s | {c['real_runs']} ({c['real_settled']}) | "
            f"{c['real_requests']:,.0f} / {c['sim_requests']:,.0f} "
            f"({_err(c['real_requests'], c['sim_requests'])}) | "
            f"{c['real_attempts']:g} / {c['sim_attempts']:g} | {_t(c['real_tts'])} / "
            f"{_t(c['sim_tts'])} ({_err(c['real_tts'], c['sim_tts'])}) | "
            f"{'yes' if c['ok'] else 'no: ' + _flags(c)} |")
    return lines


def _flags(c: dict[str, Any]) -> str:
    return "".join(f for f, ok in (("R", c["requests_ok"]), ("A", c["attempts_ok"]),
                                   ("T", c["tts_ok"])) if not ok)


def _err(real: float | None, sim: float | None) -> str:
    if real is None or sim is None:
        return "—"
    return f"{100 * abs(sim - real) / max(abs(real), 1e-3):.0f}%"


def _t(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


@figure("scale-fitting", source=f"results/{SCALE}/fitting")
def fitting(ctx: Context) -> str:
    report = _json(ctx.results / CAL / "fit-report.json")
    fitted = ", ".join(f"`{k}` = {v:g}" for k, v in report["fitted"].items())
    lines = [f"`{report['provenance']['command']}`: {fitted} (fitting loss "
             f"{report['loss_before']:g} -> {report['loss_after']:g}; every candidate's loss in "
             f"`results/{CAL}/fit-report.json`). The fitting cells scored with the result "
             "(not a validation: these are the runs it was fitted to):", ""]
    lines += _score_table(_json(ctx.results / SCALE / "fitting" / "score.json"))
    return "\n".join(lines)


def _scores(ctx: Context) -> list[Path]:
    return sorted(p for d in sorted((ctx.results / SCALE).glob("validation-*")) if d.is_dir()
                  for p in d.glob("score*.json"))


@figure("scale-validation", source=f"results/{SCALE}/validation-*")
def validation(ctx: Context) -> str:
    out: list[str] = []
    for path in _scores(ctx):
        score = _json(path)
        out += [f"**`{path.relative_to(ctx.results.parent)}`**: {score.get('label', '')}", ""]
        out += _score_table(score)
        out.append("")
    missing = _unscored_cells(ctx)
    if missing:
        out += [f"**Not run**: {len(missing)} planned held-out cells have no real runs "
                "committed, so no score (see *Not done*):", "",
                "| protocol | N | P | events | session |", "|---|---|---|---|---|"]
        out += [f"| {proto} | {n} | {p} | {', '.join(events)} | {session / 1000:g} s |"
                for proto, n, p, events, session in missing]
    return "\n".join(out).rstrip("\n")


def _unscored_cells(ctx: Context) -> list[tuple[str, int, int, list[str], int]]:
    """The plan's validation cells without a committed real sweep."""
    plan = _json(ctx.results / SCALE / "validation-plan.json")["validation"]
    folder = ctx.results.parent / plan["folder"]
    return [(proto, n, p, plan["events"], session)
            for proto in plan["protocols"] for n, p in plan["shapes"]
            for session in plan["session_timeout_ms"]
            if not (folder / f"{proto}-n{n}-p{p}" / "sweep.csv").is_file()]


def _sweep(folder: Path) -> list[dict[str, str]]:
    with open(folder / "sweep.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def _column_median(rows: Sequence[dict[str, str]], column: str) -> float | None:
    return median(float(r[column]) for r in rows if r[column] not in ("", None))


def _cell(rows: Sequence[dict[str, str]], protocol: str, n: int, p: int, event: str
          ) -> list[dict[str, str]]:
    return [r for r in rows if r["protocol"] == protocol and int(r["members"]) == n
            and int(r["partitions"]) == p and r["event"] == event]


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    if seconds >= 120:
        return f"{seconds:,.0f} s ({seconds / 60:.0f} min)"
    return f"{seconds:.2f} s" if seconds < 10 else f"{seconds:.1f} s"


@figure("scale-sim-joins", source=f"results/{SWEEP}")
def sim_joins(ctx: Context) -> str:
    rows, rows3 = _sweep(ctx.results / SWEEP), _sweep(ctx.results / SWEEP3)
    protocols = sorted({r["protocol"] for r in rows}, key=lambda x: (x.startswith("kip"), x))
    header = " | ".join(f"N = {n:,}" for n in JOIN_SIZES)
    lines = [f"Joins at P = {HEADLINE_P}, medians over seeds (`results/{SWEEP}`: "
             f"{_meta_line(ctx.results / SWEEP)}).", "",
             f"| protocol | {header} |", "|---|" + "---|" * len(JOIN_SIZES)]
    for protocol in protocols:
        cells = [_cell(rows, protocol, n, HEADLINE_P, "join") for n in JOIN_SIZES]
        star = "*" if protocol == "kip848" else ""
        lines.append(f"| {protocol}{star} requests | " + " | ".join(
            f"{_column_median(c, 'coordination_requests') or 0:,.0f}" for c in cells) + " |")
        lines.append(f"| {protocol}{star} time to stable | " + " | ".join(
            _duration(_column_median(c, "time_to_stable_s")) for c in cells) + " |")
    cal = _json(ctx.results / CAL / "calibration.json")
    headline = _cell(rows, "zk-range", HEADLINE_N, HEADLINE_P, "join")
    head = _column_median(headline, "time_to_stable_s")
    head3 = _column_median(_cell(rows3, "zk-range", HEADLINE_N, HEADLINE_P, "join"),
                           "time_to_stable_s")
    reqs = _column_median(headline, "coordination_requests") or 0
    service = cal["zk_read_service_us"]
    lines += ["", f"**Headline, a model figure**: a zk-range join at N = {HEADLINE_N:,} (P = "
              f"{HEADLINE_P}) costs {reqs:,.0f} ZooKeeper requests and is stable after "
              f"{_duration(head)} on one ZooKeeper server. *Caveat, next to it*: no run here "
              f"loads a server with 10^8 reads; the time is the simulator's, bound by the "
              f"server's read service time, {service:g} us per read as measured on this "
              f"machine's embedded server (above). With the labelled 3-server extrapolation "
              f"(`results/{SWEEP3}`, reads spread over three servers): {_duration(head3)}."]
    lines += ["", _plot(ctx, rows)]
    return "\n".join(lines)


def _plot(ctx: Context, rows: Sequence[dict[str, str]]) -> str:
    from zkconsumer.results.plotting import pyplot, save_svg

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for protocol in sorted({r["protocol"] for r in rows}):
        sizes = sorted({int(r["members"]) for r in rows if r["protocol"] == protocol})
        for ax, column in zip(axes, ("coordination_requests", "time_to_stable_s"), strict=True):
            pts = [(n, _column_median(_cell(rows, protocol, n, HEADLINE_P, "join"), column))
                   for n in sizes]
            pts = [(n, v) for n, v in pts if v]
            ax.plot([n for n, _ in pts], [v for _, v in pts], marker="o", label=protocol)
    for ax, title in zip(axes, ("requests per join", "time to stable (s)"), strict=True):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("members N")
        ax.set_title(f"{title}, P = {HEADLINE_P} (simulated)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    save_svg(fig, ctx.figures / "scale-sim-joins.svg")
    return f"![simulated joins vs N]({ctx.plot_link('scale-sim-joins.svg')})"


@figure("scale-real-runs", source=f"results/{SCALE}/fitting")
def real_runs(ctx: Context) -> str:
    """The committed real sweeps (fitting and held-out), medians over their runs."""
    lines = ["| folder | protocol | N | P | event | session | runs (settled) | requests | "
             "attempts | conflicts | time to stable s | load at start / end |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    folders = sorted(p.parent for p in (ctx.results / SCALE).glob("*/*/sweep.csv"))
    for folder in folders:
        meta = read_provenance(folder).machine
        load = f"{meta.get('loadavg', ['?'])[0]} / {meta.get('loadavg_end', ['?'])[0]}"
        rows = _sweep(folder)
        keys = sorted({(r["protocol"], int(r["members"]), int(r["partitions"]), r["event"],
                        r.get("session_timeout_ms", "")) for r in rows})
        for proto, n, p, event, session in keys:
            cell = [r for r in _cell(rows, proto, n, p, event)
                    if r.get("session_timeout_ms", "") == session]
            tts = _column_median(cell, "time_to_stable_s")
            settled = sum(r["time_to_stable_s"] not in ("", None) for r in cell)
            lines.append(
                f"| `{folder.relative_to(ctx.results.parent)}` | {proto} | {n} | {p} | {event} "
                f"| {float(session or 0) / 1000:g} s | {len(cell)} ({settled}) | "
                f"{_column_median(cell, 'coordination_requests') or 0:,.0f} | "
                f"{_column_median(cell, 'rebalance_attempts') or 0:g} | "
                f"{_column_median(cell, 'conflicts') or 0:g} | {_t(tts)} | {load} |")
    return "\n".join(lines)
