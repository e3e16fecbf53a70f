"""Re-arming ZooKeeper watches that turn changes into rebalance triggers.

The original subscribed ZkClient listeners, whose watches are "permanent": ZkClient re-reads the
path with a new watch on every event and on reconnect, and fires every listener once after a new
session (spec detailed §1.6). Here:

* a watch callback (kazoo's thread) only marks the watch as spent and hands a :class:`Trigger`
  to the rebalancer; it never talks to ZooKeeper (kazoo forbids blocking its callback thread);
* the rebalancer thread calls :meth:`WatchSet.arm`, which re-reads every spent watch *with* a
  new watch and compares the result with the last value seen. kazoo drops its watchers on a
  disconnection (firing them with event type ``NONE``); a change that happened meanwhile is then
  noticed by that comparison, as ZooKeeper's ``SetWatches`` would have delivered it to ZkClient.
"""

from __future__ import annotations

import enum
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kazoo.exceptions import NoNodeError
from kazoo.protocol.states import EventType, WatchedEvent

from zkconsumer.events import EventBus
from zkconsumer.zk.session import ZkSession

log = logging.getLogger(__name__)


class Trigger(str, enum.Enum):
    """Why the rebalancer woke up."""

    STARTUP = "startup"            # create_message_streams*: the first, synchronous rebalance
    MEMBERSHIP = "membership"      # child change of /consumers/<group>/ids
    TOPIC_DATA = "topic_data"      # data change of /brokers/topics/<topic> (partitions added)
    TOPICS = "topics"              # child change of /brokers/topics (wildcard subscriptions)
    BROKERS = "brokers"            # child change of /brokers/ids (only after "no brokers")
    NEW_SESSION = "new_session"    # a new ZooKeeper session replaced an expired one
    SESSION_LOST = "session_lost"  # the session expired (acted on only by a non-legacy policy)
    REARM = "rearm"                # kazoo reset its watchers: re-read and compare


CHILDREN = "children"
DATA = "data"
_UNSEEN = object()


@dataclass
class _Watch:
    path: str
    kind: str
    trigger: Trigger
    armed: bool = False
    last: Any = _UNSEEN
    callback: Callable[[WatchedEvent], None] | None = field(default=None, repr=False)


class WatchSet:
    """The connector's watches; :meth:`arm` runs on the rebalancer thread only."""

    def __init__(self, session: ZkSession, notify: Callable[[Trigger, str], None],
                 events: EventBus) -> None:
        self._session = session
        self._notify = notify
        self._events = events
        self._lock = threading.Lock()
        self._watches: dict[str, _Watch] = {}
        self._closed = False

    def watch(self, path: str, kind: str, trigger: Trigger) -> None:
        """Ask for a permanent watch; it is set by the next :meth:`arm`. Idempotent."""
        with self._lock:
            if path in self._watches:
                return
            w = _Watch(path, kind, trigger)
            w.callback = self._make_callback(w)
            self._watches[path] = w

    def callback(self, path: str) -> Callable[[WatchedEvent], None] | None:
        """The watch callback of ``path`` (None when not watched), for a read that should leave
        the watch as ZkClient's reads of a path with listeners did."""
        w = self._watches.get(path)
        return None if w is None else w.callback

    def watching(self, path: str) -> bool:
        return path in self._watches

    def last_value(self, path: str) -> Any:
        """The children (sorted tuple) or data version last read for ``path``; None if absent."""
        w = self._watches.get(path)
        return None if w is None or w.last is _UNSEEN else w.last

    def invalidate(self) -> None:
        """A new session has no watches: every watch must be set again."""
        with self._lock:
            for w in self._watches.values():
                w.armed = False

    def close(self) -> None:
        self._closed = True

    def arm(self) -> set[Trigger]:
        """Set every spent watch again; return the triggers whose path changed since last seen."""
        changed: set[Trigger] = set()
        with self._lock:
            pending = [w for w in self._watches.values() if not w.armed]
        for w in pending:
            if self._closed:
                break
            w.armed = True  # before the read: a callback firing after it marks it spent again
            try:
                value = self._read(w)
            except BaseException:
                w.armed = False
                raise
            # Deviation: the original only warned about a deleted topic and kept fetching it
            # until some other trigger; here its deletion is a change like any other, and the
            # rebalance it triggers drops the topic's partitions.
            if w.last is not _UNSEEN and value != w.last:
                log.debug("[%s] %s changed while unwatched: %r -> %r", self._events.consumer_id,
                          w.path, w.last, value)
                changed.add(w.trigger)
            w.last = value
        return changed

    def _read(self, w: _Watch) -> Any:
        """ZkClient's reads, one for one: ``exists`` with a watch first (it also covers a path
        that does not exist yet), then the children of a children watch; a data watch reads
        the data only once it has fired (``subscribeDataChanges`` sets the watch with
        ``exists`` alone, the data-change handler reads the new value)."""
        assert w.callback is not None
        stat = self._session.exists(w.path, watch=w.callback)
        if stat is None:
            return None
        if w.kind == DATA:
            if w.last is not _UNSEEN:
                _, stat = self._session.get(w.path, watch=w.callback)
            return stat.mzxid
        try:
            return tuple(sorted(self._session.get_children(w.path, watch=w.callback)))
        except NoNodeError:
            return None

    def _make_callback(self, w: _Watch) -> Callable[[WatchedEvent], None]:
        def on_event(event: WatchedEvent) -> None:
            """kazoo's callback thread: mark spent, report, hand a trigger over. No ZK calls."""
            w.armed = False
            if self._closed:
                return
            self._events.emit("watch_fired", path=w.path, watch=w.kind, event=str(event.type))
            if event.type == EventType.NONE:
                self._notify(Trigger.REARM, w.path)
            elif w.kind == DATA and event.type == EventType.DELETED:
                log.warning("[%s] Topic for path %s gets deleted; rebalancing to drop it",
                            self._events.consumer_id, w.path)
                self._notify(Trigger.REARM, w.path)  # arm() sees the change and rebalances
            else:
                if w.trigger == Trigger.TOPIC_DATA:
                    log.info("[%s] Topic info for path %s changed, triggering rebalance",
                             self._events.consumer_id, w.path)
                self._notify(w.trigger, w.path)
        return on_event
