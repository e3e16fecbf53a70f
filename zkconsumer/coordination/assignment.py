"""A member's view of the assignment znode: read it, keep one data watch on it.

Every member watches this znode and nothing else of the group, so a publication costs each
member one notification and one read (the read re-arms the watch). The callback runs on kazoo's
thread and only hands a reason over. A corrupt record is reported and read as "no decision" with
its version, so the leader can overwrite it and members wait for that.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from kazoo.exceptions import NoNodeError
from kazoo.protocol.states import WatchedEvent

from zkconsumer.coordination.record import AssignmentRecord, decode_assignment
from zkconsumer.errors import CorruptZnode
from zkconsumer.events import EventBus
from zkconsumer.zk import paths
from zkconsumer.zk.multi import MultiSession

log = logging.getLogger(__name__)


class AssignmentWatch:
    """``read()`` -> (record or None, znode version or None: absent).

    While the watch is set, the last record read is current (a change would have fired it),
    so a pass woken for another reason (a released owner znode, the leader's membership watch)
    uses it without a request; ``force`` reads anyway.
    """

    def __init__(self, session: MultiSession, group: str, events: EventBus,
                 on_change: Callable[[str], None]) -> None:
        self._session = session
        self.path = paths.assignment(group)
        self._events = events
        self._on_change = on_change
        self._watched = False
        self._last: tuple[AssignmentRecord | None, int | None] | None = None

    def forget(self) -> None:
        """A new session carries no watch."""
        self._watched = False
        self._last = None

    def _on_event(self, event: WatchedEvent) -> None:
        self._watched = False
        self._events.emit("watch_fired", path=event.path, watch="data", event=str(event.type))
        self._on_change(event.path or self.path)

    def read(self, force: bool = False) -> tuple[AssignmentRecord | None, int | None]:
        """The record: the last one read while the watch is still set (unless ``force``),
        else read it, setting the watch again if the last one fired.

        The watch counts as set *before* the request: the next publication can fire the new
        watch (on kazoo's thread) before this read returns, and its ``_watched = False`` must
        then stand. Marking it set after the read overwrote that, so the member read the next
        record without a watch and never heard of a later generation (a partition given to
        it then stayed without an owner).
        """
        if self._watched and self._last is not None and not force:
            return self._last
        self._last = self._fetch()
        return self._last

    def _fetch(self) -> tuple[AssignmentRecord | None, int | None]:
        watch = None if self._watched else self._on_event
        self._watched = True
        try:
            try:
                data, stat = self._session.get(self.path, watch=watch)
            except NoNodeError:
                if self._session.exists(self.path, watch=self._on_event) is not None:
                    self._watched = False  # published meanwhile: read (and watch) it
                    return self._fetch()
                return None, None
        except BaseException:
            self._watched = False  # the watch may not be set: set it on the next read
            raise
        try:
            return decode_assignment(self.path, data), stat.version
        except CorruptZnode as exc:
            log.error("[%s] %s", self._events.consumer_id, exc)
            self._events.emit("error", where="assignment", error=str(exc))
            return None, stat.version
