"""When a SIGKILLed member is noticed: the last packet its server heard, and the server's clock.

A killed client sends nothing more, so its server times the session out from the *last* packet
it received, not from the kill. How long before the kill that was depends on the client's idle
traffic, and when the expiry fires depends on how the server schedules it.

ZooKeeper with kazoo (the legacy protocols):

* kazoo (``protocol/connection.py``, ``_connect_attempt``) negotiates ``read_timeout`` = 2/3 of
  the session timeout and pings when its connection has sent nothing for ``read_timeout / 2``
  minus a jitter of ``randint(1, 40) / 100`` s, i.e. every timeout/3 - [10, 400] ms when idle
  (any request resets that clock, so a busy client pings less, never more). A member killed at
  a random instant of that cycle was last heard ``U(0, ping interval)`` before the kill.
* The server (``SessionTrackerImpl`` over ``ExpiryQueue``) moves a session's deadline to
  ``roundToNextInterval(last packet + timeout)`` on every packet: the next multiple of its
  ``tickTime`` strictly after it; the tracker thread expires the bucket when that instant
  comes. The tick grid has no relation to the kill, so its phase is uniform.

So a killed member is noticed between about ``timeout - timeout/3`` and ``timeout + tick`` after
the kill (4.0-6.5 s at 6 s with the embedded server's 500 ms tick), not a whole timeout later.
What remains (closing the session: one transaction, deleting its ephemerals) is the calibrated
``session_expiry_factor``: ``calibrate`` kills a session right after a request (no ping phase)
and subtracts the mean tick rounding (:func:`expiry_residual_factor`), so nothing is counted
twice.

The lab's members also auto-commit changed offsets every second, which are packets too; the
model leaves them out (an idle group, ``offsets_changed`` 0, sends only pings). In the real
crash runs the victim's last packet was 0.2-1.3 s before the kill, inside the ping model's
range.

Broker-side groups: see :meth:`zkconsumer.sim.broker.BrokerGroup.crash` (Tansu 0.6.0 noticed a
kill a whole session timeout after it, not after the last heartbeat).
"""

from __future__ import annotations

import logging
import math
import random
from dataclasses import dataclass

log = logging.getLogger(__name__)

# kazoo: ``jitter_time = random.randint(1, 40) / 100.0`` (seconds) per select() wake-up.
KAZOO_PING_JITTER_CENTIS = (1, 40)


def kazoo_ping_interval_s(session_timeout_s: float, jitter_s: float) -> float:
    """Idle time after which kazoo pings: ``read_timeout / 2 - jitter``, read_timeout = 2/3 T."""
    return max(0.0, session_timeout_s * (2.0 / 3.0) / 2.0 - jitter_s)


def round_to_next_tick(t_s: float, tick_s: float, phase_s: float = 0.0) -> float:
    """``ExpiryQueue.roundToNextInterval``: the first tick boundary strictly after ``t_s``.

    Boundaries lie at ``phase_s + k * tick_s``; ``tick_s <= 0`` means no rounding.
    """
    if tick_s <= 0:
        return t_s
    k = math.floor((t_s - phase_s) / tick_s) + 1
    return phase_s + k * tick_s


def zk_expiry_after_kill_s(session_timeout_s: float, silent_s: float, tick_s: float,
                           tick_phase_s: float, residual_factor: float) -> float:
    """Seconds from a kill at 0 until the server drops the session.

    ``silent_s``: how long before the kill the server last heard from the client;
    ``tick_phase_s``: where the server's tick grid lies relative to the kill;
    ``residual_factor``: the calibrated rest (closing the session), as a factor of the timeout.
    """
    deadline = round_to_next_tick(session_timeout_s - silent_s, tick_s, tick_phase_s)
    return max(0.0, deadline + (residual_factor - 1.0) * session_timeout_s)


def expiry_residual_factor(measured_s: float, session_timeout_s: float, tick_s: float) -> float:
    """The calibration's factor from one expiry measured right after a request.

    The measured time includes the tick rounding, on average half a tick; the model adds the
    rounding itself (:func:`zk_expiry_after_kill_s`), so the factor keeps only the rest.
    """
    return (measured_s - tick_s / 2.0) / session_timeout_s


@dataclass(frozen=True)
class KillPhase:
    """Where a kill falls: in the client's ping cycle and in the server's tick grid."""

    ping_interval_s: float
    silent_s: float  # since the last packet the server received
    tick_phase_s: float


def draw_kill_phase(rng: random.Random, session_timeout_s: float, tick_s: float) -> KillPhase:
    """Draw the phases of one kill from the run's RNG (so a seed gives the same expiry)."""
    lo, hi = KAZOO_PING_JITTER_CENTIS
    interval = kazoo_ping_interval_s(session_timeout_s, rng.randint(lo, hi) / 100.0)
    return KillPhase(ping_interval_s=interval, silent_s=rng.uniform(0.0, interval),
                     tick_phase_s=rng.uniform(0.0, max(0.0, tick_s)))


def zk_expiry_for_kill(rng: random.Random, session_timeout_s: float, tick_s: float,
                       residual_factor: float) -> float:
    """A kill's expiry delay, drawn from ``rng`` (see the module docstring)."""
    phase = draw_kill_phase(rng, session_timeout_s, tick_s)
    return zk_expiry_after_kill_s(session_timeout_s, phase.silent_s, tick_s,
                                  phase.tick_phase_s, residual_factor)
