"""Why each duplicate of a chaos run happened: every extra delivery tied to the fault behind it.

A member commits a record's offset only after the record is in its file, at most
``COMMIT_INTERVAL_S`` later or before a release; so a record is delivered again only when its
first deliverer was interrupted between writing it and committing it. The interruption is in
that member's own file: the line after the delivery (or, if the member was cut off from
ZooKeeper when it delivered, the line that said so). This module reads it and names the fault
that caused it from the run's schedule. Pure functions over parsed lines and the schedule.

The decision rule, for one record delivered ``n > 1`` times:

1. order its deliveries by the time of the last event line before each (a member's deliveries
   carry no clock; the events around them do), then by member and line; the last delivery is
   the one that stuck, each of the ``n - 1`` others is a duplicate's origin;
2. an origin's *marker* is the member's last session event before it when that said
   ``SUSPENDED``/``LOST`` (it was delivering while cut off), else the first line after it
   that is a session loss, a ``rebalance_started``, the member's ``stopped`` line, or the end
   of a file that has no ``stopped`` line (the process was killed);
3. the marker names the cause: the end of a killed member's file is ``kill``; ``stopped`` is
   ``leave``; a session loss is the scheduled ``expire`` or ``pause`` of that member whose
   hold covers it, else its ``leave`` (closing the session on SIGTERM), else a
   ``zk-leader-kill`` within ``LEADER_WINDOW_S`` before it, else
   ``disconnect`` (no scheduled fault explains it); a ``rebalance_started`` is ``rebalance``:
   the member's offsets as of that release did not stick, because its commit did not get
   through or because a member returning from an expiry wrote its older offsets afterwards
   (the legacy protocol's late commit); the last scheduled action of the
   ``REBALANCE_CONTEXT_S`` before it (``end of expire`` for the end of a hold) is given as
   context, not as the cause.

Schedule times are relative to the start of the chaos; the members' clocks are wall clocks.
:func:`estimate_start` ties the two together from the members the schedule started (their
first line comes after their join) and killed (their last line comes before their kill).
"""

from __future__ import annotations

import json
import logging
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from zkconsumer.lab.chaos.schedule import Action, Kind

log = logging.getLogger(__name__)

LEADER_WINDOW_S = 8.0   # a leader kill drops members at once; the election may take seconds
LEAVE_S = 25.0          # a leaving member's session closes within its leave deadline
REBALANCE_CONTEXT_S = 10.0  # a rebalance's likely trigger: the last fault this long before it
HOLD_SLACK_S = 3.0      # SUSPENDED comes ~2/3 session timeout into a hold; start estimate error
CAUSES = ("kill", "expire", "pause", "zk-leader-kill", "leave", "rebalance", "disconnect",
          "unexplained")


@dataclass(frozen=True)
class Delivery:
    member: str
    line: int
    key: str
    seq: int
    partition: int
    offset: int
    after_ts: float     # the last event line's time before it (the member's first line's if none)


@dataclass(frozen=True)
class Marker:
    member: str
    line: int
    ts: float | None    # None: end of a file (a killed process)
    kind: str           # "lost" (session suspended/lost), "rebalance", "stopped", "end"


@dataclass
class MemberTimeline:
    name: str
    deliveries: list[Delivery] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)
    first_ts: float | None = None
    last_ts: float | None = None
    lines: int = 0
    # line index of each session_state -> whether it left the member cut off
    session_lines: list[tuple[int, bool]] = field(default_factory=list)


def parse_timeline(name: str, lines: Iterable[bytes]) -> MemberTimeline:
    """One member's file as deliveries and markers; a line cut short by a kill is ignored."""
    tl = MemberTimeline(name)
    last_ts: float | None = None
    stopped = False
    i = -1
    for i, raw in enumerate(lines):
        if not raw.endswith(b"\n"):
            continue
        rec = json.loads(raw)
        ts = rec.get("ts")
        if ts is not None:
            last_ts = float(ts)
            tl.first_ts = last_ts if tl.first_ts is None else tl.first_ts
            tl.last_ts = last_ts
        kind = rec.get("t")
        if kind == "d" and rec.get("k") is not None and rec.get("s") is not None:
            tl.deliveries.append(Delivery(name, i, str(rec["k"]), int(rec["s"]),
                                          int(rec.get("p", -1)), int(rec.get("o", -1)),
                                          last_ts if last_ts is not None else 0.0))
        elif kind == "e" and rec.get("e") == "session_state":
            cut = rec.get("state") in ("SUSPENDED", "LOST")
            tl.session_lines.append((i, cut))
            if cut:
                tl.markers.append(Marker(name, i, last_ts, "lost"))
        elif kind == "e" and rec.get("e") == "rebalance_started":
            tl.markers.append(Marker(name, i, last_ts, "rebalance"))
        elif kind == "lc" and rec.get("w") == "stopped":
            stopped = True
            tl.markers.append(Marker(name, i, last_ts, "stopped"))
    tl.lines = i + 1
    if not stopped:
        tl.markers.append(Marker(name, tl.lines, None, "end"))
    return tl


