"""docs/validation-plan-29.md: the lab's settle rule that waits for every rebalance, at N = 96,
and two zk-range N = 12 sets made in one session.

Reads committed files only: validation plan 29's scoring (held-out runs on Tansu: zk-range at
N = 12 and 48, zk-range and zk-leader-range at N = 96, a second zk-range N = 12 set last in the
queue); plan 28's scoring and sweeps of the same N = 96 cells, made under the plain rule; the
two N = 12 sets' ``spark rebalance-phases`` rows (``validation-29/phases-a``, ``phases-b``); and
every earlier zk-range N = 12 set on Tansu (plans 20 to 27), whose join's share the two new
sets join.
"""

from __future__ import annotations

from zkconsumer.results.distributions import CellScore
from zkconsumer.results.figures.coverage_validation import ended_early
from zkconsumer.results.figures.draws_validation import second_attempts, share_row
from zkconsumer.results.figures.fetcher_stop_validation import phases_table, read_phases
from zkconsumer.results.figures.rank_validation import RACE_HEAD, RACE_PLANS, race_row
from zkconsumer.results.figures.scale_distributions import (
    load_scores,
    tansu_cell,
    two_places,
    validation_with_failures,
)
from zkconsumer.results.proportions import homogeneity_p
from zkconsumer.results.provenance import read_provenance, recorded_settle
from zkconsumer.results.real_runs import sweep_runs
from zkconsumer.results.registry import Context, figure

HELD_OUT, PLAIN = 29, 28
LARGE = 96
ZK_96 = ("zk-range", "zk-leader-range")
# plan 29's two zk-range N = 12 sets, first and last in its queue, and their phases folders
SETS_12 = (("tansu-a", "phases-a"), ("tansu-b", "phases-b"))


@figure("scale-validation-29", source=f"results/scale/validation-{HELD_OUT}/scoring")
def validation_29(ctx: Context) -> str:
    """Plan 29's scoring, and its failing cells run by run."""
    return validation_with_failures(ctx, HELD_OUT)


def _time(score: CellScore) -> str:
    real, iqr = score.real_tts, score.real_tts_iqr
    spread = f" [{iqr[0]:.2f}–{iqr[1]:.2f}]" if real is not None and iqr is not None else ""
    return f"{two_places(real)}{spread} / {two_places(score.sim_tts)}"


def _folder(plan: int, protocol: str) -> str:
    return f"scale/validation-{plan}/tansu-96/{protocol}-n{LARGE}"


@figure("settle-96", source=", ".join(f"results/scale/validation-{p}/scoring, "
                                      + ", ".join(f"results/{_folder(p, q)}" for q in ZK_96)
                                      for p in (PLAIN, HELD_OUT)))
def settle_96(ctx: Context) -> str:
    """The ZooKeeper cells at N = 96 under the plain rule (plan 28) and under the rule that
    waits for every rebalance (plan 29): runs ended early, time and requests, real and model."""
    out = ["| protocol | event | plan: settle rule | runs without a time to stable | "
           "joins ended before every member had attempted | time to stable, s: real median "
           "[IQR] / model median | requests: real / model median | passes |",
           "|---|---|---|---|---|---|---|---|"]
    scores = {plan: load_scores(ctx, plan)[0] for plan in (PLAIN, HELD_OUT)}
    for protocol in ZK_96:
        for event in ("join", "leave"):
            for plan in (PLAIN, HELD_OUT):
                score = tansu_cell(scores[plan], protocol, LARGE, event)
                folder = ctx.results / _folder(plan, protocol)
                if score is None or not folder.is_dir():
                    continue
                rows = [raw for raw, _ in sweep_runs(folder) if raw["event"] == event]
                unsettled = sum(not raw.get("time_to_stable_s") for raw in rows)
                early = (f"{sum(ended_early(raw, LARGE) for raw in rows)} of {len(rows)}"
                         if event == "join" and protocol == "zk-range" else "–")
                rule = recorded_settle(folder) or "plain"
                out.append(f"| {protocol} | {event} | {plan}: {rule} | {unsettled} of "
                           f"{len(rows)} | {early} | {_time(score)} | "
                           f"{score.real_requests:,.0f} / {score.sim_requests:,.0f} | "
                           f"{'yes' if score.ok else 'no'} |")
    out += ["", f"Each N = {LARGE} ZooKeeper cell on Tansu, as plan {PLAIN} made it (the plain "
            f"rule: ownership alone) and as plan {HELD_OUT} made it (`zookeeper-rebalances-"
            "ended`: after the event, no member inside a rebalance either), the rule as each "
            "sweep's `meta.json` records it. Medians over the cell's 10 real runs (time over "
            "those with one) and 200 model draws, from the scorings; the model's observer "
            "copies each set's rule. Only a zk-range join makes every member attempt, so only "
            "there does a run with fewer attempts than members (and the joiner) show a window "
            "closed mid-rebalance. From each folder's `sweep.csv`."]
    return "\n".join(out)


