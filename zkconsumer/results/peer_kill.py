"""Tally of one SIGKILL run of ``benchmarks/peer_kill.py``: what the members delivered.

Each member process appends one line per record it hands to the application,
``<unix time> <partition> <offset>``, to a log of its own (written line by line, so a SIGKILL
loses at most the line being written, which :func:`parse_deliveries` skips). The harness
records the offsets the broker acknowledged to its producer and, every ~100 ms, which member
each partition's owner znode names. From those alone:

* **duplicates**: records (partition, offset) delivered more than once, by anyone; the
  redeliveries made from the kill on are the kill's (those before it, the group's joining);
* **lost**: acknowledged records that nobody delivered by the end;
* **double ownership**: per partition, the time during which two members were delivering it
  at once. A member's deliveries of a partition are cut into *runs* wherever it went
  ``gap`` seconds without delivering it; a run spans its first to its last delivery. The
  stretch of a partition is the length of the union of the overlaps between runs of different
  members in which both delivered (a SIGKILLed member delivers nothing after its kill, so only
  live members count), from the kill on (before it: the members joining);
* **fetching after release**: for a member that owned a partition in ZooKeeper when the kill
  happened, the first poll after the kill at which the owner znode no longer named it, and its
  last delivery of that partition up to the last poll before the znode named it again (if
  ever; a delivery between those two polls may follow the new claim, so it is not counted): a
  positive lag is delivery from a partition whose owner znode it no longer held.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

Delivery = tuple[float, int, int]  # (unix time, partition, offset)
OwnerView = tuple[float, Mapping[int, str]]  # (unix time, partition -> member name)


def parse_deliveries(text: str) -> list[Delivery]:
    """The well-formed lines of a member's delivery log; a line cut short is skipped."""
    out: list[Delivery] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        try:
            out.append((float(parts[0]), int(parts[1]), int(parts[2])))
        except ValueError:
            continue
    return out


def duplicates(deliveries: Mapping[str, Sequence[Delivery]], since: float = float("-inf")) -> int:
    """Deliveries of a (partition, offset) after its first, over all members, counting those
    made at or after ``since`` (the kill: what the group's joining redelivered is not its)."""
    first: dict[tuple[int, int], float] = {}
    later: list[float] = []
    for t, p, o in sorted(d for records in deliveries.values() for d in records):
        if (p, o) in first:
            later.append(t)
        else:
            first[(p, o)] = t
    return sum(1 for t in later if t >= since)


def lost(acknowledged: Iterable[tuple[int, int]],
         deliveries: Mapping[str, Sequence[Delivery]]) -> int:
    """Acknowledged (partition, offset) pairs that no member delivered."""
    got = {(p, o) for records in deliveries.values() for _, p, o in records}
    return sum(1 for x in set(acknowledged) if x not in got)


def runs(times: Sequence[float], gap: float) -> list[tuple[float, float]]:
    """Sorted delivery instants cut where two are more than ``gap`` apart: (first, last)."""
    out: list[tuple[float, float]] = []
    for t in sorted(times):
        if out and t - out[-1][1] <= gap:
            out[-1] = (out[-1][0], t)
        else:
            out.append((t, t))
    return out


def union_length(spans: Iterable[tuple[float, float]]) -> float:
    """Total length covered by a set of intervals."""
    total = 0.0
    end = float("-inf")
    for a, b in sorted(spans):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


def double_ownership(deliveries: Mapping[str, Sequence[Delivery]], gap: float,
                     window: tuple[float, float] = (float("-inf"), float("inf")),
                     ) -> dict[int, float]:
    """Per partition delivered by two or more members at once within ``window`` (start, end):
    seconds of overlap (only partitions with a positive overlap are listed).

    Where runs of two members overlap, only the stretch in which both actually delivered
    counts (from the later of their first deliveries in the overlap to the earlier of their
    last): a partition handed from A to B and back within ``gap`` puts B's run inside A's
    without A delivering meanwhile, which is a clean handover, not double ownership."""
    per: dict[int, dict[str, list[float]]] = {}
    for member, records in deliveries.items():
        for t, p, _ in records:
            per.setdefault(p, {}).setdefault(member, []).append(t)
    out: dict[int, float] = {}
    for p, by_member in sorted(per.items()):
        member_runs = {m: runs(ts, gap) for m, ts in by_member.items()}
        names = sorted(member_runs)
        overlaps: list[tuple[float, float]] = []
        for i, m1 in enumerate(names):
            for m2 in names[i + 1:]:
                for a1, b1 in member_runs[m1]:
                    for a2, b2 in member_runs[m2]:
                        lo, hi = max(a1, a2, window[0]), min(b1, b2, window[1])
                        if hi <= lo:
                            continue
                        t1 = [t for t in by_member[m1] if lo <= t <= hi]
                        t2 = [t for t in by_member[m2] if lo <= t <= hi]
                        if t1 and t2 and min(max(t1), max(t2)) > max(min(t1), min(t2)):
                            overlaps.append((max(min(t1), min(t2)), min(max(t1), max(t2))))
        length = union_length(overlaps)
        if length > 0:
            out[p] = length
    return out


