"""The verdicts of a formation run and the tally per kind, budget and size (pure).

A run's row carries the split-brain sweep's columns that the verdicts read: ``reason`` (empty
for a completed run; :data:`~zkconsumer.results.exclusions.NOT_FORMED` first when some initial
member exited before the group was stable), ``rebalances_given_up``, ``verify_ok`` and
``repaired``. :func:`formed` is :func:`~zkconsumer.results.exclusions.formation_verdict` and
:func:`cells` is the findings page's :func:`budget_cells`, so a run of the original is judged
by the very rules the "did not form" figures were.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from zkconsumer.results.exclusions import NOT_FORMED, formation_verdict
from zkconsumer.results.figures.findings_outcome import BudgetCell, budget_cells

KINDS = ("original", "zkconsumer")


@dataclass(frozen=True)
class Outcome:
    """What one run saw, before any verdict."""

    kind: str
    budget: int
    members: int
    seed: int
    exited_before_stable: int       # initial members that exited before the group was stable
    stable: bool                    # the group showed every partition owned by its N members
    gave_up: int                    # "can't rebalance after N retries" said, by all members
    gave_up_members: int            # members that said it at least once
    verify_ok: bool | None          # the verify tool after the storm (None: no storm)
    error: str = ""                 # anything else that stopped the run


def reason_of(o: Outcome) -> str:
    """The row's ``reason``, in the split-brain job's words."""
    if o.exited_before_stable:
        return (f"{NOT_FORMED} {o.exited_before_stable} of {o.members} initial members exited "
                f"before it was stable (rebalance.max.retries = {o.budget})")
    if o.error:
        return f"failed: {o.error}"
    if not o.stable:
        return ("failed: the group was not stable before the formation deadline or the "
                "first leaver's lifetime ended")
    return ""


def row_of(o: Outcome, **measured: Any) -> dict[str, Any]:
    """The run's row (strings where the sweep CSV has strings, so the same rules read both)."""
    reason = reason_of(o)
    row: dict[str, Any] = {
        "kind": o.kind, "budget": o.budget, "members": o.members, "seed": o.seed,
        "reason": reason, "rebalances_given_up": str(o.gave_up),
        "gave_up_members": o.gave_up_members,
        "verify_ok": "" if o.verify_ok is None else str(o.verify_ok).lower(),
        "repaired": "false", **measured}
    row["formed"] = formation_verdict(row)
    return row


def formed(row: dict[str, Any]) -> bool | None:
    return formation_verdict(row)


def cells(rows: Sequence[dict[str, Any]]) -> list[tuple[str, BudgetCell]]:
    """Per kind, then budget and size: formed of the runs with a verdict; gave up and stuck
    among those formed (:func:`budget_cells`)."""
    out = []
    for kind in [k for k in KINDS if any(r["kind"] == k for r in rows)]:
        runs = [{"budget": int(r["budget"]), "members": int(r["members"]), "formed": formed(r),
                 "row": r} for r in rows if r["kind"] == kind]
        out += [(kind, c) for c in budget_cells([s for s in runs if s["formed"] is not None])]
    return out