@figure("join-share-29", source=", ".join(
    [f"results/scale/validation-{p}/tansu/zk-range-n12" for p in RACE_PLANS]
    + [f"results/scale/validation-{HELD_OUT}/{s}/zk-range-n12, "
       f"results/scale/validation-{HELD_OUT}/{phases}" for s, phases in SETS_12]
    + [f"results/scale/validation-{HELD_OUT}/scoring"]))
def join_share_29(ctx: Context) -> str:
    """The zk-range N = 12 join's share of second attempts in plan 29's two sets, made in one
    session, against each other and against every earlier Tansu set; and their join races."""
    scores, data = load_scores(ctx, HELD_OUT)
    join = tansu_cell(scores, "zk-range", 12, "join")
    if join is None:
        raise ValueError(f"plan {HELD_OUT}'s scoring has no zk-range N = 12 join cell")
    model = join.sim_multi_share
    new = [second_attempts(ctx, f"scale/validation-{HELD_OUT}/{name}/zk-range-n12")
           for name, _ in SETS_12]
    earlier = [second_attempts(ctx, f"scale/validation-{p}/tansu/zk-range-n12")
               for p in RACE_PLANS]
    out = ["| set | runs | with a second attempt [95 %] | the model's share inside |",
           "|---|---|---|---|"]
    out += [share_row(f"{HELD_OUT}, {name}", k, n, model)
            for (name, _), (k, n) in zip(SETS_12, new, strict=True)]
    k_old, n_old = sum(k for k, _ in earlier), sum(n for _, n in earlier)
    out.append(share_row(f"plans {RACE_PLANS[0]}–{RACE_PLANS[-1]} pooled", k_old, n_old,
                          model))
    same_session, every = homogeneity_p(new), homogeneity_p(earlier + new)
    out += ["", f"Model: {model:.3f}, the share of plan {HELD_OUT}'s {data['sim_draws']} draws. "
            "A second attempt: more than one attempt or a conflict in the run's row. "
            f"Intervals: Wilson 95 %. **Do the two sets of one session differ?** Sets as far "
            f"apart as these would come up with probability {same_session:.4f} if their "
            f"{sum(n for _, n in new)} runs' second attempts were dealt between them at random. "
            f"**All {len(earlier) + len(new)} Tansu sets since plan {RACE_PLANS[0]}:** "
            f"probability {every:.4f}, the same way (Fisher's exact test on Pearson's "
            "statistic, conditioned on the total: `zkconsumer.results.proportions`).",
            "", "Their join races, as in the table of "
            "[validation-plan-26.md](validation-plan-26.md):", "", *RACE_HEAD]
    for name, phases in SETS_12:
        row = race_row(ctx, HELD_OUT, name, label=f"{HELD_OUT}, {name}", phases_dir=phases)
        if row is not None:
            out.append(row)
    prov = read_provenance(ctx.results / f"scale/validation-{HELD_OUT}/{SETS_12[0][1]}")
    out += ["", f"The rows of {SETS_12[0][0]}: `{prov.command}` (revision "
            f"`{prov.revision[:12]}`, {prov.date[:10]}); {SETS_12[1][0]}'s the same on its own "
            "runs."]
    return "\n".join(out)


def _leader_phases(plan: int) -> str:
    return f"scale/validation-{plan}/leader-phases"


def leader_leave_phases(ctx: Context, plans: tuple[int, ...]) -> list[str]:
    """One table of the leader-mode leave's phases in each plan's ``leader-phases`` rows, real
    and modelled, each row tagged with its plan."""
    out: list[str] = []
    for plan in plans:
        rows = [r for r in read_phases(ctx.results / _leader_phases(plan))
                if r["event"] == "leave"]
        table = phases_table(rows, tag=f" (plan {plan})")
        out += table if not out else table[2:]
    return out


@figure("leader-96-phases-29", source=", ".join(f"results/{_leader_phases(p)}"
                                                for p in (PLAIN, HELD_OUT)))
def leader_96_phases_29(ctx: Context) -> str:
    """The N = 96 leader-mode leave's phases in plan 28's runs and in plan 29's, each beside
    the model's draws."""
    out = leader_leave_phases(ctx, (PLAIN, HELD_OUT))
    prov = read_provenance(ctx.results / _leader_phases(HELD_OUT))
    return "\n".join([*out, "", (
        "Median [interquartile range] over every member that stopped its fetchers in its first "
        f"attempt after the event, nearest rank; the model's {LARGE} members drawn as `spark "
        "validate` draws them, at the calibration's speed (the same draws for both plans: the "
        f"rule changes none). Plan {HELD_OUT}'s rows: `{prov.command}` (revision "
        f"`{prov.revision[:12]}`); plan {PLAIN}'s the same on its own runs.")])
