"""When a herd event is over: the settling rules, as pure functions of the members' records.

The sweep (``lab/herd/run.py``) polls these with the records read so far and the current time;
they never wait, read a server or touch a member, so each rule is tested on hand-written
records (``tests/unit/test_lab_herd_settle.py``).

An event's window ends when the group has settled: no coordination record for ``quiet_s`` (and
one since the event by a member other than a leaver), and for ZooKeeper members no request
either and every watch notification the server sent received by a member.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from zkconsumer.lab.records import (
    Coord,
    CoordEvent,
    Decision,
    Lifecycle,
    LifecycleEntry,
    RequestSample,
)

Incarnation = tuple[str, int]  # (member, incarnation)

# Coordination records that show a member took part in a rebalance.
REBALANCING = frozenset({Coord.ATTEMPT.value, Coord.REBALANCE_STARTED.value,
                         Coord.REBALANCE_SUCCEEDED.value})


def member_failure(lifecycle: Iterable[LifecycleEntry]) -> str | None:
    """``"m03.0 failed: <first line>"`` for the first member that reported an error, else None."""
    for lc in lifecycle:
        if lc.what is Lifecycle.ERROR:
            first = lc.detail.splitlines()[0] if lc.detail else "?"
            return f"member {lc.member}.{lc.incarnation} failed: {first}"
    return None


def all_rebalanced(coord: Iterable[CoordEvent], current: Iterable[Incarnation]) -> bool:
    """Every current member incarnation has completed a rebalance, or (a KIP-848 member given
    nothing) is in the group."""
    done = {(c.member, c.incarnation) for c in coord
            if c.what in (Coord.REBALANCE_SUCCEEDED.value, Coord.JOINED.value)}
    return set(current) <= done


def coordination_quiet(coord: Sequence[CoordEvent], now: float, quiet_s: float,
                       since: float | None = None, leaver: str | None = None,
                       decisions: Sequence[Decision] = ()) -> bool:
    """No coordination record (watch notifications aside) for ``quiet_s`` and, with ``since``,
    one after it by a member other than ``leaver``: a leaver's own revocation is not the group
    noticing (a broker may start the rebalance seconds after the LeaveGroup, the group looking
    stable meanwhile).

    A decision counts as a reaction: when a member that owns nothing leaves a leader-mode group,
    the leader publishes a generation without it and nobody has anything to hand over, so the
    decision is the group's only record of noticing.
    """
    records: list[CoordEvent | Decision] = [c for c in coord if c.what != Coord.WATCH_FIRED.value]
    records += list(decisions)
    last = max((c.ts for c in records), default=0.0)
    if since is not None and not any(c.ts >= since and c.member != leaver for c in records):
        return False
    return now - last >= quiet_s


def unchanged_since(samples: list[tuple[float, int]], since: float, fresh_after: float
                    ) -> bool:
    """A sample older than ``since`` and every later one equal to it, the last being fresh."""
    older = [total for ts, total in samples if ts <= since]
    later = [(ts, total) for ts, total in samples if ts > since]
    if not older or not later or later[-1][0] < fresh_after:
        return False
    return all(total == older[-1] for _, total in later)


def requests_quiet(requests: Iterable[RequestSample], current: Iterable[Incarnation],
                   now: float, hold_s: float, fresh_s: float) -> bool:
    """Every current member's request total stayed the same for ``hold_s``, as seen by a sample
    taken within ``fresh_s`` (members sample their counters periodically)."""
    samples: dict[Incarnation, list[tuple[float, int]]] = {}
    for s in requests:
        samples.setdefault((s.member, s.incarnation), []).append((s.ts, sum(s.counts.values())))
    return all(unchanged_since(samples.get(k, []), now - hold_s, now - fresh_s)
               for k in current)


def notifications_delivered(coord: Iterable[CoordEvent], since: float, sent: int,
                            closed: int) -> bool:
    """Every watch notification the server sent since ``since`` reached a member's records.

    A member whose notification is still in flight looks idle, not done. A leaver's session may
    be notified of its own registration's deletion while it closes (``closed`` sessions): that
    notification reaches nobody's records.
    """
    received = sum(1 for c in coord if c.what == Coord.WATCH_FIRED.value and c.ts >= since)
    return received >= sent - closed


def members_rebalanced(coord: Iterable[CoordEvent], t0: float, t1: float,
                       leaver: str | None = None) -> list[str]:
    """Members that took part in a rebalance in ``[t0, t1]``; a leaver's own revocation is its
    leaving, not a rebalance it took part in."""
    return sorted({c.member for c in coord if c.what in REBALANCING and t0 <= c.ts <= t1
                   and c.member != leaver})


def coordination_end(coord: Iterable[CoordEvent], t0: float, t1: float) -> float | None:
    """Seconds from ``t0`` to the group's last coordination record in ``[t0, t1]``.

    It differs from time to stable when partitions never stopped (a cooperative join that moves
    nothing is stable throughout).
    """
    last = max((c.ts for c in coord if t0 <= c.ts <= t1 and c.what != Coord.WATCH_FIRED.value),
               default=None)
    return None if last is None else round(last - t0, 3)
