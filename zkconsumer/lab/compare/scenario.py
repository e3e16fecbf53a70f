"""The membership events, applied to a stable group of N members (``m00`` .. ``m{N-1}``).

Each returns the wall-clock time of the event: the instant the runner acted, which is where
every metric window starts.

- join: ``m{N}`` starts (the group becomes N+1).
- leave: the last member shuts down cleanly (LeaveGroup / registration deleted).
- crash: the last member, which runs in its own process from the start, is SIGKILLed.
- rolling-bounce: every member in turn is shut down and started again at once (a new incarnation
  with the same name and, for static membership, the same ``group.instance.id``); the next one
  goes when the restarted one fetches again, as an operator's rolling restart would.
"""

from __future__ import annotations

import logging
import time

from zkconsumer.lab.group import LabGroup, member_name
from zkconsumer.scenarios.protocols import Event

log = logging.getLogger(__name__)


def victim(event: str, members: int) -> str | None:
    """The member that must run in its own process so its crash is a real SIGKILL."""
    return member_name(members - 1) if event == Event.CRASH.value else None


def apply_event(event: str, group: LabGroup, members: int, deadline_s: float) -> float:
    if event == Event.JOIN.value:
        started = time.time()
        group.spawn(member_name(members))
        return started
    if event == Event.LEAVE.value:
        started = time.time()
        group.stop(member_name(members - 1))
        return started
    if event == Event.CRASH.value:
        return group.kill(member_name(members - 1))
    if event == Event.ROLLING_BOUNCE.value:
        return _rolling_bounce(group, members, deadline_s)
    raise ValueError(f"unknown event {event!r}")


def _rolling_bounce(group: LabGroup, members: int, deadline_s: float) -> float:
    started = time.time()
    give_up = time.monotonic() + deadline_s
    for i in range(members):
        name = member_name(i)
        group.stop(name)
        restarted = time.time()
        group.spawn(name)
        left = max(1.0, give_up - time.monotonic())
        if not group.wait_fetching(name, restarted, left):
            log.warning("%s: %s did not fetch again within the deadline; bouncing on",
                        group.group, name)
    return started