@dataclass(frozen=True)
class Release:
    """A live member's partition whose owner znode stopped naming it after the kill."""

    member: str
    partition: int
    znode_gone: float  # first poll after the kill not naming the member
    last_delivery: float | None  # its last delivery of the partition before it owned it again
    delivered_after: int  # its deliveries of the partition after znode_gone (before regaining)

    @property
    def lag(self) -> float | None:
        """Seconds from the znode's disappearance to the member's last delivery (positive:
        it went on delivering a partition it no longer owned in ZooKeeper)."""
        return None if self.last_delivery is None else self.last_delivery - self.znode_gone


def releases(views: Sequence[OwnerView], deliveries: Mapping[str, Sequence[Delivery]],
             killed_at: float, live: Iterable[str]) -> list[Release]:
    """Per live member and partition it owned at the kill: when its owner znode went and what
    it delivered from the partition afterwards (until the znode named it again)."""
    ordered = sorted(views, key=lambda v: v[0])
    before = [v for v in ordered if v[0] <= killed_at]
    after = [v for v in ordered if v[0] > killed_at]
    if not before:
        return []
    at_kill = before[-1][1]
    out: list[Release] = []
    for member in sorted(set(live)):
        for p in sorted(q for q, owner in at_kill.items() if owner == member):
            i = next((k for k, (_, view) in enumerate(after) if view.get(p) != member), None)
            if i is None:
                continue
            gone = after[i][0]
            # The claim that gave it back came after the last poll that saw it absent: a
            # delivery between that poll and the one that saw it again may follow the claim.
            back = next((after[k - 1][0] for k in range(i + 1, len(after))
                         if after[k][1].get(p) == member), float("inf"))
            mine = [t for t, q, _ in deliveries.get(member, ()) if q == p and t <= back]
            out.append(Release(member, p, gone, max(mine) if mine else None,
                               sum(1 for t in mine if t > gone)))
    return out


def releases_before(views: Sequence[OwnerView], deliveries: Mapping[str, Sequence[Delivery]],
                    until: float, members: Iterable[str]) -> list[Release]:
    """Every time before ``until`` (the kill) that an owner znode stopped naming one of
    ``members``, as the members joined and partitions moved: the figures of :func:`releases`,
    each counted up to the last poll before the znode named that member again."""
    ordered = sorted(views, key=lambda v: v[0])
    names = set(members)
    out: list[Release] = []
    for i in range(1, len(ordered)):
        gone, view = ordered[i]
        if gone > until:
            break
        for p, owner in sorted(ordered[i - 1][1].items()):
            if owner not in names or view.get(p) == owner:
                continue
            back = next((ordered[k - 1][0] for k in range(i + 1, len(ordered))
                         if ordered[k][1].get(p) == owner), float("inf"))
            mine = [t for t, q, _ in deliveries.get(owner, ()) if q == p and t <= back]
            out.append(Release(owner, p, gone, max(mine) if mine else None,
                               sum(1 for t in mine if t > gone)))
    return out


@dataclass(frozen=True)
class KillTally:
    """One run's figures, as runs.json keeps them."""

    delivered: int
    acknowledged: int
    duplicates: int  # redeliveries at or after the kill
    duplicates_total: int  # over the whole run, the group's joining included
    lost: int
    double_partitions: int  # double ownership from the kill on
    double_max_s: float
    double_total_s: float
    join_double_partitions: int  # double ownership before the kill (the members joining)
    join_double_max_s: float
    released: int
    delivered_after_release: int
    max_release_lag_s: float | None

    def as_dict(self) -> dict[str, object]:
        return {k: (round(v, 3) if isinstance(v, float) else v)
                for k, v in self.__dict__.items()}


def tally(deliveries: Mapping[str, Sequence[Delivery]], acknowledged: Sequence[tuple[int, int]],
          views: Sequence[OwnerView], killed_at: float, live: Iterable[str],
          gap: float) -> KillTally:
    """Every figure of one run from its raw records."""
    double = double_ownership(deliveries, gap, (killed_at, float("inf")))
    joining = double_ownership(deliveries, gap, (float("-inf"), killed_at))
    rel = releases(views, deliveries, killed_at, live)
    lags = [r.lag for r in rel if r.lag is not None]
    return KillTally(
        delivered=sum(len(r) for r in deliveries.values()),
        acknowledged=len(set(acknowledged)),
        duplicates=duplicates(deliveries, killed_at),
        duplicates_total=duplicates(deliveries),
        lost=lost(acknowledged, deliveries),
        double_partitions=len(double),
        double_max_s=max(double.values(), default=0.0),
        double_total_s=sum(double.values()),
        join_double_partitions=len(joining),
        join_double_max_s=max(joining.values(), default=0.0),
        released=len(rel),
        delivered_after_release=sum(r.delivered_after for r in rel),
        max_release_lag_s=max(lags) if lags else None,
    )
