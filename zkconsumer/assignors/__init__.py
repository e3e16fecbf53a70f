"""Partition assignors: Kafka's four modern strategies and the ZooKeeper consumer's two.

Every assignor is a pure function behind a small object::

    from zkconsumer.assignors import get_assignor, Subscription
    a = get_assignor("cooperative-sticky")
    a.assign({"t0": 3}, {"C0": Subscription(["t0"]), "C1": Subscription(["t0"])})

``get_assignor`` returns a fresh instance on every call and no assignor keeps state between
calls, so any number of connectors can share a process. See ``docs/assignors.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType

from .base import (
    Assignment,
    AssignmentError,
    PartitionAssignor,
    RebalanceProtocol,
    Subscription,
    TopicPartition,
)
from .cooperative_sticky import CooperativeStickyAssignor
from .legacy import (
    LegacyAssignor,
    LegacyRangeAssignor,
    LegacyRoundRobinAssignor,
    sorted_thread_ids,
)
from .range import RangeAssignor
from .roundrobin import RoundRobinAssignor
from .sticky import StickyAssignor

ASSIGNORS: MappingProxyType[str, Callable[[], PartitionAssignor]] = MappingProxyType({
    "range": RangeAssignor,
    "roundrobin": RoundRobinAssignor,
    "sticky": StickyAssignor,
    "cooperative-sticky": CooperativeStickyAssignor,
    "legacy-range": LegacyRangeAssignor,
    "legacy-roundrobin": LegacyRoundRobinAssignor,
})


def get_assignor(name: str) -> PartitionAssignor:
    """A new assignor instance for ``name``; raises :class:`AssignmentError` (a ``ValueError``)
    listing the valid names for an unknown one."""
    factory = ASSIGNORS.get(name) if isinstance(name, str) else None
    if factory is None:
        raise AssignmentError(
            f"unknown partition assignor {name!r}; valid names: {', '.join(ASSIGNORS)}")
    return factory()


__all__ = [
    "ASSIGNORS",
    "Assignment",
    "AssignmentError",
    "CooperativeStickyAssignor",
    "LegacyAssignor",
    "LegacyRangeAssignor",
    "LegacyRoundRobinAssignor",
    "PartitionAssignor",
    "RangeAssignor",
    "RebalanceProtocol",
    "RoundRobinAssignor",
    "StickyAssignor",
    "Subscription",
    "TopicPartition",
    "get_assignor",
    "sorted_thread_ids",
]
