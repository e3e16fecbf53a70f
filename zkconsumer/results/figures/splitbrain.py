"""Generated blocks of docs/split-brain-at-scale.md, from ``results/splitbrain/``.

- ``splitbrain-real``: the real runs (every ``real-*/sweep.csv``), one line per run;
- ``splitbrain-validation``: the simulator against those runs (``validation/checks.csv``);
- ``splitbrain-validation-3``, ``-4``: the changed simulator against new held-out runs
  (``validation-N/checks.csv``, ``validation-N/unscored.csv``);
- ``splitbrain-giveup``: simulated probability that some member gives up in a storm, vs N and
  ``rebalance.max.retries`` (``sim-storm-r*/``), with a plot;
- ``splitbrain-zombie``: simulated double-owned partition-seconds vs N and the cut-off fraction
  (``sim-zombie-f*/``), log-log plot.
"""

from __future__ import annotations

import csv
import json
import logging
import re
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from zkconsumer.results.ancestry import Fix, read_fix
from zkconsumer.results.exclusions import sweep_rows
from zkconsumer.results.plotting import pyplot, save_svg
from zkconsumer.results.provenance import read_provenance, short_revision
from zkconsumer.results.registry import Context, figure

log = logging.getLogger(__name__)

AREA = "splitbrain"
BROKER = ("eager-range", "cooperative-sticky")
FIX_FOLDER = "fix-leader-watch"   # which real runs predate the leader-mode watch fix
PRE_FIX_MARK = "†"


def _rows(folder: Path) -> list[dict[str, str]]:
    return sweep_rows(folder)


def _meta(folder: Path) -> dict[str, Any]:
    path = folder / "meta.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def _num(v: str | None) -> float | None:
    return None if v in (None, "") else float(v)


def _f(v: float | None, digits: int = 1) -> str:
    return "—" if v is None else f"{v:,.{digits}f}"


def _provenance(folders: list[Path]) -> list[str]:
    return [f"- `{d.name}`: {read_provenance(d).conditions()}: `{read_provenance(d).command}`"
            for d in folders if (d / "meta.json").is_file()]


def _fix(ctx: Context) -> Fix | None:
    folder = ctx.results / AREA / FIX_FOLDER
    return read_fix(folder) if (folder / "meta.json").is_file() else None


def _fix_note(fix: Fix, pre: list[str]) -> list[str]:
    """The sentence under the real table that names the rows measured without the fix."""
    which = "; ".join(pre) if pre else "none"
    return ["", f"{PRE_FIX_MARK} measured before the leader-mode fix {fix.commit[:10]} "
                f"(\"{fix.subject}\"): a row is pre-fix when its protocol is one the fix "
                f"changes ({', '.join(fix.protocols)}) and its revision does not descend from "
                f"that commit (`git merge-base --is-ancestor`, stored in "
                f"`results/{AREA}/{FIX_FOLDER}/runs.csv`). Pre-fix rows: {which}. "
                "Rows of other protocols at those revisions are unaffected by it."]


@figure("splitbrain-real", source="results/splitbrain/real-*")
def real_runs(ctx: Context) -> str:
    folders = sorted((ctx.results / AREA).glob("real-*"))
    rows = [(d.name, r) for d in folders for r in _rows(d)]
    if not rows:
        return "No real runs committed yet."
    revision = {d.name: short_revision(str(_meta(d).get("revision", "?"))) for d in folders}
    fix = _fix(ctx)
    lines = ["| scenario | protocol | N | P | seed | double-owned part·s | zombie deliveries | "
             "delivered twice | offsets back | zombies stopped s | conflicts | rollbacks | "
             "max attempts | stale decisions | given up (members) | unowned part·s | "
             "stable s | verify | repaired | lost | revision |", "|" + "---|" * 21]
    na: dict[tuple[str, str, str, str], str] = {}
    pre = []
    for run, r in sorted(rows, key=lambda x: (x[1]["scenario"], x[1]["protocol"],
                                              int(x[1]["members"]), _meta_date(ctx, x[0]))):
        if r["applicable"] != "true" or r["reason"]:
            na[(r["protocol"], r["scenario"], r["members"], r["seed"])] = \
                f"{r['reason']} (`{run}`)"
            continue
        rev = revision[run]
        if fix is not None and fix.predates(run, r["protocol"]):
            rev += f" {PRE_FIX_MARK}"
            pre.append(f"{r['protocol']} {r['scenario']} N = {r['members']} (`{run}`)")
        gu = f"{r['rebalances_given_up']} ({r['gave_up_members']})"
        verify = {"true": "ok", "false": "FAILED"}.get(r["verify_ok"], "—")
        lines.append(
            f"| {r['scenario']} | {r['protocol']} | {r['members']} | {r['partitions']} | "
            f"{r['seed']} | {_f(_num(r['double_owned_partition_s']))} | "
            f"{r['zombie_deliveries']} | {r['delivered_twice']} | {r['offsets_went_back']} | "
            f"{_f(_num(r['zombie_stop_s']))} | {r['conflicts']} | {r['rollbacks']} | "
            f"{r['attempts_max']} | {r['stale_decisions']} | {gu} | "
            f"{_f(_num(r['unowned_partition_s']))} | {_f(_num(r['time_to_stable_s']))} | "
            f"{verify} | {'yes' if r['repaired'] == 'true' else 'no'} | {r['lost']} | {rev} |")
    if fix is not None:
        lines += _fix_note(fix, pre)
    if na:
        lines += ["", "Not applicable or failed:", ""]
        lines += [f"- {p} / {s} / N = {n} / seed {seed}: {why}"
                  for (p, s, n, seed), why in sorted(na.items())]
    lines += ["", "Runs (raw data, command, revision, machine and load in each folder's "
                  "`meta.json`):", "", *_provenance(folders)]
    return "\n".join(lines)