def read_timelines(directory: Path) -> list[MemberTimeline]:
    out = []
    for path in sorted(directory.glob("*.records.jsonl")):
        with open(path, "rb") as fh:
            out.append(parse_timeline(path.name.split(".")[0], fh))
    return out


def marker_of(tl: MemberTimeline, d: Delivery) -> Marker:
    """Rule 2 of the module docstring."""
    cut_since: int | None = None
    for line, cut in tl.session_lines:
        if line > d.line:
            break
        cut_since = line if cut else None
    if cut_since is not None:
        return next(m for m in tl.markers if m.line == cut_since)
    return next(m for m in tl.markers if m.line > d.line)


@dataclass(frozen=True)
class StartEstimate:
    start: float        # wall clock of the schedule's time 0
    low: float          # from kills: no line after a kill
    high: float         # from joins: no line before a join

    def as_dict(self) -> dict[str, float]:
        return {"start": self.start, "low": self.low, "high": self.high}


def estimate_start(timelines: Sequence[MemberTimeline], schedule: Sequence[Action]
                   ) -> StartEstimate:
    """The wall-clock time of the schedule's 0, bounded by the joined and killed members."""
    by_name = {tl.name: tl for tl in timelines}
    highs = [by_name[a.target].first_ts - a.at for a in schedule
             if a.kind is Kind.JOIN and a.target in by_name and by_name[a.target].first_ts]
    lows = [by_name[a.target].last_ts - a.at for a in schedule
            if a.kind is Kind.KILL and a.target in by_name and by_name[a.target].last_ts]
    if not highs:
        raise ValueError("no joined member in the run: cannot place the schedule in time")
    high = min(highs)  # type: ignore[type-var]
    low = max(lows) if lows else high  # type: ignore[type-var]
    start = (low + high) / 2 if low <= high else high
    return StartEstimate(start=float(start), low=float(low), high=float(high))


@dataclass(frozen=True)
class Attribution:
    cause: str
    action_at: float | None     # the schedule time of the fault (None: no scheduled fault)
    action_target: str
    action_kind: str = ""       # the scheduled action's kind (for a rebalance: its context)


def attribute(marker: Marker, schedule: Sequence[Action], start: float) -> Attribution:
    """Rule 3 of the module docstring."""
    mine = [a for a in schedule if a.target == marker.member]
    if marker.kind == "end":
        kills = [a for a in mine if a.kind is Kind.KILL]
        if kills:
            return Attribution("kill", kills[0].at, marker.member, "kill")
        return Attribution("unexplained", None, marker.member)
    if marker.kind == "stopped":
        leaves = [a for a in mine if a.kind is Kind.LEAVE]
        return Attribution("leave", leaves[0].at if leaves else None, marker.member,
                           "leave" if leaves else "")
    t = (marker.ts or 0.0) - start
    if marker.kind == "rebalance":
        # a release whose commit did not get through; the fault just before it is context
        before = [a for a in schedule if t - REBALANCE_CONTEXT_S <= a.at <= t + 1.0]
        if before:
            return Attribution("rebalance", before[-1].at, before[-1].target,
                               context_kind(before[-1], schedule))
        return Attribution("rebalance", None, marker.member)
    for a in mine:
        if a.kind in (Kind.EXPIRE, Kind.PAUSE) and a.at - 1.0 <= t <= a.at + a.hold_s + \
                HOLD_SLACK_S:
            return Attribution(a.kind.value, a.at, a.target, a.kind.value)
    leaves = [a for a in mine if a.kind is Kind.LEAVE and a.at - 1.0 <= t <= a.at + LEAVE_S]
    if leaves:  # a member closing its session on SIGTERM reports it lost
        return Attribution("leave", leaves[0].at, marker.member, "leave")
    kills = [a for a in schedule if a.kind is Kind.ZK_LEADER_KILL
             and a.at - 1.0 <= t <= a.at + LEADER_WINDOW_S]
    if kills:
        return Attribution("zk-leader-kill", kills[-1].at, "leader", "zk-leader-kill")
    return Attribution("disconnect", None, marker.member)


def context_kind(action: Action, schedule: Sequence[Action]) -> str:
    """An action's kind; the end of a hold says which hold it ends (``end of expire``), as a
    member whose session expired commits its stale offsets when its traffic flows again."""
    if action.kind is Kind.RESUME:
        held = [a for a in schedule if a.target == action.target and a.at < action.at
                and a.kind in (Kind.EXPIRE, Kind.PAUSE)]
        return f"end of {held[-1].kind.value}" if held else "resume"
    return action.kind.value


