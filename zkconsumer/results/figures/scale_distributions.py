"""docs/validation-distributions.md and docs/validation-plan-7.md, distribution validation (plans
3 to 7): per cell the real
runs' distribution against the model's draws, the pass count, and one plot per protocol.

Reads committed files only: ``results/scale/validation-plan-N.json`` and the scoring that
``zkconsumer spark validate --plan results/scale/validation-plan-N.json --out
results/scale/validation-N/scoring`` wrote (``scoring.json``: every real run and every draw).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from zkconsumer.results.distributions import CellScore, pass_line, score_from_json, score_table
from zkconsumer.results.judging import DistTolerances, Run
from zkconsumer.results.plotting import pyplot, save_svg
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.real_runs import sweep_runs
from zkconsumer.results.registry import Context, figure
from zkconsumer.scenarios.protocols import PROTOCOL_TABLE
from zkconsumer.sim import Calibration


def _plan(n: int) -> str:
    return f"scale/validation-plan-{n}.json"


def _scoring(n: int) -> str:
    return f"scale/validation-{n}/scoring/scoring.json"


def load_scores(ctx: Context, n: int = 3) -> tuple[list[CellScore], dict[str, Any]]:
    path = ctx.results / _scoring(n)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing; write it with `zkconsumer spark validate "
                                f"--plan results/{_plan(n)} --out results/scale/validation-{n}/"
                                "scoring`")
    return scores_in(path.parent)


def scores_in(folder: Path) -> tuple[list[CellScore], dict[str, Any]]:
    """The cells of a ``spark validate --plan`` scoring folder (its ``scoring.json``) as
    scores, and the file's data."""
    data = json.loads((folder / "scoring.json").read_text())
    tol = DistTolerances(**data["tolerance_values"])
    return [score_from_json(c, tol, int(data["real_seeds"])) for c in data["cells"]], data


def _short_broker(broker: str) -> str:
    return broker.replace("apache-kafka-", "Kafka ").replace("tansu-0.6.0", "Tansu")


