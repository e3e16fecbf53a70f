"""Owner claims in the leader mode: every owner znode of one generation in one multi.

ZooKeeper applies all of them or none, so there is nothing to roll back (the legacy mode creates
them one by one and rolls back on a conflict: ``rebalance/ordered_claims.py``). If one still
exists (its previous owner has not released it yet) the member watches that znode and tries
again when it is deleted. The release (last commit + owner deletion in one multi) and the fenced
commits are the offset store's (``offsets/fenced.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from kazoo.exceptions import NodeExistsError, NoNodeError

from zkconsumer.identity import TopicPartition
from zkconsumer.zk import codec, paths
from zkconsumer.zk.multi import Create, MultiSession, ensure_parents

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ClaimOutcome:
    """``claimed``; else ``blocked_by`` is an owner znode that still exists (``owner`` in it)."""

    claimed: bool
    blocked_by: str | None = None
    owner: str | None = None


def claim(session: MultiSession, group: str, claims: Mapping[TopicPartition, str],
          session_id: int) -> ClaimOutcome:
    """Create every owner znode of ``claims`` in one multi (all or nothing)."""
    if not claims:
        return ClaimOutcome(True)
    ensure_parents(session, (paths.topic_owners(group, tp.topic) for tp in claims))
    ops = [Create(paths.owner(group, tp.topic, tp.partition), codec.encode_owner(tid), True)
           for tp, tid in sorted(claims.items())]
    result = session.multi(ops, session_id)
    if result.ok:
        return ClaimOutcome(True)
    existing = result.failed(NodeExistsError)
    if not existing:
        raise RuntimeError(f"owner claim failed: {result.failures}")
    path = existing[0].path
    try:
        data, stat = session.get(path)
        owner = codec.decode_owner(path, data)
    except NoNodeError:
        return ClaimOutcome(False, path, None)  # released meanwhile: try again at once
    wanted = {paths.owner(group, tp.topic, tp.partition): tid for tp, tid in claims.items()}
    if owner == wanted[path] and stat.ephemeralOwner == session_id:
        # A retried multi whose first try succeeded before its reply was lost: all are ours.
        log.info("owner znodes already created by this session (lost reply): %s", path)
        return ClaimOutcome(True)
    return ClaimOutcome(False, path, owner)


__all__ = ["ClaimOutcome", "claim"]
