"""The page's findings box: one line per experiment, its key numbers and its caveats.

Pure functions of a folder's ``results.json`` (or ``report.json``, ``sweep.csv`` rows) and its
provenance: how many runs back each number (a single run is "one run", never a median), how
many ran side by side on how many cores, and which broker measured it with what its
coordinator is known to distort (:mod:`zkconsumer.report.reference`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from zkconsumer.report.meta import RunMeta
from zkconsumer.report.reference import Reference, broker_caveat, where_reference_is
from zkconsumer.tables import fmt, median

BROKER_PROTOCOLS = ("eager-range", "cooperative-sticky", "static-range")


@dataclass(frozen=True)
class Finding:
    title: str
    anchor: str
    numbers: list[str]
    caveats: list[str] = field(default_factory=list)


def runs_phrase(n: int) -> str:
    """How many runs back a number: "one run" or "the median of n runs"."""
    return "one run" if n == 1 else f"the median of {n} runs"


def _ok(runs: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [r for r in runs if r.get("status", "ok") == "ok"]


def _metric(runs: Sequence[Mapping[str, Any]], key: str) -> float | None:
    values = [float(v) for v in ((r.get("metrics") or {}).get(key) for r in runs)
              if isinstance(v, (int, float))]
    return median(values)


def cells(runs: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    """Measured runs per (event, protocol), in the order the runs came."""
    out: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in _ok(runs):
        out.setdefault((str(r["event"]), str(r["protocol"])), []).append(r)
    return out


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{fmt(value)} s"


def machine_caveat(meta: RunMeta | None, side_by_side: int) -> str:
    cores = f"{meta.cores} cores" if meta and meta.cores else "cores not recorded"
    if side_by_side > 1:
        return f"{side_by_side} runs side by side on {cores}: timings are a quick look"
    return f"runs one at a time on {cores}"


def compare_finding(title: str, anchor: str, doc: Mapping[str, Any], meta: RunMeta | None,
                    reference: Reference | None) -> Finding:
    runs = list(doc.get("runs") or [])
    spec = doc.get("spec") or {}
    by_cell = cells(runs)
    events = list(dict.fromkeys(e for e, _ in by_cell))
    numbers = []
    for event in events:
        parts = [f"{p} {_seconds(_metric(rs, 'time_to_stable_s'))} "
                 f"({fmt(_metric(rs, 'members_paused'))} paused)"
                 for (e, p), rs in by_cell.items() if e == event]
        numbers.append(f"{event}, time to stable: " + ", ".join(parts))
    failed = [r for r in runs if r.get("status", "ok") != "ok"]
    if failed:
        numbers.append(", ".join(f"{r['protocol']}/{r['event']} {r['status']}" for r in failed))
    counts = {len(rs) for rs in by_cell.values()}
    first = runs[0] if runs else {}
    timeout = (spec.get("timing") or {}).get("session_timeout_ms") or (
        first.get("details") or {}).get("session_timeout_ms")
    members = spec.get("members") or first.get("members") or "?"
    partitions = spec.get("partitions") or first.get("partitions") or "?"
    broker = (meta.broker if meta else "") or _run_broker(runs)
    caveats = [f"n = {', '.join(map(str, sorted(counts))) or 0} per cell "
               f"({runs_phrase(min(counts)) if counts else 'no run'} each)",
               f"{members} members, {partitions} partitions, "
               f"session timeout {timeout or '?'} ms",
               machine_caveat(meta, meta.parallel if meta else 1),
               f"broker {broker or 'not recorded'}"]
    if any(p in BROKER_PROTOCOLS for _, p in by_cell):
        caveat = broker_caveat(broker, timeout)
        if caveat:
            caveats.append(caveat)
        caveats.append(reference_line(reference, events))
    return Finding(title, anchor, numbers, caveats)


def _run_broker(runs: Sequence[Mapping[str, Any]]) -> str:
    names = {str((r.get("details") or {}).get("broker", "")) for r in runs} - {""}
    return ", ".join(sorted(names))


def reference_line(reference: Reference | None, events: Sequence[str]) -> str:
    """The Kafka 2.4.1 times to stable of the same events, or where to find them."""
    if reference is None:
        return where_reference_is()
    parts = []
    for event in events:
        row = [f"{p} {_seconds(reference.stable_s.get((p, event)))}"
               for p in ("zk-range", "eager-range", "cooperative-sticky")
               if (p, event) in reference.stable_s]
        if row:
            parts.append(f"{event}: " + ", ".join(row))
    return f"{reference.describe()}: " + "; ".join(parts)


def herd_finding(title: str, anchor: str, doc: Mapping[str, Any], meta: RunMeta | None
                 ) -> Finding:
    runs = _ok(doc.get("runs") or [])
    numbers = []
    for key, fit in (doc.get("fits") or {}).items():
        points = fit.get("points") or []
        sizes = ", ".join(str(p[0]) for p in points)
        span = (f" ({fmt(points[0][1])} → {fmt(points[-1][1])} requests)"
                if len(points) >= 2 else "")
        r2 = fit.get("r2")
        numbers.append(f"{key}: requests per event grow as N^{fit['slope']:.2f}"
                       f"{'' if r2 is None else f' (r² {r2:.3f})'} over N = {sizes}{span}")
    rebalanced = [f"{r['params'].get('size_after', '?')}: "
                  f"{fmt((r.get('metrics') or {}).get('members_rebalanced'))}"
                  for r in runs if r.get("params")]
    if rebalanced:
        numbers.append("members that rebalanced, by group size after the event: "
                       + ", ".join(rebalanced))
    sizes = {}
    for r in runs:
        sizes.setdefault((r["protocol"], r["event"], r["members"]), []).append(r)
    n = min((len(v) for v in sizes.values()), default=0)
    timing = ((doc.get("spec") or {}).get("timing") or {})
    caveats = [f"n = {n} per group size ({runs_phrase(n) if n else 'no run'} each)",
               "members in threads of one process", machine_caveat(meta, 1),
               f"session timeout {timing.get('session_timeout_ms', '?')} ms",
               "ZooKeeper only: the broker serves data, no coordination"]
    return Finding(title, anchor, numbers, caveats)


def zombie_finding(title: str, anchor: str, doc: Mapping[str, Any], meta: RunMeta | None
                   ) -> Finding:
    runs = _ok(doc.get("runs") or [])
    numbers = []
    for r in runs:
        m, d = r.get("metrics") or {}, r.get("details") or {}
        parts = list(d.get("zombie_partitions") or [])
        timeout = d.get("session_timeout_ms") or (r.get("params") or {}).get(
            "session_timeout_ms", "?")
        numbers.append(
            f"{r['protocol']}: the zombie {d.get('zombie', '?')} was paused "
            f"{_seconds(d.get('pause_s'))} against a {timeout} ms session; others took its "
            f"{len(parts)} partition(s) {_seconds(d.get('takeover_s'))} after the pause, both "
            f"fetched them for {fmt(m.get('double_owned_s'))} partition-s, "
            f"{fmt(m.get('delivered_by_two'))} message(s) delivered by two members, "
            f"{fmt(m.get('late_commits_accepted'))} late commit(s) accepted, committed offset "
            f"moved back {fmt(m.get('offset_regressions'))} time(s), {fmt(m.get('lost'))} lost")
    per = {}
    for r in runs:
        per.setdefault(r["protocol"], []).append(r)
    n = min((len(v) for v in per.values()), default=0)
    broker = (meta.broker if meta else "") or "not recorded"
    caveats = [f"n = {n} ({runs_phrase(n) if n else 'no run'} per protocol)",
               "time counts from the instant the zombie's ZooKeeper connection was paused",
               machine_caveat(meta, 1), f"broker {broker} (serves data only here)"]
    return Finding(title, anchor, numbers, caveats)


def generic_finding(title: str, anchor: str, facts: Sequence[str], meta: RunMeta | None
                    ) -> Finding:
    return Finding(title, anchor, list(facts) or ["no key numbers: see the section"],
                   [machine_caveat(meta, meta.parallel if meta else 1)])
