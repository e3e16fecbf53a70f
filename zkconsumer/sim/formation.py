"""Where a formed broker-side group's heartbeat schedules stand when the event comes.

librdkafka restarts a member's heartbeat schedule when its assignment is taken (the consumer
enters its steady state and starts its 500 ms poll-interval timer, which wakes the client
thread on that grid), so the round that formed a group leaves its members heartbeating in
step, not at independent random phases. The Spark herd runs' per-member records show it:
every member of one Spark task revoked within about 30 ms of the others (validation plans 3
and 4), and each member learnt of the event 2-19 ms (median 5) after its own recorded
assignment + k heartbeat intervals (the eager runs of plans 7 and 8, Tansu and Apache Kafka:
the heartbeat, its answer and the callback). Apache Kafka 2.4.1 answered both tasks at once
(0.00 s apart in 30 of 30 eager and cooperative runs); Tansu 0.6.0 answered them within
0.11 s in 29 of 44 runs, 0.28-0.35 s apart in 3 and 0.75-0.98 s apart in the other 12. Read
member by member, those 12 are not a task answered early: one to four *stragglers* were
answered exactly one of Tansu's looks (1.00 s) after the group's first answer, everybody else
within the usual tenth of a second (a follower's SyncGroup sent before the leader's waits for
the next look). In the Tansu runs of results/scale/tansu-formation and validation plan 21
(cooperative and eager, N = 12 and 48), 39 of 115 formations had stragglers, 1 to 4 of them,
nearly always in the task that did not start its clients last. The lab's event follows the
group's last change, the stragglers' answer, so every other member's schedule then stands a
second earlier against the event: their heartbeat round falls just before it (a joiner given
nothing counts both tasks' heartbeats) and they learn of the event a second later (an eager
leave waits a look more).

The statistics samples the lab counts requests from are tied to the same formation: a client's
statistics timer runs from its creation, every second, and so do the looks that time its
requests (Tansu re-applies a waiting request each second from its arrival, and Apache Kafka's
join completes on a timer a member's request started), so a member's assignment came a few
milliseconds after one of its own samples: 6-69 ms after it for every one of the 160 Tansu
task formations of plans 7 and 8, and for Apache Kafka's 160 within 0.07 s before to 0.2 s
after it in 149 (the rest anywhere). A heartbeat due on that grid is then sent just after a
sample and counted only by the next one, a second later: where a joiner that gets nothing
leaves the group stable at once, the members' next heartbeats fall just outside the counting
window (:mod:`zkconsumer.sim.sampling`). :meth:`Spread.tick_lead` draws that lead.

And the lab applies its event a fixed time after the group's last change: the coordinating
task polls every 0.25 s and acts once nothing changed for ``quiet_s`` (3 s), so the event came
3.0-3.3 s after the last assignment in those runs, which with a 2 s heartbeat interval puts the
group's next heartbeat 0.7-1.0 s after the event in nearly every run: the "members learn of a
join within about a second" the models with random phases could not reproduce. A model run
compared with such a run places the event the same way (``SimConfig.event_after_change_s``,
:func:`lab_event_after_change_s` for the lab's); otherwise the event is unrelated to the
formation (its phase uniform over one interval).

:func:`formed_schedule` is pure: the draws come from the caller's random stream. With one host
per member (the at-scale placement) every member is a process of its own and draws its own
lead: an assumption, since the runs it was read from had two processes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from zkconsumer.sim.config import SimConfig


def lab_event_after_change_s(quiet_s: float, poll_s: float = 0.25,
                             read_s: float = 0.1) -> tuple[float, float]:
    """When the lab's coordinating task applies its event after the group's last change: at
    its first look (every ``poll_s``) after ``quiet_s`` without change, plus up to ``read_s``
    reading the task statuses (2.97-3.40 s in the records above, with quiet_s = 3)."""
    return quiet_s, quiet_s + poll_s + read_s


# Which of the lab's client processes started its clients last: the Spark herd's task 0 (the
# process of member 0, which also hosts a join's joiner). Its clients' last statistics tick
# came after the other task's in 30 of 35 Tansu runs (results/scale/tansu-formation, the
# `task_tick` rows of `spark formation-spread`): 23 of 25 at N = 12, by 3-65 ms in most, and 7
# of 10 at N = 48, by 66-149 ms in most. The model makes it always so; the index is into the
# placement's processes.
LAB_LAST_STARTED = 0


@dataclass(frozen=True)
class Spread:
    """How much earlier than the last one the other processes' SyncGroups were answered
    (within ``near_s``); with probability ``straggler_share``, 1 to ``stragglers_max`` members
    (each one after the first with probability ``another_straggler_share``) of a process other
    than the last started were answered ``look_s`` after the group's first answer instead (the
    stragglers, the group's last change), drawn alike or, with ``straggler_rank_weights``, each
    with the weight of its creation rank in its process (0: the first client the process
    created; a rank past the weights' end is never drawn); within a process, how far apart
    its members' schedules run (``client_start_s`` per member, in the order the process
    created them: librdkafka looks at its heartbeat timer on its client's own one-second
    tick, which runs from the client's creation); and how long before its members' answers a
    process's statistics tick came (``tick_lead_lo_s`` to ``tick_lead_hi_s``, negative:
    after; a phase unrelated to the answer with probability ``tick_random_share``).

    With ``member_leads``, the clients' statistics ticks run in the creation order instead
    (``client_start_s`` apart, the process's last one ``tick_lead_hi_s`` before its instant)
    and each member's answer came its own lead after its own tick: the members' schedules
    then keep no creation order (Tansu's groups, :data:`TANSU`)."""

    near_s: float = 0.0
    straggler_share: float = 0.0
    another_straggler_share: float = 0.0
    stragglers_max: int = 1
    look_s: float = 1.0
    client_start_s: float = 0.0
    tick_lead_lo_s: float = 0.0
    tick_lead_hi_s: float = 0.0
    tick_random_share: float = 1.0
    member_leads: bool = False
    straggler_rank_weights: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        for name in ("straggler_share", "another_straggler_share", "tick_random_share"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"Spread.{name} must be within [0, 1], got "
                                 f"{getattr(self, name)}")
        weights = self.straggler_rank_weights
        if weights and (min(weights) < 0 or not sum(weights)):
            raise ValueError(f"Spread.straggler_rank_weights must be >= 0 with a positive "
                             f"sum, got {weights}")
        if (min(self.near_s, self.client_start_s) < 0 or self.stragglers_max < 1
                or self.look_s <= 0 or self.tick_lead_hi_s < self.tick_lead_lo_s):
            raise ValueError(f"Spread needs 0 <= near_s, 0 <= client_start_s, "
                             f"stragglers_max >= 1, look_s > 0 and "
                             f"tick_lead_lo_s <= tick_lead_hi_s, got {self}")

    def tick_lead(self, rng: random.Random) -> float | None:
        """How long before its members' answers one process's statistics tick came; None: a
        phase unrelated to them (the caller draws it)."""
        if rng.random() < self.tick_random_share:
            return None
        return rng.uniform(self.tick_lead_lo_s, self.tick_lead_hi_s)

    def draw(self, rng: random.Random) -> float:
        """How much earlier than the last process one other process was answered."""
        return rng.uniform(0.0, self.near_s)

    def stragglers(self, rng: random.Random, processes: list[int],
                   last_started: int | None, first: int) -> list[int]:
        """The indices of the members answered a look late (none, usually): drawn among the
        members of the processes other than ``last_started`` where there are any, never the
        member answered ``first`` (the group's leader, whose answer the others wait for),
        weighted by creation rank where the spread gives weights."""
        if not self.straggler_share or rng.random() >= self.straggler_share:
            return []
        count = 1
        while count < self.stragglers_max and rng.random() < self.another_straggler_share:
            count += 1
        others = [i for i in range(len(processes)) if i != first]
        pool = [i for i in others if processes[i] != last_started] or others
        if not self.straggler_rank_weights:
            return rng.sample(pool, min(len(pool), count))
        ranks = creation_ranks(processes)
        weights = self.straggler_rank_weights
        return weighted_sample(rng, {i: weights[ranks[i]] for i in pool
                                     if ranks[i] < len(weights) and weights[ranks[i]] > 0},
                               count)


def creation_ranks(processes: list[int]) -> list[int]:
    """Each member's rank among its process's members in creation order (member order)."""
    seen: dict[int, int] = {}
    ranks = []
    for p in processes:
        ranks.append(seen.get(p, 0))
        seen[p] = ranks[-1] + 1
    return ranks


def weighted_sample(rng: random.Random, weights: dict[int, float], count: int) -> list[int]:
    """Up to ``count`` distinct keys, each draw in proportion to the weights of the keys left
    (in key order, so a seeded stream draws the same members)."""
    left = dict(sorted(weights.items()))
    out: list[int] = []
    while left and len(out) < count:
        point = rng.random() * sum(left.values())
        keys = list(left)
        chosen = keys[-1]  # where rounding leaves the point at the total
        for key in keys:
            point -= left[key]
            if point < 0:
                chosen = key
                break
        out.append(chosen)
        del left[chosen]
    return out


# Unrelated phases: every SyncGroup answered at once, statistics ticks anywhere.
AT_ONCE = Spread()
# Apache Kafka's coordinator completes every SyncGroup of a round with the leader's; the
# statistics ticks from the records above (149 of 160 task formations within -0.07..0.2 s).
KAFKA = Spread(tick_lead_lo_s=-0.07, tick_lead_hi_s=0.2, tick_random_share=11 / 160)
# Tansu, from the records above: 12 of plans 7 and 8's 44 formations and 39 of the 115 of
# results/scale/tansu-formation and validation plan 21 (`zkconsumer spark formation-spread`,
# its `straggler` rows) had stragglers, one of Tansu's one-second looks after the first answer;
# of those 39, 26 had one, 10 two, 2 three and 1 four. Its coordinator answers each member on
# its own, so its members' clients tick in their start order (validation plan 5's records: a
# Spark task's 24 members sampled their statistics, one tick per client, over 0.1 s), and each
# answer came 6-69 ms after its member's own statistics tick (160 of 160 task formations), the
# lead its own: in the Tansu runs of results/scale/tansu-formation (`tick_lead` rows) a
# process's members were answered in no creation order, each a lead of its own after its own
# tick (N = 12: 4-33 ms for two thirds, 54-70 ms for the rest; N = 48: 5 % to 95 % 11-105 ms),
# and in the cooperative joins which members' schedules came after the revoking owner's
# decided who had to rejoin.
TANSU = Spread(near_s=0.1, straggler_share=(12 + 39) / (44 + 115),
               another_straggler_share=13 / 39, stragglers_max=4, look_s=1.0,
               client_start_s=0.1 / 24, tick_lead_lo_s=0.006, tick_lead_hi_s=0.069,
               tick_random_share=0.0, member_leads=True)

# KIP-848 (Apache Kafka 4.0.2, librdkafka; zkconsumer.sim.kip848): a member's heartbeat
# interval restarts at every heartbeat it sends, so a formed group's schedules stand within a
# moment of its last change, and a member's statistics tick (its client's one-second timer,
# from the client's creation) comes shortly before its schedule: the client's first heartbeat
# follows its creation by the coordinator lookup. Read off the fitting runs' records
# (results/scale/kip848-fit/formation-spread.csv, `zkconsumer spark formation-spread`): the
# schedules' span is the 5 % to 95 % of the members of the 5000 ms runs, the ticks' lead that of
# every fitting run's members.
KIP848_SCHEDULES_S = (-0.14, 0.01)
# ... but a member the formation gave nothing (more members than partitions: the last clients
# created) never acknowledged anything, so its schedule is its first heartbeat's, which came
# after the group's last change (the 5000 ms runs at N = 48: the idle members that took a
# leaver's partition, 7 of 7 within this span; at 1000 ms one of 5 came later).
KIP848_IDLE_SCHEDULES_S = (0.02, 0.11)
KIP848 = Spread(tick_lead_lo_s=0.01, tick_lead_hi_s=0.22, tick_random_share=0.0)


def last_answer(interval_s: float, rng: random.Random, event_lag_s: float | None) -> float:
    """When the formation's last assignment was taken (its heartbeat schedule restarted), with
    the event at time 0: ``event_lag_s`` before it, or a random instant of one interval when
    the event is unrelated to the formation (``event_lag_s`` None)."""
    if event_lag_s is None:
        return rng.uniform(0.0, interval_s)
    return -event_lag_s


@dataclass(frozen=True)
class Formed:
    """Each member's formation answer (its heartbeat phase) and, where the spread draws them
    member by member (``Spread.member_leads``), its client's statistics tick; else None."""

    answers: list[float]
    ticks: list[float] | None = None
    stragglers: int = 0  # how many members the formation left as stragglers


def formed_schedule(processes: list[int], interval_s: float, rng: random.Random,
                    event_lag_s: float | None, spread: Spread,
                    last_started: int | None = None) -> Formed:
    """The heartbeat phase of each member (``processes[i]``: the process hosting member i),
    with the event at time 0.

    The last process's members were answered ``event_lag_s`` before the event (a random
    instant when ``event_lag_s`` is None), each other process ``spread.draw()`` earlier; the
    last process is ``last_started`` where the harness starts one process's clients last
    (:data:`LAB_LAST_STARTED`), else drawn. The members of one process were answered in the
    order it created them, ``spread.client_start_s`` apart, its last member at the process's
    instant. With ``spread.member_leads`` it is their statistics ticks that run in that order,
    and each answer follows its own tick by its own lead (:meth:`Spread.tick_lead`).

    Where the formation left stragglers (:meth:`Spread.stragglers`), they are the group's
    last change: answered at the lag's instant, ``spread.look_s`` after the group's first
    answer, everybody else (ticks and answers) moved back to stand that far before them.
    """
    if interval_s <= 0:
        raise ValueError(f"the heartbeat interval must be > 0, got {interval_s}")
    last = last_answer(interval_s, rng, event_lag_s)
    ordered = sorted(set(processes))
    drawn = rng.choice(ordered) if ordered else None  # drawn either way: later draws stay put
    latest = last_started if last_started in ordered else drawn
    answered = {p: last - (0.0 if p == latest else spread.draw(rng)) for p in ordered}
    left = {p: processes.count(p) for p in ordered}  # members of p not placed yet
    phases, ticks = [], []
    for p in processes:
        left[p] -= 1
        start = answered[p] - left[p] * spread.client_start_s
        if spread.member_leads:
            tick = start - spread.tick_lead_hi_s
            lead = spread.tick_lead(rng)
            ticks.append(tick)
            phases.append(tick + (spread.tick_lead_hi_s if lead is None else lead))
        else:
            phases.append(start)
    first = min(range(len(phases)), key=phases.__getitem__, default=0)
    late = spread.stragglers(rng, processes, latest, first)
    if late:
        shift = last - spread.look_s - phases[first]
        phases = [last if i in late else a + shift for i, a in enumerate(phases)]
        ticks = [t + shift for t in ticks]
    return Formed(phases, ticks if spread.member_leads else None, len(late))


def processes_of(cfg: SimConfig, count: int) -> list[int]:
    """The process hosting each of the first ``count`` members: the placement's, else member
    i in process ``i % client_processes``, else (one host per member) its own."""
    if cfg.placement is not None:
        return [cfg.placement.process_of(i) for i in range(count)]
    k = cfg.client_processes
    return [i % k if k > 0 else i for i in range(count)]
