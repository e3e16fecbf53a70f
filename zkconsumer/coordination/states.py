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


#: The reasons after which the election may have a new outcome: the candidate before ours went
#: away, our session (and with it our candidacy) is new or back, the watches were reset, or this
#: is the first pass. Any other reason (a publication, a membership or topic change seen by the
#: leader, a released owner znode) leaves the outcome as it was: leadership moves only when a
#: candidate znode is deleted, and the only deletion that concerns us is watched.
ELECTION_WAKES = frozenset({Wake.STARTUP, Wake.PREDECESSOR, Wake.NEW_SESSION, Wake.RECONNECTED,
                            Wake.REARM})

#: The reasons after which a pass reads the assignment znode even though its watch is set: the
#: first pass, a new or returning session, watches reset (the election's reasons but the
#: predecessor's deletion, which changes no record).
RECORD_READ_WAKES = ELECTION_WAKES - {Wake.PREDECESSOR}


def election_check_needed(reasons: set[Wake], known: bool) -> bool:
    """Whether a pass must list the candidates again (``known``: an earlier pass of this
    session already did). Listing them at every pass cost each member one getChildren of all
    N candidates per publication, O(N²) bytes per generation for a mode meant to be O(N)."""
    return not known or bool(reasons & ELECTION_WAKES)
