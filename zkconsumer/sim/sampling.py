"""The lab's sampled request counts, member by member: which requests a real run counts.

A Spark herd run does not count requests on the wire: every broker-side member publishes its
client's cumulative request counters each statistics interval (librdkafka's
``statistics.interval.ms``, 1 s in the lab), and the run counts, per member, from its last
sample at or before the event to its last sample at or before the stable instant plus
``SAMPLE_AFTER_S`` (``zkconsumer.spark.herd.metrics.request_deltas``). A request is counted
only if one of its member's samples falls between it and that end.

The samples of one Spark task's members come in step: the task creates its consumers within a
tenth of a second, and librdkafka's statistics timer runs from the client's creation (in
validation plan 5's records, the 24 members of one task sampled 0.49-0.59 s after the event,
the other task's 0.81-0.87 s). So a burst of requests sent in step (a formed group's
heartbeats, :mod:`zkconsumer.sim.formation`) shortly before the window's end is counted for all
of a task's members or for none: where a joiner that gets nothing leaves the group observably
stable at once, the window ends 0.3-1.3 s after the event and the group's next heartbeat round
falls inside it for some tasks only. Averaged margins (``sampled_count_margins``) count a
fraction of every member instead, which is right on average for requests spread in time and
wrong for bursts.

Where the group's formation is modelled (:mod:`zkconsumer.sim.formation`), the samples are not
at random phases: a member's statistics tick came shortly before its formation answer, so its
heartbeats, due on the answer's grid, go just after a sample and are counted by the next one
(:func:`draw_windows` with the formation's answers). Otherwise each process's phase is
uniform.

A joiner's client is created at the event: its first sample comes one interval later, and a
window that ends before that counts nothing of it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

NEVER = -math.inf

# A member's counting window, (from, to], by member id (SampledWindows.window at one stable
# instant): what the models' counts take
Window = Callable[[str], tuple[float, float]]


def within(window: tuple[float, float], at: float) -> bool:
    """Whether a request sent at ``at`` is counted in the (from, to] ``window``."""
    return window[0] < at <= window[1]


@dataclass(frozen=True)
class SampledWindows:
    """Each member's statistics phase (its samples at ``phase + k * interval_s``) and the
    instant after the stable one up to which samples count (``after_s``)."""

    interval_s: float
    after_s: float
    phases: dict[str, float]

    def __post_init__(self) -> None:
        if self.interval_s <= 0 or self.after_s < 0:
            raise ValueError(f"SampledWindows needs interval_s > 0 and after_s >= 0, got "
                             f"{self.interval_s} and {self.after_s}")

    def last_sample(self, mid: str, t: float) -> float:
        """The member's last sample at or before ``t``; ``NEVER`` if it has none yet.

        A member missing from ``phases`` was created at the event (a joiner): its samples
        come one interval after 0, then every interval.
        """
        phase = self.phases.get(mid)
        if phase is None:
            if t < self.interval_s:
                return NEVER
            return math.floor(t / self.interval_s) * self.interval_s
        return phase + math.floor((t - phase) / self.interval_s + 1e-12) * self.interval_s

    def window(self, mid: str, stable_at: float) -> tuple[float, float]:
        """(from, to]: the member's requests counted when the run settled at ``stable_at``.

        Empty (to <= from) when no sample falls after the event and before the end.
        """
        start = self.last_sample(mid, 0.0)
        end = self.last_sample(mid, stable_at + self.after_s)
        return start, end

    def counts(self, mid: str, at: float, stable_at: float) -> bool:
        return within(self.window(mid, stable_at), at)


def draw_windows(members: Sequence[str], processes: Sequence[int], interval_s: float,
                 after_s: float, seed: int, answers: Mapping[str, float] | None = None,
                 tick_lead: Callable[[random.Random], float | None] | None = None,
                 ticks: Mapping[str, float] | None = None) -> SampledWindows:
    """Phases for the group that is there before the event, drawn from a stream of their own
    so the model's other draws do not move (``processes[i]`` hosts ``members[i]``).

    Untied (no ``tick_lead``): one uniform phase per process, shared by its members. Tied to
    the formation: each process draws one lead (``tick_lead``, e.g.
    :meth:`zkconsumer.sim.formation.Spread.tick_lead`) and each of its members samples that
    long before its own answer (``answers``); a process whose lead is None keeps its uniform
    phase. A member in ``ticks`` (drawn with the formation, member by member) samples at its
    own tick; the draws for the others stay where they were.
    """
    rng = random.Random(seed * 7919 + 43)
    leads: dict[int, float | None] = {}
    free: dict[int, float] = {}
    phases = {}
    for mid, p in zip(members, processes, strict=True):
        if p not in free:
            leads[p] = tick_lead(rng) if tick_lead is not None else None
            free[p] = rng.uniform(0.0, interval_s)
        lead = leads[p]
        if ticks is not None and mid in ticks:
            phases[mid] = ticks[mid]
        else:
            phases[mid] = free[p] if lead is None or answers is None else answers[mid] - lead
    return SampledWindows(interval_s, after_s, phases)
