"""The chaos schedule: which fault happens when, to whom, as a pure function of the seed.

A run must be reproducible from its seed, so every decision is taken here, before anything
starts: the schedule simulates the membership (who is alive, who is behind a held connection,
whether a ZooKeeper server is down) and only picks actions that make sense at that moment.
Executing it is then a plain walk through a sorted list (``runner.py``).

Kinds of action:

- ``join``: a new member (a fresh name, never reused) starts and joins the group;
- ``leave``: a member leaves cleanly (SIGTERM: it commits, shuts the connector down);
- ``kill``: a member is SIGKILLed (no shutdown; its znodes live until its session expires);
- ``expire``: a member's ZooKeeper traffic is held longer than the session timeout, so the
  servers expire its session; it then reconnects with a new one;
- ``pause``: the same, shorter than the session timeout (the session survives);
- ``zk-leader-kill``: the ZooKeeper ensemble's leader is SIGKILLed and restarted later.

``resume`` and ``zk-restart`` are the ends of those fault windows; they are part of the schedule
too (so every fault is healed before the chaos ends) but are not counted as actions.
"""

from __future__ import annotations

import enum
import random
from dataclasses import asdict, dataclass
from typing import Any


class Kind(str, enum.Enum):
    JOIN = "join"
    LEAVE = "leave"
    KILL = "kill"
    EXPIRE = "expire"
    PAUSE = "pause"
    ZK_LEADER_KILL = "zk-leader-kill"
    # The ends of fault windows, not actions of their own.
    RESUME = "resume"
    ZK_RESTART = "zk-restart"


ACTION_KINDS = (Kind.JOIN, Kind.LEAVE, Kind.KILL, Kind.EXPIRE, Kind.PAUSE, Kind.ZK_LEADER_KILL)
# Relative frequency once every kind has happened once.
WEIGHTS = {Kind.JOIN: 3, Kind.LEAVE: 2, Kind.KILL: 2, Kind.EXPIRE: 2, Kind.PAUSE: 3,
           Kind.ZK_LEADER_KILL: 1}


@dataclass(frozen=True)
class Action:
    """One step: at ``at`` seconds after the chaos began, do ``kind`` to ``target``.

    ``target`` is a member name, or ``leader`` for ZooKeeper leader kills (which server leads is
    only known when it happens). ``hold_s`` is how long a pause/expiry holds the traffic.
    """

    at: float
    kind: Kind
    target: str
    hold_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["kind"] = self.kind.value
        return d


@dataclass(frozen=True)
class ScheduleParams:
    """How dense and how long the faults are; derived from the session timeout."""

    session_timeout_s: float = 4.0
    mean_gap_s: float = 3.0          # between two actions
    zk_down_s: float = 3.0           # a killed ZooKeeper server is restarted after this
    zk_gap_s: float = 12.0           # at least this long between two leader kills

    @property
    def expire_hold_s(self) -> float:
        """Long enough that the servers expire the session whatever the client does."""
        return self.session_timeout_s * 1.5 + 1.0

    @property
    def tail_s(self) -> float:
        """No action starts this close to the end, so every fault ends inside the chaos."""
        return max(self.expire_hold_s, self.zk_down_s) + 0.5


def member_name(index: int) -> str:
    return f"m{index:02d}"


def bounds(members: int) -> tuple[int, int]:
    """(fewest, most) members alive at once: the group never empties and never doubles."""
    low = max(1, min(2, members), members // 2)
    return low, members + max(1, members // 2)


def build_schedule(seed: int, duration_s: float, members: int,
                   params: ScheduleParams | None = None) -> list[Action]:
    """Every action of a run, in time order; the same arguments give the same list.

    The first actions go through every kind once (in a seeded order) so that even a short run
    exercises all of them; later kinds are drawn by ``WEIGHTS``. A kind that makes no sense at
    its moment (a leave at the minimum size, a second leader kill while a server is still down)
    is replaced by another draw.
    """
    if members < 1:
        raise ValueError(f"members must be >= 1, got {members}")
    p = params or ScheduleParams()
    rng = random.Random(seed)
    low, high = bounds(members)
    alive = [member_name(i) for i in range(members)]
    next_index = members
    held_until: dict[str, float] = {}      # member -> when its held traffic is released
    zk_free_at = 0.0                        # earliest time for the next leader kill
    pending = list(ACTION_KINDS)
    rng.shuffle(pending)
    out: list[Action] = []
    last_start = duration_s - p.tail_s
    t = rng.uniform(0.5, 1.5) * min(p.mean_gap_s, 2.0)
    while t <= last_start:
        free = [m for m in alive if held_until.get(m, 0.0) <= t]

        held = len(alive) - len(free)

        def feasible(kind: Kind, free: list[str] = free, t: float = t, held: int = held,
                     zk_free_at: float = zk_free_at) -> bool:
            if kind is Kind.JOIN:
                return len(alive) < high
            if kind in (Kind.LEAVE, Kind.KILL):
                return len(alive) > low and bool(free)
            if kind in (Kind.EXPIRE, Kind.PAUSE):
                # A third of the group cut off at most: chaos, not a dead group.
                return bool(free) and held < max(1, len(alive) // 3)
            return t >= zk_free_at

        kind = next((k for k in pending if feasible(k)), None)
        if kind is not None:
            pending.remove(kind)
        else:
            options = [k for k in ACTION_KINDS if feasible(k)]
            kind = rng.choices(options, [WEIGHTS[k] for k in options])[0] if options else None
        if kind is Kind.JOIN:
            name = member_name(next_index)
            next_index += 1
            alive.append(name)
            out.append(Action(round(t, 3), kind, name))
        elif kind in (Kind.LEAVE, Kind.KILL):
            name = rng.choice(free)
            alive.remove(name)
            out.append(Action(round(t, 3), kind, name))
        elif kind in (Kind.EXPIRE, Kind.PAUSE):
            name = rng.choice(free)
            hold = (p.expire_hold_s if kind is Kind.EXPIRE
                    else rng.uniform(0.25, 0.5) * p.session_timeout_s)
            hold = round(hold, 3)
            held_until[name] = t + hold
            out.append(Action(round(t, 3), kind, name, hold))
            out.append(Action(round(t + hold, 3), Kind.RESUME, name))
        elif kind is Kind.ZK_LEADER_KILL:
            zk_free_at = t + p.zk_gap_s
            out.append(Action(round(t, 3), kind, "leader", p.zk_down_s))
            out.append(Action(round(t + p.zk_down_s, 3), Kind.ZK_RESTART, "leader"))
        t += rng.uniform(0.5, 1.5) * p.mean_gap_s
    out.sort(key=lambda a: (a.at, a.kind is not Kind.RESUME))
    return out


def action_counts(schedule: list[Action]) -> dict[str, int]:
    """Actions by kind (fault-window ends excluded)."""
    counts = {k.value: 0 for k in ACTION_KINDS}
    for a in schedule:
        if a.kind in ACTION_KINDS:
            counts[a.kind.value] += 1
    return counts


def initial_members(members: int) -> list[str]:
    return [member_name(i) for i in range(members)]
