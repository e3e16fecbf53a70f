"""The ``splitbrain-findings`` block of docs/split-brain-at-scale.md: statements computed from
the committed real runs and simulated sweeps under ``results/splitbrain/``, so that the page's
reading never quotes a number by hand."""

from __future__ import annotations

import re
import statistics
from typing import Any

from zkconsumer.results.figures.splitbrain import (
    AREA,
    BROKER,
    PRE_FIX_MARK,
    by_cell,
    decimal,
    fix_of,
    num,
    rows_of,
    suffix,
)
from zkconsumer.results.registry import Context, figure


def _sizes_where(rows: list[dict[str, Any]], protocol: str, scenario: str, metric: str
                 ) -> tuple[list[int], list[int]]:
    """(sizes run, sizes where ``metric`` > 0) of the real rows of one protocol/scenario."""
    run, hit = set(), set()
    for r in rows:
        if (r["protocol"], r["scenario"]) != (protocol, scenario) or r["reason"]:
            continue
        run.add(int(r["members"]))
        if (num(r.get(metric)) or 0) > 0:
            hit.add(int(r["members"]))
    return sorted(run), sorted(hit)


def _sum(rows: list[dict[str, Any]], protocols: tuple[str, ...], metric: str) -> float:
    return sum(num(r.get(metric)) or 0 for r in rows
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
            f"{decimal(_sum(rows, lead, 'double_owned_partition_s'))} partition·s with "
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


def _lost(real: list[dict[str, Any]]) -> str:
    """Acknowledged records not delivered by the end of their run: in runs measured before the
    fix, in runs whose group ended stuck (the verify tool failed with the group not stable:
    partitions nobody owned, the uncontrollable outcome), and elsewhere."""
    everyone = tuple({r["protocol"] for r in real})
    def ended_stuck(r: dict[str, Any]) -> bool:
        return r["verify_ok"] == "false" and r["stable_at_end"] == "false"

    pre = [r for r in real if r["pre_fix"]]
    stuck = [r for r in real if not r["pre_fix"] and ended_stuck(r)]
    rest = [r for r in real if not r["pre_fix"] and not ended_stuck(r)]
    where = sorted({f"{r['protocol']} {r['scenario']} N = {r['members']} retries "
                    f"{r['rebalance_max_retries']}" for r in stuck if (num(r["lost"]) or 0) > 0})
    return (f"- **Lost** (acknowledged records not delivered by the end of the run): "
            f"{int(_sum(real, everyone, 'lost'))} over all "
            f"{sum(not r['reason'] for r in real)} real runs: {int(_sum(pre, everyone, 'lost'))} "
            f"in runs measured before the fix, {int(_sum(stuck, everyone, 'lost'))} in runs "
            f"whose group ended with partitions nobody owned (the verify tool failed; "
            f"{', '.join(where) or 'none'}), {int(_sum(rest, everyone, 'lost'))} in the "
            f"others.{_for_good(real)}")


def _for_good(real: list[dict[str, Any]]) -> str:
    """Of the undelivered records, those below the committed offset, where it was read."""
    measured = [r for r in real if num(r.get("lost_for_good")) is not None]
    if not measured:
        return ""
    undelivered = [r for r in measured if (num(r["lost"]) or 0) > 0]
    total = int(sum(num(r["lost"]) or 0 for r in measured))
    skipped = int(sum(num(r["lost_for_good"]) or 0 for r in measured))
    return (f" In the {len(measured)} runs that read the committed offsets at the end, "
            f"{total} records were undelivered (in {len(undelivered)} runs), {skipped} of them "
            f"below their partition's committed offset (lost for good); the others were still "
            f"ahead of it.")


@figure("splitbrain-findings", source="results/splitbrain")
def findings(ctx: Context) -> str:
    base = ctx.results / AREA
    fix = fix_of(ctx)
    real = [{**r, "pre_fix": fix is not None and fix.predates(d.name, r["protocol"])}
            for d in sorted(base.glob("real-*")) for r in rows_of(d)]
    post = [r for r in real if not r["pre_fix"]]
    out = []
    if real:
        run, hit = _sizes_where(real, "zk-range", "zombie", "double_owned_partition_s")
        out.append(f"- **Zombie, real.** The legacy group double-owned partitions at N = "
                   f"{', '.join(map(str, hit)) or 'none'} of {', '.join(map(str, run))} "
                   f"({decimal(_sum(real, ('zk-range',), 'double_owned_partition_s'))} partition·s "
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
        out.append(_lost(real))
    storms = [(d, "one host per member") for d in base.glob("sim-storm-r*")] + \
        [(d, "this machine's placement") for d in base.glob("sim-here-storm-r*")]
    for d, where in sorted(storms, key=lambda x: (x[1], int(re.sub(r"\D", "", x[0].name)))):
        probs = by_cell(rows_of(d), "p_give_up")
        legacy = sorted((n, statistics.fmean(v)) for (p, n), v in probs.items()
                        if p == "zk-range")
        likely = [n for n, p in legacy if p >= 0.5]
        some = [n for n, p in legacy if p > 0]
        others = max((statistics.fmean(v) for (p, _), v in probs.items() if p != "zk-range"),
                     default=0.0)
        retries = re.sub(r"\D", "", d.name)
        out.append(f"- **Storm, simulated ({where}), retries {retries}**: some legacy "
                   f"member gives up with probability ≥ 0.5 at N = "
                   f"{', '.join(map(str, likely)) or 'none'} and with a probability above 0 "
                   f"at N = {', '.join(map(str, some)) or 'none'} (of "
                   f"{', '.join(str(n) for n, _ in legacy)}); the highest probability for the "
                   f"other protocols is {others:.2f}.")
    for d in sorted(base.glob("sim-zombie-f*")):
        dbl = by_cell(rows_of(d), "double_owned_partition_s")
        legacy = sorted((n, statistics.median(v)) for (p, n), v in dbl.items()
                        if p == "zk-range")
        pos = [n for n, v in legacy if v > 0]
        leader = max((max(v) for (p, _), v in dbl.items() if p == "zk-leader-range"),
                     default=0.0)
        out.append(f"- **Zombie, simulated, fraction {suffix(d, 'sim-zombie-f')}**: legacy "
                   f"double ownership (median > 0) at N = {', '.join(map(str, pos)) or 'none'}"
                   f"; leader mode: {decimal(leader)} partition·s at most.")
    return "\n".join(out) if out else "No results committed yet."
