"""Assignments in O(1) or O(P/N) per member, so that 10,000 members can each "run the assignor".

The real legacy members each run the whole group's assignor and keep their own part; with one
topic and one thread per member that part depends only on the member's rank in the sorted member
list, so the simulator computes it from the rank (the result is identical to
``zkconsumer.assignors.legacy``'s for that case):

* ``range``: member ``i`` of ``n`` gets ``P // n`` consecutive partitions, the first ``P % n``
  members one more;
* ``roundrobin``: partitions ordered by the Java ``String.hashCode`` of ``"[<topic>,<p>]"``
  (stable), dealt over the sorted members: member ``i`` gets positions ``i, i + n, ...``.

The broker-side ``cooperative-sticky`` and KIP-848's server-side uniform assignor are modelled by
:func:`sticky_target`: a balanced assignment that keeps every partition it can where it is.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from zkconsumer.identity import java_string_hash

log = logging.getLogger(__name__)

TOPIC = "t"


def range_share(rank: int, members: int, partitions: int) -> range:
    """The partitions the legacy (and Kafka's) ``range`` assignor gives the rank-th member."""
    share, extra = divmod(partitions, members)
    start = rank * share + min(rank, extra)
    return range(start, start + share + (1 if rank < extra else 0))


def roundrobin_order(partitions: int, topic: str = TOPIC) -> list[int]:
    """Partitions in the legacy ``roundrobin`` dealing order (hash order, stable)."""
    return sorted(range(partitions), key=lambda p: java_string_hash(f"[{topic},{p}]"))


def roundrobin_share(rank: int, members: int, order: Sequence[int]) -> list[int]:
    return sorted(order[rank::members])


def full_assignment(members: Sequence[str], partitions: int, strategy: str
                    ) -> dict[str, list[int]]:
    """Every member's part (members sorted as the real assignors sort them)."""
    ordered = sorted(members)
    n = len(ordered)
    if strategy == "roundrobin":
        order = roundrobin_order(partitions)
        return {m: roundrobin_share(i, n, order) for i, m in enumerate(ordered)}
    return {m: list(range_share(i, n, partitions)) for i, m in enumerate(ordered)}


def sticky_target(current: Mapping[str, set[int]], members: Sequence[str], partitions: int
                  ) -> dict[str, set[int]]:
    """Balanced (counts within one), keeping as many current placements as balance allows.

    Members holding the most keep the larger quotas; each keeps its lowest partitions up to its
    quota; freed and unowned partitions go, lowest first, to members below quota in id order.
    """
    ordered = sorted(members)
    n = len(ordered)
    if n == 0:
        return {}
    base, extra = divmod(partitions, n)
    by_load = sorted(ordered, key=lambda m: (-len(current.get(m, ())), m))
    quota = {m: base + (1 if i < extra else 0) for i, m in enumerate(by_load)}
    target: dict[str, set[int]] = {}
    taken: set[int] = set()
    for m in ordered:
        keep = sorted(p for p in current.get(m, ()) if p < partitions and p not in taken)
        kept = set(keep[:quota[m]])
        taken |= kept
        target[m] = kept
    free = iter(p for p in range(partitions) if p not in taken)
    for m in ordered:
        need = quota[m] - len(target[m])
        for _ in range(need):
            target[m].add(next(free))
    return target
