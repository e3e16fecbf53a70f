"""Leader election: ephemeral sequential candidates, each watching only its predecessor.

Every member creates ``/consumers/<group>/leader/n_<sequence>`` (ephemeral, sequential) holding
its consumer id. The lowest sequence leads. Every other candidate watches only the candidate
just before it (an ``exists`` watch), so a departure wakes exactly one member instead of the
whole group: no herd. When the watch fires, the member looks again; it leads only if nobody is
left before it. Watch callbacks only hand a reason to the coordinator thread.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable

from kazoo.exceptions import NoNodeError, SessionExpiredError
from kazoo.protocol.states import WatchedEvent

from zkconsumer.zk import paths
from zkconsumer.zk.multi import MultiSession

log = logging.getLogger(__name__)

PREFIX = "n_"


def sequence_of(name: str) -> int:
    """The sequence number ZooKeeper appended (``n_0000000012`` -> 12); -1 if none."""
    digits = name.rsplit("_", 1)[-1]
    return int(digits) if name.startswith(PREFIX) and digits.isdigit() else -1


def predecessor(children: Iterable[str], mine: str) -> str | None:
    """The candidate just before ``mine`` (None: ``mine`` leads). Foreign names are ignored."""
    ordered = sorted((c for c in children if sequence_of(c) >= 0), key=sequence_of)
    if mine not in ordered:
        raise ValueError(f"candidate {mine} is not among {ordered}")
    index = ordered.index(mine)
    return ordered[index - 1] if index > 0 else None


class LeaderElection:
    """This member's candidacy; every method runs on the coordinator thread."""

    def __init__(self, session: MultiSession, group: str, consumer_id: str,
                 on_predecessor_gone: Callable[[str], None]) -> None:
        self._session = session
        self._group = group
        self._consumer_id = consumer_id
        self._notify = on_predecessor_gone
        self.candidate: str | None = None
        self._candidate_session: int | None = None
        self.watching: str | None = None

    @property
    def candidate_path(self) -> str | None:
        return paths.leader_candidate(self._group, self.candidate) if self.candidate else None

    @property
    def standing(self) -> bool:
        """Our candidate belongs to the live session (a dead session's candidate is gone)."""
        return self.candidate is not None and \
            self._candidate_session == self._session.session_id

    def _join(self) -> None:
        prefix = f"{paths.leader_election(self._group)}/{PREFIX}"
        session_id = self._session.session_id
        created = self._session.create_sequential_ephemeral(prefix, self._consumer_id.encode())
        self.candidate = created.rsplit("/", 1)[-1]
        self._candidate_session = session_id
        log.info("[%s] leader election candidate %s", self._consumer_id, self.candidate)

    def check(self) -> bool:
        """Join if needed, then True if this member leads; else watch the predecessor."""
        while True:
            if self.candidate is None or self._candidate_session != self._session.session_id:
                self._join()
            assert self.candidate is not None
            try:
                children = self._session.get_children(paths.leader_election(self._group))
            except NoNodeError:
                children = []
            if self.candidate not in children:
                self.candidate = None  # deleted under us: stand again
                continue
            before = predecessor(children, self.candidate)
            if before is None:
                self.watching = None
                return True
            if self.watching == before:
                return False  # already watched (a watch is set once per predecessor)
            path = paths.leader_candidate(self._group, before)
            # Marked before the request: the watch can fire before ``exists`` returns, and
            # the callback's reset must stand, or the next check would set no watch.
            self.watching = before
            try:
                stat = self._session.exists(path, watch=self._on_event)
            except BaseException:
                self.watching = None
                raise
            if stat is None:
                self.watching = None
                continue  # gone between the listing and the watch: look again
            if stat.ephemeralOwner == self._session.session_id:
                self.watching = None
                # Our own stray (a create retried after a lost reply); gone anyway if the
                # session ended meanwhile, and the loop then stands again.
                with contextlib.suppress(SessionExpiredError):
                    self._session.delete_in_session(path, stat.ephemeralOwner)
                continue
            return False

    def _on_event(self, event: WatchedEvent) -> None:
        """kazoo's thread: only hand the reason over."""
        self.watching = None
        self._notify(event.path or "")

    def forget(self) -> None:
        """A new session: the old candidate died with the old session."""
        self.candidate = None
        self.watching = None
