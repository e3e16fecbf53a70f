"""Where a legacy member's fetcher stop ends, on the lab producer's schedule.

The lab's producer sends record ``n`` at ``n / rate`` seconds to partition ``n mod P``, so each
partition gets one message a cycle (``P / rate``), in slot order, and each message reaches its
member's fetcher at the fetcher's next fetch round (rounds ``delivery_round_ms`` apart, at a
phase of the member's own: ``calibrate --delivery-onto``). The fetcher thread waits for a
message at most one consume poll (``POLL_S``) and starts a new poll at each message, so its
poll boundaries fall a whole number of polls after its last delivery. A stop asked at ``t``
ends at the first of: that fetcher's next poll boundary, its next delivery (then the client
closes). Real stops end so (``docs/validation-plan-13.md``, where the real stops end).

The leader mode runs one fetcher per partition (``coordination/fetchers.py``), stopped side by
side, each noticing the stop as above on its own partition's deliveries; a member's stop ends
when the last of them has (:func:`partitions_stop_end`).

A clean leave starts earlier: the leaving member's consume loop sees the stop request only
when its stream returns, at its next delivery or at the end of a ``consumer.timeout.ms`` wait
counted from its last delivery; a stream that woke on a message has just seen the fetcher start
a new poll. Its shutdown then stops the fetcher as above.

Pure functions of the schedule; :class:`MemberSchedule` holds one member's part of it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

LOOKBACK_CYCLES = 2  # deliveries are searched this many producer cycles around the instant


@dataclass(frozen=True)
class Schedule:
    """The producer of one run: ``rate`` messages a second over ``partitions``, record 0 sent
    at ``phase_s`` (the run's clock), each delivered at its fetcher's next round."""

    rate: float
    partitions: int
    phase_s: float
    round_s: float

    def __post_init__(self) -> None:
        if self.rate <= 0 or self.partitions < 1 or self.round_s < 0:
            raise ValueError(f"a producer schedule needs a rate > 0, partitions >= 1 and a "
                             f"round >= 0, got {self.rate}, {self.partitions}, {self.round_s}")

    @property
    def cycle_s(self) -> float:
        return self.partitions / self.rate


@dataclass(frozen=True)
class MemberSchedule:
    """One member's deliveries: its partitions' messages on ``schedule``, each at the first of
    the member's fetch rounds (at ``round_phase_s`` plus whole rounds) not before its send."""

    schedule: Schedule
    owned: tuple[int, ...]
    round_phase_s: float

    def deliveries(self, around_s: float) -> list[float]:
        """The deliveries within :data:`LOOKBACK_CYCLES` producer cycles of ``around_s``,
        sorted."""
        s = self.schedule
        cycle, span = s.cycle_s, LOOKBACK_CYCLES * s.cycle_s
        out = []
        for p in self.owned:
            first = s.phase_s + p / s.rate
            j = math.floor((around_s - span - first) / cycle)
            while first + j * cycle <= around_s + span:
                out.append(self._received(first + j * cycle))
                j += 1
        return sorted(out)

    def _received(self, sent: float) -> float:
        r = self.schedule.round_s
        if r <= 0:
            return sent
        return self.round_phase_s + r * math.ceil((sent - self.round_phase_s) / r)

    def last_and_next(self, t: float) -> tuple[float, float]:
        """The member's last delivery at or before ``t`` and its first after ``t``."""
        ds = self.deliveries(t)
        return max(d for d in ds if d <= t), min(d for d in ds if d > t)


def next_after(anchor: float, t: float, step: float) -> float:
    """The first of ``anchor + k * step`` (k >= 1) strictly after ``t`` (``t >= anchor``)."""
    return anchor + step * (math.floor((t - anchor) / step) + 1)


def stop_end(member: MemberSchedule, asked_s: float, poll_s: float) -> float:
    """When a fetcher stop asked at ``asked_s`` is noticed by the fetcher thread: its next poll
    boundary (polls restart at each delivery) or its next delivery, whichever is first."""
    last, nxt = member.last_and_next(asked_s)
    return min(next_after(last, asked_s, poll_s), nxt)


def leave_stop_end(member: MemberSchedule, asked_s: float, poll_s: float,
                   consumer_timeout_s: float) -> float:
    """When a clean leave asked at ``asked_s`` has its fetcher stopped: the stream wakes at its
    next delivery or at the end of a ``consumer_timeout_s`` wait from its last one; then the
    fetcher notices the stop at its next poll boundary after the wake (a new poll if the wake
    was a delivery) or its next delivery."""
    last, nxt = member.last_and_next(asked_s)
    timeout = next_after(last, asked_s, consumer_timeout_s)
    if nxt <= timeout:  # woke on a message: the fetcher's poll restarted with it
        after = member.last_and_next(nxt)[1]
        return min(nxt + poll_s, after)
    after = member.last_and_next(timeout)[1]
    return min(next_after(last, timeout, poll_s), after)



def partitions_stop_end(schedule: Schedule, owned: tuple[int, ...], round_phase_s: float,
                        asked_s: float, poll_s: float) -> float:
    """A stop asked at ``asked_s`` of one fetcher per partition, side by side: each notices it
    at its own next poll boundary or delivery (:func:`stop_end`), and the stop ends with the
    last of them."""
    return max(stop_end(MemberSchedule(schedule, (p,), round_phase_s), asked_s, poll_s)
               for p in owned)


def partitions_leave_stop_end(schedule: Schedule, owned: tuple[int, ...], round_phase_s: float,
                              asked_s: float, poll_s: float, consumer_timeout_s: float) -> float:
    """A clean leave with one fetcher per partition: the member's stream wakes at its next
    delivery of any partition or at the end of a ``consumer_timeout_s`` wait from its last one
    (:func:`leave_stop_end`), then every partition's fetcher notices the stop as in
    :func:`partitions_stop_end` (the one that just delivered started a new poll with it)."""
    member = MemberSchedule(schedule, owned, round_phase_s)
    last, nxt = member.last_and_next(asked_s)
    wake = min(nxt, next_after(last, asked_s, consumer_timeout_s))
    return partitions_stop_end(schedule, owned, round_phase_s, wake, poll_s)


def scheduled_stop_s(schedule: Schedule, owned: tuple[int, ...], round_phase_s: float,
                     asked_s: float, poll_s: float, consumer_timeout_s: float, *, leaving: bool,
                     per_partition: bool) -> float:
    """How long a stop asked at ``asked_s`` takes on the schedule: a clean leave's includes its
    wake; ``per_partition``: one fetcher per partition (the leader mode), else one for all of
    the member's partitions (the legacy mode)."""
    if per_partition:
        end = (partitions_leave_stop_end(schedule, owned, round_phase_s, asked_s, poll_s,
                                         consumer_timeout_s) if leaving else
               partitions_stop_end(schedule, owned, round_phase_s, asked_s, poll_s))
    else:
        member = MemberSchedule(schedule, owned, round_phase_s)
        end = (leave_stop_end(member, asked_s, poll_s, consumer_timeout_s) if leaving else
               stop_end(member, asked_s, poll_s))
    return end - asked_s