@dataclass
class CauseReport:
    start: StartEstimate
    duplicates: int
    by_cause: dict[str, int]
    episodes: list[dict[str, object]]   # one per (member, marker): cause, fault, count
    by_kind: dict[str, dict[str, object]] = field(default_factory=dict)  # see per_kind

    def as_dict(self) -> dict[str, object]:
        return {"start": self.start.as_dict(), "duplicates": self.duplicates,
                "by_cause": self.by_cause, "episodes": self.episodes, "by_kind": self.by_kind}


def per_kind(timelines: Sequence[MemberTimeline], report: CauseReport,
             kinds: dict[str, str]) -> dict[str, dict[str, object]]:
    """Per member kind (``original``, ``zkconsumer``): its members, their deliveries, and the
    duplicates whose origin (the delivery that did not stick) was one of theirs, by cause."""
    out: dict[str, dict[str, object]] = {}
    for kind in sorted(set(kinds.values())):
        mine = {m for m, k in kinds.items() if k == kind}
        causes: Counter[str] = Counter()
        for ep in report.episodes:
            if ep["member"] in mine:
                causes[str(ep["cause"])] += int(ep["duplicates"])  # type: ignore[call-overload]
        out[kind] = {
            "members": len(mine),
            "deliveries": sum(len(tl.deliveries) for tl in timelines if tl.name in mine),
            "duplicates": sum(causes.values()),
            "by_cause": {c: causes.get(c, 0) for c in CAUSES}}
    return out


def duplicate_causes(timelines: Sequence[MemberTimeline], schedule: Sequence[Action],
                     start: StartEstimate | None = None) -> CauseReport:
    """Every duplicate delivery of the run with its cause (rule 1 of the module docstring)."""
    start = start or estimate_start(timelines, schedule)
    by_name = {tl.name: tl for tl in timelines}
    deliveries: dict[tuple[str, int], list[Delivery]] = defaultdict(list)
    for tl in timelines:
        for d in tl.deliveries:
            deliveries[(d.key, d.seq)].append(d)
    episodes: dict[tuple[str, int], dict[str, object]] = {}
    partitions: dict[tuple[str, int], set[int]] = defaultdict(set)
    counts: Counter[str] = Counter()
    total = 0
    for ds in deliveries.values():
        if len(ds) < 2:
            continue
        ds.sort(key=lambda d: (d.after_ts, d.member, d.line))
        for d in ds[:-1]:
            total += 1
            marker = marker_of(by_name[d.member], d)
            at = attribute(marker, schedule, start.start)
            counts[at.cause] += 1
            key = (marker.member, marker.line)
            ep = episodes.setdefault(key, {
                "member": marker.member, "cause": at.cause,
                "fault_at_s": None if at.action_at is None else round(at.action_at, 2),
                "fault_kind": at.action_kind, "fault_target": at.action_target,
                "marker_s": None if marker.ts is None else round(marker.ts - start.start, 2),
                "duplicates": 0})
            ep["duplicates"] = int(ep["duplicates"]) + 1  # type: ignore[call-overload]
            partitions[key].add(d.partition)
    rows = []
    for key, ep in episodes.items():
        ep["partitions"] = len(partitions[key])
        rows.append(ep)
    rows.sort(key=lambda e: (e["fault_at_s"] is None, e["fault_at_s"] or 0.0,
                             str(e["member"])))
    by_cause = {c: counts.get(c, 0) for c in CAUSES}
    return CauseReport(start=start, duplicates=total, by_cause=by_cause, episodes=rows)


def write_cause_outputs(report: CauseReport, chaos_report: dict[str, object], out_dir: Path
                        ) -> list[Path]:
    """The compact files a run leaves for ``results/``: the report and the cause tables."""
    out_dir.mkdir(parents=True, exist_ok=True)
    compact = {k: v for k, v in chaos_report.items() if k != "records_dir"}
    written = [out_dir / "report.json", out_dir / "duplicate-causes.json",
               out_dir / "duplicate-episodes.csv"]
    written[0].write_text(json.dumps(compact, indent=1, sort_keys=True) + "\n")
    summary = {"start": report.start.as_dict(), "duplicates": report.duplicates,
               "by_cause": report.by_cause, "episodes": len(report.episodes)}
    if report.by_kind:
        summary["by_kind"] = report.by_kind
    written[1].write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    cols = ("fault_at_s", "cause", "fault_kind", "fault_target", "member", "marker_s", "partitions",
            "duplicates")
    lines = [",".join(cols)]
    for ep in report.episodes:
        lines.append(",".join("" if ep.get(c) is None else str(ep[c]) for c in cols))
    written[2].write_text("\n".join(lines) + "\n")
    return written
