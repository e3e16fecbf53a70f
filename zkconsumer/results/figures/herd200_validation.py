"""docs/validation-plan-30.md: the ZooKeeper designs at N = 200, and their herd from 12 members up.

Reads committed files only: validation plan 30's scoring (held-out runs on Tansu: zk-range and
zk-leader-range at N = 200), and the same protocols' Tansu cells at smaller sizes where they
were last judged under the same settings (plan 29: zk-range at N = 12, 48 and 96, the leader mode
at 96; plan 27: the leader mode at 12 and 48), so that the page shows each measure's growth with
N, real and modelled, from one table.
"""

from __future__ import annotations

from zkconsumer.results.distributions import CellScore
from zkconsumer.results.figures.findings_text import exponent
from zkconsumer.results.figures.scale_distributions import (
    load_scores,
    tansu_cell,
    two_places,
    validation_with_failures,
)
from zkconsumer.results.figures.settle_validation import leader_leave_phases
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure

HELD_OUT = 30
# protocol -> (N, the plan whose Tansu cell at that N the table reads), smallest N first; where
# a plan has two sets at one N (plan 29's zk-range N = 12), its first set's cell
SIZES = {"zk-range": ((12, 29), (48, 29), (96, 29), (200, HELD_OUT)),
         "zk-leader-range": ((12, 27), (48, 27), (96, 29), (200, HELD_OUT))}
PLANS = sorted({plan for sizes in SIZES.values() for _, plan in sizes})


@figure("scale-validation-30", source=f"results/scale/validation-{HELD_OUT}/scoring")
def validation_30(ctx: Context) -> str:
    """Plan 30's scoring, and its failing cells run by run."""
    return validation_with_failures(ctx, HELD_OUT)


def _grown(small: CellScore, large: CellScore) -> str:
    """The requests' power of N from ``small``'s size to ``large``'s: real / model."""
    m, n = small.key.members, large.key.members
    real = exponent((m, small.real_requests), (n, large.real_requests))
    model = exponent((m, small.sim_requests), (n, large.sim_requests))
    return f"{two_places(real)} / {two_places(model)}"


@figure("herd-200", source=", ".join(f"results/scale/validation-{p}/scoring" for p in PLANS))
def herd_200(ctx: Context) -> str:
    """Each ZooKeeper design's requests per event and time to stable at N = 12, 48, 96 and 200,
    real and modelled, with the power of N the requests grew by from the size before."""
    scores = {plan: load_scores(ctx, plan)[0] for plan in PLANS}
    out = ["| protocol | event | N (plan) | requests: real median / model median | grown "
           "from the size before as N^k: k real / model | time to stable, s: real median / "
           "model median | passes |", "|---|---|---|---|---|---|---|"]
    for protocol, sizes in SIZES.items():
        for event in ("join", "leave"):
            before: CellScore | None = None
            for n, plan in sizes:
                cell = tansu_cell(scores[plan], protocol, n, event)
                if cell is None:
                    continue
                grown = "–" if before is None else _grown(before, cell)
                out.append(f"| {protocol} | {event} | {n} ({plan}) | {cell.real_requests:,.0f} / "
                           f"{cell.sim_requests:,.0f} | {grown} | {two_places(cell.real_tts)} / "
                           f"{two_places(cell.sim_tts)} | {'yes' if cell.ok else 'no'} |")
                before = cell
    out += ["", "Medians over each cell's real runs (10 a cell up to N = 96, 5 at N = 200) and "
            "200 model draws, from the scorings of the plans named. P = 24 at every size, so "
            "above 24 members the newcomers own nothing. k: the power of N that takes one "
            "size's median requests to the next's (2 would be every member doing work "
            "proportional to the group). The model's zk-range cell at N = 48 was drawn at its "
            "set's own speed, every other at the calibration's."]
    return "\n".join(out)


PHASE_PLANS = (29, HELD_OUT)  # the leader-mode leave at N = 96 and at N = 200


@figure("leader-200-phases", source=", ".join(f"results/scale/validation-{p}/leader-phases"
                                              for p in PHASE_PLANS))
def leader_200_phases(ctx: Context) -> str:
    """Where the leader-mode leave spends its time at N = 96 and at N = 200, real members
    against the model's."""
    prov = read_provenance(ctx.results / f"scale/validation-{HELD_OUT}/leader-phases")
    return "\n".join([*leader_leave_phases(ctx, PHASE_PLANS), "", (
        "Median [interquartile range] over every member that stopped its fetchers in its first "
        "attempt after the event, nearest rank; the model's members drawn as `spark validate` "
        f"draws them, at the calibration's speed (20 draws). Plan {HELD_OUT}'s rows: "
        f"`{prov.command}` (revision `{prov.revision[:12]}`); plan {PHASE_PLANS[0]}'s the "
        "same on its own runs.")])
