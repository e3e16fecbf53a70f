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

from zkconsumer.results.figures.placement import placement_line
from zkconsumer.results.figures.scale_findings import spread
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure
from zkconsumer.tables import median, relative_error

log = logging.getLogger(__name__)

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


def source_line(folder: Path, results: Path) -> str:
    """Where a table comes from: its results folder and the one command that reproduces it
    (date, revision, machine and load stay in the folder's ``meta.json``)."""
    command = read_provenance(folder).command
    return f"`{folder.relative_to(results.parent)}/`; reproduce: `{command}`"


def origin_text(origin: str) -> str:
    """A parameter's recorded origin, short: measured and fitted parameters name the command
    (shown once above the table), constants and assumptions keep their rule."""
    if _MEASURED.match(origin):
        return "measured (`calibrate`)"
    if origin.startswith("fitted by "):
        return "fitted (`spark fit`)"
    return origin.replace("|", "/")


@figure("scale-calibration", source=f"results/{CAL}")
def calibration_table(ctx: Context) -> str:
    cal = _json(ctx.results / CAL / "calibration.json")
    origins = cal.get("provenance", {})
    prov = read_provenance(ctx.results / CAL)
    lines = [f"From `results/{CAL}/calibration.json` (measured {prov.date[:10]} on "
             f"{prov.machine.get('cores')} cores; the commands above).",
             "", "| parameter | value | origin |", "|---|---|---|"]
    for name in sorted(k for k in cal if k not in ("version", "source", "provenance")):
        origin = origin_text(origins.get(name, "NOT RECORDED"))
        lines.append(f"| `{name}` | {_calibration_value(cal[name])} | {origin} |")
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


def _flags(c: dict[str, Any]) -> str:
    return "".join(f for f, ok in (("R", c["requests_ok"]), ("A", c["attempts_ok"]),
                                   ("T", c["tts_ok"])) if not ok)


