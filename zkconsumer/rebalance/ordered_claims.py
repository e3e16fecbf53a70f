"""Step 6 of a legacy attempt: claim the planned partitions' owner znodes, or roll back.

The original's ``reflectPartitionOwnershipDecision``: owner znodes are created in partition
order, none skipped, in the session the attempt started in; any conflict (or error) deletes
every owner znode this attempt created, and the attempt fails.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from kazoo.exceptions import NodeExistsError, NoNodeError, SessionExpiredError

from zkconsumer.errors import CorruptZnode, InvalidName
from zkconsumer.events import EventBus
from zkconsumer.identity import TopicPartition, consumer_id_of, is_thread_id
from zkconsumer.metrics import RebalanceMetrics
from zkconsumer.zk import codec, paths
from zkconsumer.zk.corrupt import CorruptionReporter
from zkconsumer.zk.security import AccessDenied
from zkconsumer.zk.session import ZkSession

log = logging.getLogger(__name__)


class OwnerClaims:
    """Claims owner znodes for one connector's attempts (on the rebalancer thread)."""

    def __init__(self, *, consumer_id: str, group: str, session: ZkSession,
                 corrupt: CorruptionReporter, metrics: RebalanceMetrics,
                 events: EventBus) -> None:
        self.consumer_id = consumer_id
        self.group = group
        self.session = session
        self.corrupt = corrupt
        self.metrics = metrics
        self.events = events

    def claim(self, claims: Mapping[TopicPartition, str], session_id: int) -> bool:
        """``reflectPartitionOwnershipDecision`` with rollback on any conflict.

        Rollback also runs when a claim raises (access denied, session gone): owner znodes
        created earlier in the attempt must not outlive it.
        """
        owned: list[tuple[TopicPartition, str]] = []
        conflicts = 0
        try:
            for tp, tid in claims.items():
                path = paths.owner(self.group, tp.topic, tp.partition)
                if self._claim_one(tp, path, tid, session_id):
                    owned.append((tp, path))
                    continue
                conflicts += 1
            if self.session.session_id != session_id:
                raise SessionExpiredError("the session changed while claiming partitions")
        except BaseException:
            self._roll_back(owned, session_id)
            raise
        if not conflicts:
            return True
        self._roll_back(owned, session_id)
        self.metrics.add(rollbacks=1)
        self.events.emit("rollback", partitions=[f"{tp.topic}/{tp.partition}" for tp, _ in owned],
                         conflicts=conflicts)
        log.info("[%s] owner conflict on %d partition(s): rolled back %d owner znode(s)",
                 self.consumer_id, conflicts, len(owned))
        return False

    def _roll_back(self, owned: list[tuple[TopicPartition, str]], session_id: int) -> None:
        """Delete this attempt's claims, in their session only (a gone session took them)."""
        if not self.session.delete_all_in_session((path for _, path in owned), session_id):
            log.info("[%s] session 0x%x ended: its %d claim(s) of this attempt went with it",
                     self.consumer_id, session_id, len(owned))

    def _claim_one(self, tp: TopicPartition, path: str, tid: str, session_id: int) -> bool:
        """Create one owner znode; True if it is ours (created or adopted), False on conflict.

        An existing *persistent* znode holding something that is not a thread id cannot be any
        member's claim (members write thread ids into ephemeral znodes): it is foreign data,
        reported once, deleted and the claim retried. A well-formed thread id is left alone,
        persistent or not (it may be an operator's deliberate block, or a tool's): a conflict.
        An ephemeral znode holding garbage belongs to a live session: a conflict like any other
        owner, reported once, gone with that session.
        """
        for repaired in (False, True):
            try:
                self.session.create_ephemeral_in_session(path, codec.encode_owner(tid), session_id)
                log.debug("[%s] %s successfully owned %s", self.consumer_id, tid, path)
                return True
            except NodeExistsError:
                pass
            current: str | None
            try:
                data, stat = self.session.get(path)
            except NoNodeError:
                current, data, stat = None, None, None
            try:
                current = None if data is None else codec.decode_owner(path, data)
            except CorruptZnode as exc:
                current = "<corrupt>"
                self.corrupt.report(path, data, exc, "treating the partition as owned by "
                                    "someone else")
            if current == tid and stat is not None and stat.ephemeralOwner == session_id:
                # Written by this session before a connection loss hid the reply.
                log.info("[%s] %s exists with value %s during connection loss; this is ok",
                         self.consumer_id, path, tid)
                return True
            if current == tid and stat is not None and stat.ephemeralOwner != 0:
                # Deviation: the original adopted any znode holding its thread id. One held by
                # another session (our previous one, not yet reaped) dies with that session,
                # and adopting it would leave us fetching a partition with no owner znode:
                # a conflict like any other, so the next attempt claims it for real.
                log.info("[%s] %s holds our thread id %s in session 0x%x, not ours (0x%x)",
                         self.consumer_id, path, tid, stat.ephemeralOwner, session_id)
            garbage = current == "<corrupt>" or (current is not None
                                                 and not _is_thread_id(current))
            persistent = stat is not None and stat.ephemeralOwner == 0
            if persistent and garbage and not repaired:
                self.corrupt.report(path, data, f"persistent owner znode holding {current!r}, "
                                    "which no member writes", "deleting it")
                try:
                    self.session.delete(path)
                except AccessDenied as exc:
                    log.warning("[%s] cannot delete foreign owner znode: %s", self.consumer_id,
                                exc)
                else:
                    continue
            elif garbage and current != "<corrupt>":
                self.corrupt.report(path, data, f"owner {current!r} is not a consumer thread id",
                                    "treating the partition as owned by someone else")
            self.metrics.add(owner_conflicts=1)
            self.events.emit("owner_conflict", topic=tp.topic, partition=tp.partition,
                             owner=current, thread_id=tid)
            log.info("[%s] waiting for the partition ownership to be deleted: %s for topic %s "
                     "(owner %s)", self.consumer_id, tp.partition, tp.topic, current)
            return False
        return False


def _is_thread_id(value: str) -> bool:
    """``<consumer id>-<n>``: what every member, original or ours, writes into owner znodes."""
    if not is_thread_id(value):
        return False
    try:
        paths.validate_member(consumer_id_of(value))
    except InvalidName:
        return False
    return True