def _meta_date(ctx: Context, run: str) -> str:
    return str(_meta(ctx.results / AREA / run).get("date", ""))


@figure("splitbrain-validation", source="results/splitbrain/validation")
def validation(ctx: Context) -> str:
    """The first scoring (validation-plan.md), its plan's cells listed here."""
    folder = ctx.results / AREA / "validation"
    return _validation_block(folder, lambda cells: _unscored(ctx, cells))


@figure("splitbrain-validation-3", source="results/splitbrain/validation-3")
def validation_3(ctx: Context) -> str:
    """The scoring of validation-plan-3.json's new runs; its unscored cells come with it."""
    return _planned_validation(ctx.results / AREA / "validation-3")


@figure("splitbrain-validation-4", source="results/splitbrain/validation-4")
def validation_4(ctx: Context) -> str:
    """The scoring of validation-plan-4.json: the legacy storm under a budget of 2."""
    return _planned_validation(ctx.results / AREA / "validation-4")


def _planned_validation(folder: Path) -> str:
    def missing(_: set[tuple[str, ...]]) -> list[str]:
        path = folder / "unscored.csv"
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh))
        if not rows:
            return ["Every cell of the plan is scored."]
        return ["Cells of the plan without a score:", "",
                *(f"- {r['protocol']} {r['scenario']} N = {r['members']} seed {r['seed']}: "
                  f"{r['reason']}" for r in rows)]
    return _validation_block(folder, missing)


def _validation_block(folder: Path, unscored: Any) -> str:
    path = folder / "checks.csv"
    if not path.is_file():
        return "No validation committed yet."
    with open(path, newline="") as fh:
        checks = list(csv.DictReader(fh))
    cells: dict[tuple[str, ...], bool] = {}
    for c in checks:
        key = (c["protocol"], c["scenario"], c["members"], c["seed"])
        cells[key] = cells.get(key, True) and c["ok"] == "True"
    legacy = {k: ok for k, ok in cells.items() if k[0] == "zk-range"}
    lines = [f"**{sum(cells.values())} of {len(cells)} cells** "
             f"({sum(c['ok'] == 'True' for c in checks)} of {len(checks)} metric checks) "
             "within the tolerances fixed in advance. Of them, the legacy (`zk-range`) cells, "
             "the only ones whose metrics the model computes from timing rather than from a "
             f"protocol's guarantee: **{sum(legacy.values())} of {len(legacy)}**.", "",
             "| protocol | scenario | N | seed | metric | real | sim (median of 5 draws) | "
             "rule | ok | run |", "|---|---|---|---|---|---|---|---|---|---|"]
    for c in sorted(checks, key=lambda c: (c["scenario"], c["protocol"], int(c["members"]),
                                           int(c["seed"] or 0), c["metric"])):
        lines.append(f"| {c['protocol']} | {c['scenario']} | {c['members']} | "
                     f"{c['seed'] or 'all'} | "
                     f"{c['metric']} | {_f(_num(c['real']), 2)} | {_f(_num(c['sim']), 2)} | "
                     f"{c['rule']} | {'yes' if c['ok'] == 'True' else '**no**'} | "
                     f"{'`' + c['run'] + '`' if c.get('run') else '—'} |")
    return "\n".join(lines + ["", *unscored(set(cells)), "", *_provenance([folder])])


