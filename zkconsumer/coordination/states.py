"""The leader-mode coordinator's states and the reasons its thread wakes up."""

from __future__ import annotations

import enum

from zkconsumer.membership.triggers import Trigger


class CoordinatorState(enum.Enum):
    JOINING = "joining"
    STABLE = "stable"
    HANDING_OVER = "handing_over"
    WAITING = "waiting"
    PAUSED = "paused"
    STOPPED = "stopped"


class Wake(str, enum.Enum):
    """Why the coordinator thread woke up."""

    STARTUP = "startup"
    ASSIGNMENT = "assignment"          # the assignment znode changed
    PREDECESSOR = "predecessor"        # the election candidate before ours went away
    MEMBERSHIP = "membership"          # leader: children of /consumers/<g>/ids changed
    TOPIC_DATA = "topic_data"          # leader: a subscribed topic's partitions changed
    TOPICS = "topics"                  # leader: /brokers/topics changed (wildcards)
    OWNER_RELEASED = "owner_released"  # an owner znode we wait for was deleted
    NEW_SESSION = "new_session"
    RECONNECTED = "reconnected"        # the same session came back
    REARM = "rearm"                    # watches were reset: read again


_FROM_TRIGGER = {Trigger.MEMBERSHIP: Wake.MEMBERSHIP, Trigger.TOPIC_DATA: Wake.TOPIC_DATA,
                 Trigger.TOPICS: Wake.TOPICS, Trigger.REARM: Wake.REARM}


def wake_for(trigger: Trigger) -> Wake:
    """The wake-up reason of a leader's watch trigger (anything else: read everything again)."""
    return _FROM_TRIGGER.get(trigger, Wake.REARM)