def plot_protocol(scores: list[CellScore], protocol: str, path: Path,
                  label_of: Callable[[CellScore], str] | None = None,
                  legend_loc: str = "upper left") -> Path:
    """Real runs as filled markers, the model's draws as open boxes with open markers (runs
    and draws after a formation that left stragglers as triangles); ``label_of`` names a cell
    (default: broker, N and event, and the model where it is not the protocol's own)."""
    plt = pyplot()
    cells = [s for s in scores if s.key.protocol == protocol]
    colour = PROTOCOL_TABLE[protocol].colour if protocol in PROTOCOL_TABLE else None
    # one row per measure, as wide as the cells need, so that every cell's label stays apart
    fig, axes = plt.subplots(2, 1, figsize=(max(6.0, 0.62 * len(cells) + 2.0), 7.0))
    labels = [label_of(s) if label_of else
              f"{_short_broker(s.key.broker)} N={s.key.members} {s.key.event}"
              + (f"\n{s.model}" if s.model != protocol else "") for s in cells]
    xs = list(range(len(cells)))
    for ax, what, unit in ((axes[0], "tts", "time to stable (s)"),
                           (axes[1], "requests", "coordination requests")):
        labelled: set[str] = set()

        def label(kind: str, text: str, _done: set[str] = labelled) -> str | None:
            if kind in _done:
                return None
            _done.add(kind)
            return text

        for i, s in enumerate(cells):
            sim = [getattr(r, what) for r in s.sim if getattr(r, what) is not None]
            if sim:
                ax.boxplot([sim], positions=[i + 0.18], widths=0.3, showfliers=False,
                           medianprops={"color": "black"}, boxprops={"color": "grey"},
                           whiskerprops={"color": "grey"}, capprops={"color": "grey"})
            for late, marker, note in ((False, "o", ""),
                                       (True, "^", ", after stragglers: triangles")):
                sim = [getattr(r, what) for r in s.sim
                       if getattr(r, what) is not None and r.stragglers == late]
                real = [getattr(r, what) for r in s.real
                        if getattr(r, what) is not None and r.stragglers == late]
                if sim:
                    ax.plot([i + 0.18] * len(sim), sim, marker, mfc="none", mec="grey", ms=3,
                            label=label(f"sim{late}", f"model draws (open{note})"))
                if real:
                    ax.plot([i - 0.18] * len(real), real, marker, color=colour or "C0", ms=5,
                            label=label(f"real{late}", f"real runs (filled{note})"))
        ax.set_xticks(xs, labels, fontsize=6, rotation=30, ha="right")
        ax.set_ylabel(unit, fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
        ax.set_xlim(-0.6, len(cells) - 0.4)
    axes[1].set_yscale("log")
    if any(r.stragglers for s in cells for r in s.real + s.sim):
        # four entries: beside the plot, clear of the first cells' runs
        axes[0].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    else:
        axes[0].legend(fontsize=7, loc=legend_loc)
    fig.suptitle(f"{protocol}: real runs vs model draws, P = 24", fontsize=9)
    fig.tight_layout()
    return save_svg(fig, path)


def run_loads(ctx: Context, n: int = 3) -> list[float]:
    """The 1-minute load averages at the start and end of every held-out run folder."""
    loads = []
    for meta in sorted((ctx.results / "scale" / f"validation-{n}").glob("*/*/meta.json")):
        machine = json.loads(meta.read_text()).get("machine", {})
        for key in ("loadavg", "loadavg_end"):
            if machine.get(key):
                loads.append(float(machine[key][0]))
    return loads


def validation_block(ctx: Context, n: int) -> str:
    """Plan ``n``'s scoring: pass count, per-cell table, one plot per protocol."""
    scores, data = load_scores(ctx, n)
    prov = data["provenance"]
    out = [f"**{pass_line(scores)}** (target: 80 %). Tolerances: {data['tolerances']}.", "",
           *score_table(scores), "",
           f"Real: every run of the cell (median, interquartile range, and the Wilson 95 % "
           f"interval of the share with more than one attempt or a conflict); model (the "
           f"simulator profile in brackets): {data['sim_draws']} seeded draws. T, R, M: time "
           f"to stable, requests, the multi-attempt share out of tolerance. Scored at revision "
           f"`{prov['revision'][:12]}`; calibration: {calibration_said(data)}."
           f" Re-run: `{prov['command']}`.", ""]
    loads = run_loads(ctx, n)
    if loads:
        out += [f"Machine load (1-minute load average on 2 cores) at the start and end of the "
                f"held-out run folders: {min(loads):.1f} to {max(loads):.1f} "
                f"({len(loads) // 2} folders; each folder's `meta.json`).", ""]
    for protocol in dict.fromkeys(s.key.protocol for s in scores):
        name = f"validation-{n}-{protocol}.svg"
        plot_protocol(scores, protocol, ctx.figures / name)
        out.append(f"![{protocol}: real runs (filled) vs model draws (open)](figures/{name})")
    return "\n".join(out).rstrip("\n")


def diagnostic_block(ctx: Context, folder: str, what: str, why: str) -> list[str]:
    """A scoring of runs already read (a diagnostic): its pass line, table and provenance."""
    scores, _ = scores_in(ctx.results / folder)
    prov = read_provenance(ctx.results / folder)
    return [f"**{what}** ({why}): {pass_line(scores)}.", "", *score_table(scores), "",
            f"Scored at revision `{prov.revision[:12]}`. Re-run: `{prov.command}`."]


def planned_sets(ctx: Context, folder: str) -> str:
    """The run sets a diagnostic's ``plan.json`` names, in its order."""
    plan = json.loads((ctx.results / folder / "plan.json").read_text())
    return ", ".join(s["name"] for s in plan["sets"])


def calibration_said(data: dict[str, Any]) -> str:
    """The calibration's first clause (where and when it was measured), and any parameter
    re-measured onto it since."""
    first, *rest = data["calibration_source"].split(";")
    return ";".join([first, *(part for part in rest if "re-measured" in part)])


@figure("scale-validation-3", source=f"results/{_scoring(3)}")
def validation_3(ctx: Context) -> str:
    """Plan 3's scoring."""
    return validation_block(ctx, 3)


@figure("scale-validation-4", source=f"results/{_scoring(4)}")
def validation_4(ctx: Context) -> str:
    """Plan 4's scoring."""
    return validation_block(ctx, 4)


@figure("scale-validation-5", source=f"results/{_scoring(5)}")
def validation_5(ctx: Context) -> str:
    """Plan 5's scoring, and the joiner start its calibration measured."""
    path = ctx.results / "scale" / "calibration-5" / "calibration.join-start.json"
    joins = json.loads(path.read_text())
    sent = sorted(j["join_sent_ms"] for j in joins["joins"] if j["join_sent_ms"] is not None)
    fitted = Calibration.load(ctx.results / "scale" / "calibration" / "calibration.json")
    said = (f"The calibration's joiner start (`results/scale/calibration-5`, `zkconsumer "
            f"calibrate --join-start-onto`): {joins['broker_join_start_ms']:.1f} ms from a "
            f"joiner's consumer created to its JoinGroup sent, median of {len(sent)} joins "
            f"into groups of 4 on Tansu (range {sent[0]:.1f}-{sent[-1]:.1f} ms); the fitted "
            f"value it replaces: {fitted.broker_join_start_ms:.0f} ms.")
    return said + "\n\n" + validation_block(ctx, 5)


@figure("scale-validation-6", source=f"results/{_scoring(6)}")
def validation_6(ctx: Context) -> str:
    """Plan 6's scoring (the Kafka 2.4 profile alone)."""
    return validation_block(ctx, 6)


@figure("scale-validation-7", source=f"results/{_scoring(7)}")
def validation_7(ctx: Context) -> str:
    """Plan 7's scoring (the whole lab after plan 5's fixes and the Tansu build's rules)."""
    return validation_block(ctx, 7)


def runs_legend(draws: int = 20, stragglers: bool = False) -> str:
    """The legend of :func:`runs_table` for a plan of ``draws`` model draws a cell (with
    ``stragglers``: one that splits its runs by them)."""
    return ("Each real run as time to stable (s) / requests, in seed order; `*`: more than "
            "one attempt or a conflict"
            + ("; `†`: after a formation that left stragglers" if stragglers else "")
            + f". Model: the median of its {draws} draws (time / requests).")


RUNS_LEGEND = runs_legend()


def runs_said(runs: tuple[Run, ...]) -> str:
    """Each real run as ``time s / requests`` (``*``: more than one attempt or a conflict;
    ``†``: after a formation that left stragglers; ``-``: did not settle), in seed order."""
    def one(r: Run) -> str:
        tts = "-" if r.tts is None else f"{r.tts:.2f}"
        return f"{tts} / {r.requests:.0f}{'*' if r.multi else ''}{'†' if r.stragglers else ''}"
    return "; ".join(one(r) for r in runs)


def runs_table(ctx: Context, n: int, before: int | None = None) -> list[str]:
    """Plan ``n``'s failing cells, run by run, beside the same cells' runs in plan ``before``
    (if given: an earlier plan with the same cells)."""
    scores, _ = load_scores(ctx, n)
    earlier = {(s.key, s.model): s for s in load_scores(ctx, before)[0]} if before else {}
    head = f"| cell (model) | plan {n}: real runs |"
    out = [head + (f" plan {before}: real runs |" if before else "") + " model median |",
           "|---|---|---|" + ("---|" if before else "")]
    for s in scores:
        if not s.judged or s.ok:
            continue
        k = s.key
        prior = earlier.get((k, s.model))
        row = (f"| {_short_broker(k.broker)} {k.protocol} (`{s.model}`) N = {k.members} "
               f"{k.event} | {runs_said(s.real)} |")
        if before:
            row += f" {runs_said(prior.real) if prior else 'not in the plan'} |"
        tts = "-" if s.sim_tts is None else f"{s.sim_tts:.2f}"
        out.append(row + f" {tts} / {s.sim_requests:.0f} |")
    return out


@figure("scale-validation-7-runs", source=f"results/{_scoring(7)}, results/{_scoring(5)}, "
                                          "results/scale/validation-7/tansu-first")
def validation_7_runs(ctx: Context) -> str:
    """Plan 7's failing cells run by run, and the zk-range N = 48 set its amendment set aside."""
    first = ctx.results / "scale" / "validation-7" / "tansu-first" / "zk-range-n48"
    by_event: dict[str, list[Run]] = {}
    for raw, run in sweep_runs(first):
        by_event.setdefault(raw["event"], []).append(run)
    aside = "; ".join(f"{event}: {runs_said(tuple(runs))}" for event, runs in by_event.items())
    return "\n".join([
        *runs_table(ctx, 7, 5), "", RUNS_LEGEND, "",
        f"The `zk-range` N = 48 set made first and set aside by the amendment (unscored, "
        f"`results/scale/validation-7/tansu-first`): {aside}."])


@figure("scale-validation-8", source=f"results/{_scoring(8)}")
def validation_8(ctx: Context) -> str:
    """Plan 8's scoring (plan 7's models at new sizes), and its failing cells run by run."""
    return "\n".join([validation_block(ctx, 8), "", "The failing cells run by run:", "",
                      *runs_table(ctx, 8), "", RUNS_LEGEND])


def calibration_6_leaves(ctx: Context) -> str:
    """What calibration-6 measured of the clean leaves (idle and under the lab's traffic)."""
    raw = json.loads((ctx.results / "scale" / "calibration-6" / "calibration.leaves.json")
                     .read_text())
    idle = [x for x in raw["leaves"] if not x["messages_per_s"]]
    busy = [x for x in raw["leaves"] if x["messages_per_s"]]

    def span(xs: list[dict[str, Any]], key: str) -> str:
        v = sorted(x[key] for x in xs)
        return f"{v[0]:.0f}-{v[-1]:.0f} ms"
    return (f"The leaves calibration-6 measured (`results/scale/calibration-6`, `zkconsumer "
            f"calibrate --leave-onto`): {len(idle)} on an idle topic, wake "
            f"{span(idle, 'wake_ms')} (mean {raw['leave_wake_ms']:.0f} ms, the "
            f"`leave_wake_ms`), shutdown {span(idle, 'shutdown_ms')} (median "
            f"{raw['leave_shutdown_ms']:.0f} ms); {len(busy)} with "
            f"{busy[0]['messages_per_s']:.2f} messages a second on the member's one partition, "
            f"shutdown {span(busy, 'shutdown_ms')} (median "
            f"{raw['fetcher_close_traffic_ms']:.0f} ms, the `fetcher_close_traffic_ms`).")


def replication(ctx: Context, n: int, before: tuple[int, ...]
                ) -> tuple[list[CellScore], list[CellScore]]:
    """The real runs of the plans ``before`` (pooled), scored as if they were the model of
    plan ``n``'s real runs (same cells, same checks and tolerances), and plan ``n``'s own model
    scores: how far run sets of the lab at identical settings agree, the ceiling of any
    model's pass rate."""
    scores, _ = load_scores(ctx, n)
    pooled: dict[tuple[Any, str], tuple[Run, ...]] = {}
    for plan in before:
        for s in load_scores(ctx, plan)[0]:
            pooled[(s.key, s.model)] = pooled.get((s.key, s.model), ()) + s.real
    name = (f"plan {before[0]}'s runs" if len(before) == 1
            else f"the runs of plans {_plans_said(before)}")
    return ([dataclasses.replace(s, sim=pooled[(s.key, s.model)], model=name) for s in scores],
            scores)


def _plans_said(plans: tuple[int, ...]) -> str:
    return " and ".join(str(p) for p in plans)


def replication_said(ctx: Context, n: int, before: tuple[int, ...]) -> str:
    """One paragraph: the runs of the plans ``before`` as a prediction of plan ``n``'s, and
    how many of the model's failing cells are cells where the run sets themselves disagree."""
    return replication_paragraph(n, before, *replication(ctx, n, before))


def replication_paragraph(n: int, before: tuple[int, ...], runs: list[CellScore],
                          model: list[CellScore]) -> str:
    """:func:`replication_said`'s paragraph for ``runs`` (the earlier plans' runs scored as
    the model) beside ``model`` (plan ``n``'s own scores)."""
    failing = [m for m in model if m.judged and not m.ok]
    both = [m for m, r in zip(model, runs, strict=True) if m.judged and not m.ok and not r.ok]
    cells = "; ".join(f"{_short_broker(r.key.broker)} {r.key.protocol}"
                      f"{'' if m.model == r.key.protocol else f' (`{m.model}`)'} "
                      f"N = {r.key.members} {r.key.event} ({r.flags})"
                      for m, r in zip(model, runs, strict=True) if r.judged and not r.ok
                      ) or "none"
    whose = (f"Plan {before[0]}'s real runs" if len(before) == 1
             else f"The real runs of plans {_plans_said(before)} pooled")
    return (f"**The lab against itself.** {whose}, scored as if they were the model of plan "
            f"{n}'s (the same cells, checks and tolerances): {pass_line(runs)}. The cells where "
            f"the run sets, made on different days at identical settings, disagree: {cells}. "
            f"{len(both)} of the model's {len(failing)} failing cells "
            f"{'is' if len(both) == 1 else 'are'} among them.")


@figure("scale-validation-9", source=f"results/{_scoring(9)}, results/{_scoring(7)}, "
                                     "results/scale/calibration-6")
def validation_9(ctx: Context) -> str:
    """Plan 9's scoring (plan 7's cells again), its failing cells beside plan 7's runs, and
    the leaves its calibration measured."""
    return "\n".join([validation_block(ctx, 9), "", replication_said(ctx, 9, (7,)), "",
                      "The failing cells run by run, beside plan 7's runs of the same cells:", "",
                      *runs_table(ctx, 9, 7), "", RUNS_LEGEND, "", calibration_6_leaves(ctx)])


@figure("scale-validation-10", source=f"results/{_scoring(10)}, results/{_scoring(9)}, "
                                      f"results/{_scoring(7)}")
def validation_10(ctx: Context) -> str:
    """Plan 10's scoring (plan 9's models on 10 runs a cell), the earlier run sets of the same
    cells pooled as a prediction of its runs, and its failing cells run by run."""
    return "\n".join([validation_block(ctx, 10), "", replication_said(ctx, 10, (7, 9)), "",
                      "The failing cells run by run:", "", *runs_table(ctx, 10), "",
                      RUNS_LEGEND])


@figure("scale-validation-12", source=f"results/{_scoring(12)}, results/scale/static-look")
def validation_12(ctx: Context) -> str:
    """Plan 12's scoring (the Kafka 2.4 profile's static membership), any failing cell run by
    run, and the first look the plan disclosed."""
    out = [validation_block(ctx, 12), ""]
    scores, _ = load_scores(ctx, 12)
    if any(s.judged and not s.ok for s in scores):
        out += ["The failing cells run by run:", "", *runs_table(ctx, 12), "", RUNS_LEGEND, ""]
    look = ctx.results / "scale" / "static-look" / "static-range-n12"
    by_event: dict[str, list[Run]] = {}
    for raw, run in sweep_runs(look):
        by_event.setdefault(raw["event"], []).append(run)
    said = "; ".join(f"{event}: {runs_said(tuple(runs))}" for event, runs in by_event.items())
    out.append(f"The first look the plan disclosed (`results/scale/static-look`, N = 12, "
               f"unscored here, time s / requests): {said}.")
    return "\n".join(out)


@figure("scale-validation-14", source=f"results/{_scoring(14)}, results/{_scoring(10)}")
def validation_14(ctx: Context) -> str:
    """Plan 14's scoring (the leader model's requests as the connector sends them), any
    failing cell run by run beside plan 10's runs of the same cells."""
    out = [validation_block(ctx, 14), ""]
    scores, _ = load_scores(ctx, 14)
    if any(s.judged and not s.ok for s in scores):
        out += ["The failing cells run by run:", "", *runs_table(ctx, 14, 10), "",
                RUNS_LEGEND]
    return "\n".join(out).rstrip("\n")


@figure("scale-rebalance-cpu", source="results/scale/calibration-7")
def rebalance_cpu(ctx: Context) -> str:
    """What ``calibrate --rebalance-cpu-onto`` measured: per join into the crowd, its CPU, its
    requests' CPU in the model, the rest per member, and the members' fetcher stops."""
    folder = ctx.results / "scale" / "calibration-7"
    raw = json.loads((folder / "calibration.rebalance-cpu.json").read_text())
    base = Calibration.load(ctx.results / raw["base"].removeprefix("results/"))
    out = ["| join | members | rebalanced | reads / writes | process CPU s | its requests in the "
           "model s | the rest per member ms | join to stable s | fetcher stops ms: median "
           "(min–max) |", "|---|---|---|---|---|---|---|---|---|"]
    for i, r in enumerate(raw["rebalances"], 1):
        closes = sorted(r["closes_ms"])
        said = (f"{closes[len(closes) // 2]:.0f} ({closes[0]:.0f}–{closes[-1]:.0f})"
                if closes else "—")
        out.append(f"| {i} | {r['members']} | {r['rebalanced']} | {r['reads']:,} / "
                   f"{r['writes']} | {r['cpu_ms'] / 1000:.2f} | "
                   f"{r['requests_cpu_ms'] / 1000:.2f} | {r['rest_ms']:+.1f} | "
                   f"{r['wall_ms'] / 1000:.2f} | {said} |")
    out += ["", f"`rebalance_cpu_ms` = {raw['rebalance_cpu_ms']:g} (the median of the rest, "
            f"never below 0), onto `{raw['base']}` (per-request CPU "
            f"{base.client_read_cpu_ms:g} ms a read, {base.client_write_cpu_ms:g} ms a write, "
            f"times its crowd factor at the members in the process). Re-run: "
            f"`{read_provenance(folder).command}`."]
    return "\n".join(out)


def validation_with_failures(ctx: Context, n: int, stragglers: bool = False) -> str:
    """Plan ``n``'s scoring (:func:`validation_block`), then its failing cells run by run
    (``stragglers``: its runs marked by whether their formation left them)."""
    scores, data = load_scores(ctx, n)
    out = [validation_block(ctx, n)]
    if any(s.judged and not s.ok for s in scores):
        out += ["", "The failing cells run by run:", "", *runs_table(ctx, n), "",
                runs_legend(int(data["sim_draws"]), stragglers=stragglers)]
    return "\n".join(out)


def tansu_cell(scores: Sequence[CellScore], protocol: str, members: int, event: str
               ) -> CellScore | None:
    """A plan's Tansu cell of ``protocol`` at ``members`` for ``event`` (the first, where two
    sets have one)."""
    return next((s for s in scores if s.key.broker.startswith("tansu")
                 and (s.key.protocol, s.key.members, s.key.event) == (protocol, members, event)),
                None)


def two_places(x: float | None) -> str:
    """A median as the plan pages print it: two decimals, or a dash where there is none."""
    return "–" if x is None else f"{x:.2f}"