# The cells results/splitbrain/validation-plan.md names (scenario, N, protocols), seed 1.
PLAN_CELLS = [(sc, n, p) for sc, sizes, protocols in (
    ("zombie", (100, 200), ("zk-range", "zk-leader-range")),
    ("storm", (100, 200), ("zk-range", "zk-leader-range", *BROKER)),
    ("stale-view", (50, 100), ("zk-range", "zk-leader-range", *BROKER)))
    for n in sizes for p in protocols]


def _unscored(ctx: Context, scored: set[tuple[str, ...]]) -> list[str]:
    """The plan's cells without a score, each with the reason a real run recorded (or "not
    run")."""
    done = {(sc, int(n), p) for p, sc, n, _seed in scored}
    failed = {}
    for d in sorted((ctx.results / AREA).glob("real-*")):
        for r in _rows(d):
            if r["reason"] and r["applicable"] == "true":
                failed[(r["scenario"], int(r["members"]), r["protocol"])] = \
                    f"{r['reason']} (`{d.name}`)"
    missing = [c for c in PLAN_CELLS if c not in done]
    if not missing:
        return ["Every cell of the plan is scored."]
    return [f"Cells of the plan without a score ({len(missing)} of {len(PLAN_CELLS)}):", "",
            *(f"- {p} {sc} N = {n}: {failed.get((sc, n, p), 'not run')}"
              for sc, n, p in missing)]


def _by(rows: list[dict[str, str]], metric: str) -> dict[tuple[str, int], list[float]]:
    out: dict[tuple[str, int], list[float]] = defaultdict(list)
    for r in rows:
        v = _num(r.get(metric))
        if r["applicable"] == "true" and v is not None:
            out[(r["protocol"], int(r["members"]))].append(v)
    return out


def _suffix(folder: Path, prefix: str) -> str:
    return folder.name.removeprefix(prefix)


