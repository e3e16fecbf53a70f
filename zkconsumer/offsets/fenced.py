"""Offsets of the leader mode: every commit fenced by the adopted assignment version.

* **Fenced commit** (:meth:`FencedOffsetStore.commit`): every commit is a multi that first
  checks that the assignment znode still has the version this member last adopted. A member
  whose session expired (a zombie) is dropped by the leader, which publishes a new version
  before anyone else may own its partitions, so the zombie's commits fail instead of moving an
  offset under the new owner.
* **Release** (:meth:`FencedOffsetStore.release`): the last offset commit of a partition and the
  deletion of its owner znode go in one multi, so the next owner, whose claim can only succeed
  after the deletion, always reads the final offset.

A commit still fenced on a session that has expired raises
:class:`~zkconsumer.offsets.store.OffsetCommitRefused` (an expected refusal, logged as one line by
the auto-commit task).

Reads, checkpoints and the barrier are the ZooKeeper store's (``offsets/zookeeper.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from kazoo.exceptions import NoNodeError, SessionExpiredError

from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.events import EventBus
from zkconsumer.identity import TopicPartition
from zkconsumer.metrics import COMMIT_MULTI, RebalanceMetrics
from zkconsumer.offsets.store import OffsetCommitRefused
from zkconsumer.offsets.zookeeper import ZookeeperOffsetStore
from zkconsumer.zk import codec, paths
from zkconsumer.zk.multi import Check, Create, Delete, MultiSession, Op, SetData, ensure_parents

log = logging.getLogger(__name__)


class FencedOffsetStore(ZookeeperOffsetStore):
    """Offsets whose every write is conditional on the adopted assignment version."""

    def __init__(self, session: MultiSession, group: str, events: EventBus,
                 metrics: RebalanceMetrics) -> None:
        super().__init__(session, group, events, metrics)
        self._multi_session = session
        self._fence: tuple[int, int] | None = None  # (assignment znode version, session id)
        self._existing: set[TopicPartition] = set()
        # persistent ``offsets/<topic>`` parents known to exist: checked once, not per commit
        self._parents: set[str] = set()
        self.fenced = 0

    def set_fence(self, version: int | None, session_id: int | None) -> None:
        """Commits from now on require assignment version ``version`` (None: refuse them)."""
        with self._lock:
            self._fence = None if version is None or session_id is None \
                else (version, session_id)

    def read(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        result = super().read(partitions)
        with self._lock:
            self._existing.update(tp for tp, off in result.items() if off >= 0)
        return result

    def _ours(self, deletes: list[Delete], session_id: int) -> list[Delete]:
        """The owner znodes of a release that ``session_id`` still holds."""
        held = []
        for d in deletes:
            stat = self._multi_session.exists(d.path)
            if stat is not None and stat.ephemeralOwner == session_id:
                held.append(d)
        return held

    def _write_ops(self, offsets: Mapping[TopicPartition, int]) -> list[Op]:
        ops: list[Op] = []
        for tp, offset in sorted(offsets.items()):
            path = paths.offset(self._group, tp.topic, tp.partition)
            value = codec.encode_offset(offset)
            ops.append(SetData(path, value) if tp in self._existing else Create(path, value))
        return ops

    def _ensure_parents(self, tps: Iterable[TopicPartition]) -> None:
        """The persistent parents a multi's offset writes need (a multi creates no parents);
        each is checked once, and again only after a multi failed."""
        needed = {paths.topic_offsets(self._group, tp.topic) for tp in tps} - self._parents
        if needed:
            ensure_parents(self._multi_session, needed)
            self._parents |= needed

    def _refresh_existing(self, tps: Iterable[TopicPartition]) -> None:
        """After a failed multi: check the parents again (one may be gone, e.g. the group's
        offsets deleted) and learn which offset znodes exist (setData or create)."""
        tps = list(tps)
        self._parents.clear()
        self._ensure_parents(tps)
        for tp in tps:
            if self._session.exists(paths.offset(self._group, tp.topic, tp.partition)):
                self._existing.add(tp)
            else:
                self._existing.discard(tp)

    def commit(self, infos: Iterable[PartitionTopicInfo]) -> dict[TopicPartition, int]:
        """Write every changed consumed offset in one fenced multi; {} when fenced off."""
        with self._lock:
            changed = {}
            for info in list(infos):
                tp = TopicPartition(info.topic, info.partition)
                offset = info.consumed_offset
                if 0 <= offset < (1 << 62) and self._checkpoint.get(tp) != offset:
                    changed[tp] = offset
            if not changed:
                return {}
            fence = self._fence
            if fence is None:
                return self._refused(changed, "no adopted assignment")
            version, session_id = fence
            self._ensure_parents(changed)
            check = Check(paths.assignment(self._group), version)
            for try_ in range(2):
                try:
                    result = self._multi_session.multi([check, *self._write_ops(changed)],
                                                       session_id, counted_as=COMMIT_MULTI)
                except SessionExpiredError as exc:
                    # The fence's session is gone: the group may have given these partitions
                    # to another member already. Refused, as a fenced-off commit is; the
                    # fence goes with it (we hold the lock, so it is still the one used), and
                    # until the new session adopts a record commits are refused quietly
                    # ("no adopted assignment") instead of each failing the same way.
                    self._fence = None
                    raise OffsetCommitRefused(
                        self._group, changed, f"its session 0x{session_id:x} has expired; "
                        "the member rejoins in a new session") from exc
                if result.ok:
                    break
                if 0 in result.failures:  # the fence: assignment moved on or is gone
                    return self._refused(changed, f"assignment version is no longer {version}")
                if try_ == 0:
                    self._refresh_existing(changed)
            else:
                raise RuntimeError(f"offset commit failed: {result.failures}")
            self._existing.update(changed)
            self._checkpoint.update(changed)
        self._metrics.add(commits=len(changed))
        self._events.emit("offsets_committed", offsets={f"{tp.topic}/{tp.partition}": o
                                                        for tp, o in sorted(changed.items())})
        return changed

    def _refused(self, changed: Mapping[TopicPartition, int], why: str
                 ) -> dict[TopicPartition, int]:
        self.fenced += 1
        log.info("[%s] offset commit fenced (%s): %s", self._events.consumer_id, why,
                    {f"{tp.topic}/{tp.partition}": o for tp, o in sorted(changed.items())})
        self._events.emit("commit_fenced", reason=why,
                          offsets={f"{tp.topic}/{tp.partition}": o
                                   for tp, o in sorted(changed.items())})
        return {}

    def release(self, final: Mapping[TopicPartition, int], session_id: int) -> None:
        """Last commit + owner znode deletion of each partition, in one multi (our session).

        ``final`` holds the offsets to commit, taken before the partitions were disowned
        (``fetchers.disown``), so that no other commit can write them after this one.
        """
        if not final:
            return
        with self._lock:
            to_write = {tp: o for tp, o in final.items()
                        if 0 <= o < (1 << 62) and self._checkpoint.get(tp) != o}
            self._ensure_parents(to_write)
            deletes = [Delete(paths.owner(self._group, tp.topic, tp.partition))
                       for tp in sorted(final)]
            for _ in range(len(deletes) + 2):  # each try learns of one missing znode
                ops = [*self._write_ops(to_write), *deletes]
                if not ops:
                    break
                result = self._multi_session.multi(
                    ops, session_id,
                    lambda d=deletes: len(self._ours(d, session_id)) == len(d))
                if result.ok:
                    break
                if result.abandoned:
                    # A try lost with its connection may have been applied: then none of the
                    # owner znodes is ours any more (gone, or claimed by the next owner since),
                    # and sending it again would delete that claim and write our final offsets
                    # over its commits. Otherwise release what is still ours.
                    deletes = self._ours(deletes, session_id)
                    if not deletes:
                        break
                    continue
                gone = [op for op in result.failed(NoNodeError) if isinstance(op, Delete)]
                if gone:  # an owner znode is already gone: release what is left
                    deletes = [d for d in deletes if d not in gone]
                else:
                    self._refresh_existing(to_write)
            else:
                raise RuntimeError(f"release failed: {result.failures}")
            self._existing.update(to_write)
            for tp in final:
                self._checkpoint.pop(tp, None)
        if to_write:
            self._metrics.add(commits=len(to_write))
            self._events.emit("offsets_committed", offsets={f"{tp.topic}/{tp.partition}": o
                                                            for tp, o in sorted(to_write.items())})


__all__ = ["FencedOffsetStore"]