def _t(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


CellKey = tuple[str, int, int, str]


def real_observations(folders: Sequence[Path]) -> dict[CellKey, list[dict[str, str]]]:
    """Every real run of the sweeps in ``folders``, by (protocol, N, P, event)."""
    out: dict[CellKey, list[dict[str, str]]] = {}
    for folder in folders:
        for r in _sweep(folder):
            key = (r["protocol"], int(r["members"]), int(r["partitions"]), r["event"])
            out.setdefault(key, []).append(r)
    return out


def real_spread(rows: Sequence[dict[str, str]], column: str, fmt: str) -> str:
    """The real median of a column with its range over the runs."""
    values = [float(r[column]) for r in rows if r[column] not in ("", None)]
    return spread(values, fmt) if values else "—"


def _key(c: dict[str, Any]) -> CellKey:
    return (c["protocol"], c["members"], c["partitions"], c["event"])


def _score_table(score: dict[str, Any], real: dict[CellKey, list[dict[str, str]]]
                 ) -> list[str]:
    checks = score["checks"]
    ok = sum(c["ok"] for c in checks)
    lines = [f"{ok} of {len(checks)} cells within tolerance. Real: median of each cell's runs "
             f"(range); simulated: median of {score.get('sim_seeds', 5)} draws.",
             "", "| protocol | N | P | event | session | real runs (settled) | requests real / "
             "sim (err) | attempts real / sim | time to stable real / sim s (err) | ok |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for c in checks:
        rows = real.get(_key(c), [])
        lines.append(
            f"| {c['protocol']} | {c['members']} | {c['partitions']} | {c['event']} | "
            f"{c['session_timeout_ms'] / 1000:g} s | {c['real_runs']} ({c['real_settled']}) | "
            f"{real_spread(rows, 'coordination_requests', ',.0f')} / "
            f"{c['sim_requests']:,.0f} ({relative_error(c['real_requests'], c['sim_requests'])}"
            f") | {c['real_attempts']:g} / {c['sim_attempts']:g} | "
            f"{real_spread(rows, 'time_to_stable_s', '.2f')} / {_t(c['sim_tts'])} "
            f"({relative_error(c['real_tts'], c['sim_tts'], '.2f', ' s')}) | "
            f"{'yes' if c['ok'] else 'no: ' + _flags(c)} |")
    return lines


def _sweep_folders(ctx: Context, sub: str) -> list[Path]:
    return sorted(p.parent for p in (ctx.results / SCALE / sub).glob("*/sweep.csv"))


@figure("scale-fitting", source=f"results/{SCALE}/fitting")
def fitting(ctx: Context) -> str:
    report = _json(ctx.results / CAL / "fit-report.json")
    fitted = ", ".join(f"`{k}` = {v:g}" for k, v in report["fitted"].items())
    score = _json(ctx.results / SCALE / "fitting" / "score.json")
    lines = [f"Fitted: {fitted} (fitting loss {report['loss_before']:g} -> "
             f"{report['loss_after']:g}; every candidate's loss in "
             f"`results/{CAL}/fit-report.json`). The fitting cells scored with the result (not a "
             f"validation: these are the runs it was fitted to; `results/{SCALE}/fitting/`; "
             f"reproduce: `{score['provenance']['command']}`):", ""]
    lines += _score_table(score, real_observations(_sweep_folders(ctx, "fitting")))
    return "\n".join(lines)


def _scores(ctx: Context) -> list[Path]:
    return sorted(p for d in sorted((ctx.results / SCALE).glob("validation-*")) if d.is_dir()
                  for p in d.glob("score*.json"))


def _sim_cell(c: dict[str, Any]) -> tuple[str, str, str]:
    return (f"{c['sim_requests']:,.0f} ({relative_error(c['real_requests'], c['sim_requests'])})",
            f"{c['sim_attempts']:g}",
            f"{_t(c['sim_tts'])} ({relative_error(c['real_tts'], c['sim_tts'], '.2f', ' s')})")


@figure("scale-validation", source=f"results/{SCALE}/validation-*")
def validation(ctx: Context) -> str:
    """Every scoring of the held-out runs side by side, with the real runs' range."""
    scores = [(path, _json(path)) for path in _scores(ctx)]
    real = real_observations(_sweep_folders(ctx, "validation-1"))
    names = [path.parent.name for path, _ in scores]
    by_cell: dict[CellKey, dict[str, dict[str, Any]]] = {}
    for (_path, score), name in zip(scores, names, strict=True):
        for c in score["checks"]:
            by_cell.setdefault(_key(c), {})[name] = c
    sims = " / ".join(f"sim {i + 1}" for i in range(len(names)))
    out = ["| protocol | N | P | event | real runs (settled) | requests: real / " + sims
           + " (err) | attempts: real / " + sims + " | time to stable s: real / " + sims
           + " (err) | out of tolerance: " + " / ".join(str(i + 1) for i in range(len(names)))
           + " |", "|---|---|---|---|---|---|---|---|---|"]
    for key in sorted(by_cell):
        cells = by_cell[key]
        first = next(iter(cells.values()))
        rows = real.get(key, [])
        sim = [_sim_cell(cells[n]) if n in cells else ("—", "—", "—") for n in names]
        out.append(
            "| " + " | ".join(str(x) for x in key) + f" | {first['real_runs']} "
            f"({first['real_settled']}) | "
            + " / ".join([real_spread(rows, "coordination_requests", ",.0f"),
                          *(s[0] for s in sim)]) + " | "
            + " / ".join([f"{first['real_attempts']:g}", *(s[1] for s in sim)]) + " | "
            + " / ".join([real_spread(rows, "time_to_stable_s", ".2f"), *(s[2] for s in sim)])
            + " | " + " / ".join((_flags(cells[n]) or "pass") if n in cells else "—"
                                 for n in names) + " |")
    out.append("")
    for i, (path, score) in enumerate(scores, 1):
        checks = score["checks"]
        out.append(f"- sim {i}: `{path.relative_to(ctx.results.parent)}`, "
                   f"{sum(c['ok'] for c in checks)} of {len(checks)} cells within tolerance; "
                   f"{score.get('label', '')}; simulated: median of "
                   f"{score.get('sim_seeds', 5)} draws.")
    if scores:
        out += ["", "Real: median of each cell's runs (range), from "
                f"`results/{SCALE}/validation-1/*/sweep.csv`. R, A, T: requests, attempts, time "
                f"to stable out of tolerance. Reproduce the last scoring: "
                f"`{scores[-1][1]['provenance']['command']}`."]
    missing = _unscored_cells(ctx)
    if missing:
        out += ["", f"**Not run**: {len(missing)} planned held-out cells have no real runs "
                "committed, so no score:", "",
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


def _duration_spread(values: Sequence[float]) -> str:
    """A simulated time's median with its range, in the units of :func:`_duration`."""
    if not values:
        return "never"
    med = statistics.median(values)
    digits = ",.0f" if med >= 120 else ".1f" if med >= 10 else ".2f"
    lo, hi = format(min(values), digits), format(max(values), digits)
    return _duration(med) + ("" if lo == hi else f" (range {lo}–{hi} s)")


@figure("scale-sim-joins", source=f"results/{SWEEP}")
def sim_joins(ctx: Context) -> str:
    rows, rows3 = _sweep(ctx.results / SWEEP), _sweep(ctx.results / SWEEP3)
    protocols = sorted({r["protocol"] for r in rows}, key=lambda x: (x.startswith("kip"), x))
    header = " | ".join(f"N = {n:,}" for n in JOIN_SIZES)
    draws = min(len(_cell(rows, p, n, HEADLINE_P, "join")) for p in protocols
                for n in JOIN_SIZES)
    lines = [f"Joins at P = {HEADLINE_P}, simulated: median of {draws} draws (seeds) per cell, "
             "range in brackets where the draws differ; "
             f"{source_line(ctx.results / SWEEP, ctx.results)}.",
             "", placement_line(ctx.results / SWEEP, ctx.results / SWEEP3),
             "", f"| protocol | {header} |", "|---|" + "---|" * len(JOIN_SIZES)]
    for protocol in protocols:
        cells = [_cell(rows, protocol, n, HEADLINE_P, "join") for n in JOIN_SIZES]
        star = "*" if protocol == "kip848" else ""
        lines.append(f"| {protocol}{star} requests | " + " | ".join(
            spread([float(r["coordination_requests"]) for r in c]) for c in cells) + " |")
        lines.append(f"| {protocol}{star} time to stable | " + " | ".join(
            _duration_spread([float(r["time_to_stable_s"]) for r in c if r["time_to_stable_s"]])
            for c in cells) + " |")
    cal = _json(ctx.results / CAL / "calibration.json")
    headline = _cell(rows, "zk-range", HEADLINE_N, HEADLINE_P, "join")
    head = _column_median(headline, "time_to_stable_s")
    head3 = _column_median(_cell(rows3, "zk-range", HEADLINE_N, HEADLINE_P, "join"),
                           "time_to_stable_s")
    reqs = _column_median(headline, "coordination_requests") or 0
    service = cal["zk_read_service_us"]
    lines += ["", f"**Headline, a model figure**: a zk-range join at N = {HEADLINE_N:,} (P = "
              f"{HEADLINE_P}) costs {reqs:,.0f} ZooKeeper requests and is stable after "
              f"{_duration(head)} on one ZooKeeper server (median of {len(headline)} draws). "
              "*Caveat, next to it*: no run here "
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
            draws = len(_cell(rows, protocol, sizes[0], HEADLINE_P, "join"))
            ax.plot([n for n, _ in pts], [v for _, v in pts], marker="o",
                    label=f"{protocol}, simulated (median of {draws} draws)")
    for ax, title in zip(axes, ("requests per join", "time to stable (s)"), strict=True):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("members N")
        ax.set_title(f"{title}, P = {HEADLINE_P}, simulated only", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    save_svg(fig, ctx.figures / "scale-sim-joins.svg")
    return f"![simulated joins vs N]({ctx.plot_link('scale-sim-joins.svg')})"