def _giveup_block(ctx: Context, prefix: str, svg: str, title: str) -> str:
    folders = sorted((ctx.results / AREA).glob(f"{prefix}*"),
                     key=lambda d: int(re.sub(r"\D", "", d.name.removeprefix(prefix)) or 0))
    if not folders:
        return "No simulated storm committed yet."
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    sizes = sorted({int(r["members"]) for d in folders for r in _rows(d)})
    header = ["protocol", "retries", *(f"N={n:,}" for n in sizes)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for d in folders:
        retries = _suffix(d, prefix)
        probs = _by(_rows(d), "p_give_up")
        for protocol in sorted({p for p, _ in probs}):
            pts = [(n, statistics.fmean(probs[(protocol, n)])) for n in sizes
                   if (protocol, n) in probs]
            lines.append(f"| {protocol} | {retries} | " +
                         " | ".join(f"{p:.2f}" for _, p in pts) + " |")
            if protocol == "zk-range" or retries == "1":
                label = f"{protocol}, retries {retries}" if protocol == "zk-range" else \
                    f"{protocol} (any budget)"
                ax.plot([n for n, _ in pts], [p for _, p in pts],
                        "-o" if protocol == "zk-range" else ":", markersize=3, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("members N")
    ax.set_ylabel("P(some member gives up)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6)
    fig.tight_layout()
    save_svg(fig, ctx.figures / svg)
    return "\n".join([f"![P(give up) vs N]({ctx.plot_link(svg)})", "",
                      *lines, "", *_provenance(folders)])


@figure("splitbrain-giveup", source="results/splitbrain/sim-storm-r*")
def give_up(ctx: Context) -> str:
    return _giveup_block(ctx, "sim-storm-r", "splitbrain-giveup.svg",
                         "storm: 3 joins + 3 leaves in 2 s, one host per member (simulated)")


@figure("splitbrain-giveup-here", source="results/splitbrain/sim-here-storm-r*")
def give_up_here(ctx: Context) -> str:
    return _giveup_block(ctx, "sim-here-storm-r", "splitbrain-giveup-here.svg",
                         "storm: members in 2 processes on this machine (simulated)")


@figure("splitbrain-zombie", source="results/splitbrain/sim-zombie-f*")
def zombie(ctx: Context) -> str:
    folders = sorted((ctx.results / AREA).glob("sim-zombie-f*"))
    if not folders:
        return "No simulated zombie sweep committed yet."
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    sizes = sorted({int(r["members"]) for d in folders for r in _rows(d)})
    header = ["protocol", "cut-off fraction", *(f"N={n:,}" for n in sizes)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for d in folders:
        frac = _suffix(d, "sim-zombie-f")
        dbl = _by(_rows(d), "double_owned_partition_s")
        for protocol in sorted({p for p, _ in dbl}):
            pts = [(n, statistics.median(dbl[(protocol, n)])) for n in sizes
                   if (protocol, n) in dbl]
            lines.append(f"| {protocol} | {frac} | " +
                         " | ".join(f"{v:,.1f}" for _, v in pts) + " |")
            shown = [(n, v) for n, v in pts if v > 0]
            if shown:
                ax.plot([n for n, _ in shown], [v for _, v in shown], "-o", markersize=3,
                        label=f"{protocol}, fraction {frac}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("members N")
    ax.set_ylabel("double-owned partition·s (median)")
    ax.set_title("zombie: cut 2 sessions, P = 64 (simulated; 0 is not drawn)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6)
    fig.tight_layout()
    save_svg(fig, ctx.figures / "splitbrain-zombie.svg")
    return "\n".join([f"![double-owned vs N]({ctx.plot_link('splitbrain-zombie.svg')})", "",
                      *lines, "", *_provenance(folders)])


def _sizes_where(rows: list[dict[str, Any]], protocol: str, scenario: str, metric: str
                 ) -> tuple[list[int], list[int]]:
    """(sizes run, sizes where ``metric`` > 0) of the real rows of one protocol/scenario."""
    run, hit = set(), set()
    for r in rows:
        if (r["protocol"], r["scenario"]) != (protocol, scenario) or r["reason"]:
            continue
        run.add(int(r["members"]))
        if (_num(r.get(metric)) or 0) > 0:
            hit.add(int(r["members"]))
    return sorted(run), sorted(hit)


def _sum(rows: list[dict[str, Any]], protocols: tuple[str, ...], metric: str) -> float:
    return sum(_num(r.get(metric)) or 0 for r in rows
               if r["protocol"] in protocols and not r["reason"])


def _leader(post: list[dict[str, Any]], scenario: str) -> tuple[list[dict[str, Any]], str]:
    """The leader-mode rows of ``scenario`` measured with the fix, and their sizes as text."""
    rows = [r for r in post if r["protocol"] == "zk-leader-range" and r["scenario"] == scenario
            and not r["reason"]]
    return rows, ", ".join(sorted({r["members"] for r in rows}, key=int))


def _leader_zombie(post: list[dict[str, Any]]) -> str:
    rows, sizes = _leader(post, "zombie")
    if not rows:
        return "no zombie run of the fenced leader mode with the fix yet."
    lead = ("zk-leader-range",)
    return (f"the fenced leader mode (runs with the fix, N = {sizes}) double-owned "
            f"{_f(_sum(rows, lead, 'double_owned_partition_s'))} partition·s with "
            f"{int(_sum(rows, lead, 'offsets_went_back'))} offsets going back: its zombies "
            "stopped fetching when their client suspended the connection, before their "
            "sessions could expire.")


def _leader_storm(post: list[dict[str, Any]]) -> str:
    rows, sizes = _leader(post, "storm")
    if not rows:
        return "Leader mode: no storm run with the fix yet"
    lead = ("zk-leader-range",)
    return (f"Leader mode (runs with the fix, N = {sizes}): "
            f"{int(_sum(rows, lead, 'rebalances_given_up'))} given up, "
            f"{int(_sum(rows, lead, 'conflicts'))} conflicts")


def _storm_findings(real: list[dict[str, Any]], post: list[dict[str, Any]]) -> list[str]:
    """One statement per retry budget of the real storms: groups that did not form, then
    give-ups among those that did, then the leader mode and the broker groups."""
    out = []
    storms = [r for r in real if r["scenario"] == "storm"]
    for budget in sorted({r["rebalance_max_retries"] for r in storms}, key=int):
        rows = [r for r in storms if r["rebalance_max_retries"] == budget]
        legacy = [r for r in rows if r["protocol"] == "zk-range"]
        unformed = [r for r in legacy if "did not form" in r["reason"]]
        run, hit = _sizes_where(rows, "zk-range", "storm", "rebalances_given_up")
        formed = [r for r in legacy if not r["reason"]]
        other = len(legacy) - len(formed) - len(unformed)

        def sizes(rs: list[dict[str, Any]]) -> str:
            return ", ".join(sorted({r["members"] for r in rs}, key=int)) or "none"
        text = (f"- **Storm, real, `rebalance.max.retries` {budget}.** Legacy runs: the group, "
                f"started together, did not form (initial members gave up their first "
                f"rebalance and exited) in {len(unformed)} (N = {sizes(unformed)}); it formed "
                f"in {len(formed)} (N = {sizes(formed)})"
                f"{f'; {other} more are failed or excluded rows (see above)' if other else ''}.")
        if formed:
            text += (f" Where it formed, members gave up a rebalance during the storm at N = "
                     f"{', '.join(map(str, hit)) or 'none'} of {', '.join(map(str, run))} "
                     f"({int(_sum(rows, ('zk-range',), 'rebalances_given_up'))} rebalances "
                     "given up in all).")
        if any(r["protocol"] == "zk-leader-range" for r in rows):
            text += " " + _leader_storm([r for r in post if r in rows]) + "."
        if any(r["protocol"] in BROKER and not r["reason"] for r in rows):
            text += (f" Broker groups: {int(_sum(rows, BROKER, 'rebalances_given_up'))} given "
                     f"up, {int(_sum(rows, BROKER, 'conflicts'))} conflicts.")
        out.append(text)
    return out


@figure("splitbrain-findings", source="results/splitbrain")
def findings(ctx: Context) -> str:
    base = ctx.results / AREA
    fix = _fix(ctx)
    real = [{**r, "pre_fix": fix is not None and fix.predates(d.name, r["protocol"])}
            for d in sorted(base.glob("real-*")) for r in _rows(d)]
    post = [r for r in real if not r["pre_fix"]]
    out = []
    if real:
        run, hit = _sizes_where(real, "zk-range", "zombie", "double_owned_partition_s")
        out.append(f"- **Zombie, real.** The legacy group double-owned partitions at N = "
                   f"{', '.join(map(str, hit)) or 'none'} of {', '.join(map(str, run))} "
                   f"({_f(_sum(real, ('zk-range',), 'double_owned_partition_s'))} partition·s "
                   f"in all, {int(_sum(real, ('zk-range',), 'zombie_deliveries'))} deliveries by "
                   f"zombies while another member owned the partition, "
                   f"{int(_sum(real, ('zk-range',), 'offsets_went_back'))} committed offsets "
                   f"going back); {_leader_zombie(post)}")
        out += _storm_findings(real, post)
        bad = [f"{r['protocol']} {r['scenario']} N = {r['members']}"
               f"{' ' + PRE_FIX_MARK if r['pre_fix'] else ''}" for r in real
               if r["verify_ok"] == "false" or r["repaired"] == "true"]
        out.append(f"- **Wrong state at the end of the observation** (verify failed or a repair "
                   f"was needed; {PRE_FIX_MARK}: measured before the fix): "
                   f"{', '.join(bad) or 'none'}.")
        everyone = tuple({r["protocol"] for r in real})
        lost_pre = int(_sum([r for r in real if r["pre_fix"]], everyone, "lost"))
        out.append(f"- **Lost**: {int(_sum(real, everyone, 'lost'))} acknowledged records lost "
                   f"over all {sum(not r['reason'] for r in real)} real runs, {lost_pre} of "
                   f"them in runs measured before the fix.")
    storms = [(d, "one host per member") for d in base.glob("sim-storm-r*")] + \
        [(d, "this machine's placement") for d in base.glob("sim-here-storm-r*")]
    for d, where in sorted(storms, key=lambda x: (x[1], int(re.sub(r"\D", "", x[0].name)))):
        probs = _by(_rows(d), "p_give_up")
        legacy = sorted((n, statistics.fmean(v)) for (p, n), v in probs.items()
                        if p == "zk-range")
        first = next((n for n, p in legacy if p >= 0.5), None)
        others = max((statistics.fmean(v) for (p, _), v in probs.items() if p != "zk-range"),
                     default=0.0)
        retries = re.sub(r"\D", "", d.name)
        out.append(f"- **Storm, simulated ({where}), retries {retries}**: some legacy "
                   f"member gives up with probability ≥ 0.5 from N = "
                   f"{first if first is not None else 'never (up to the largest N run)'}"
                   f"; the highest probability for the other protocols is {others:.2f}.")
    for d in sorted(base.glob("sim-zombie-f*")):
        dbl = _by(_rows(d), "double_owned_partition_s")
        legacy = sorted((n, statistics.median(v)) for (p, n), v in dbl.items()
                        if p == "zk-range")
        pos = [n for n, v in legacy if v > 0]
        leader = max((max(v) for (p, _), v in dbl.items() if p == "zk-leader-range"),
                     default=0.0)
        out.append(f"- **Zombie, simulated, fraction {_suffix(d, 'sim-zombie-f')}**: legacy "
                   f"double ownership (median > 0) at N = {', '.join(map(str, pos)) or 'none'}"
                   f"; leader mode: {_f(leader)} partition·s at most.")
    return "\n".join(out) if out else "No results committed yet."
