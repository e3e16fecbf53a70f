"""The user's rebalance listener: the original's ``ConsumerRebalanceListener``, typed.

Kafka 0.8.2 added ``kafka.javaapi.consumer.ConsumerRebalanceListener`` with two callbacks,
kept here under their Python names: ``before_releasing_partitions`` runs on the rebalancer
thread before this member deletes its owner znodes (the place to commit what was processed),
``before_starting_fetchers`` after the new ownership is claimed and before data flows.

A listener may define one callback only (the other is then a no-op), as a Python user would
expect; an object that defines neither is refused with an error naming its type, instead of
being silently ignored.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

log = logging.getLogger(__name__)

CALLBACKS = ("before_releasing_partitions", "before_starting_fetchers")


@runtime_checkable
class ConsumerRebalanceListener(Protocol):
    """What a rebalance listener provides (both callbacks, as the original interface)."""

    def before_releasing_partitions(self, partition_ownership: Mapping[str, set[int]]) -> None:
        """``topic -> partitions`` this member is about to give up (all it owns: eager)."""
        ...

    def before_starting_fetchers(self, consumer_id: str,
                                 global_partition_assignment: Mapping[str, Mapping[int, str]]
                                 ) -> None:
        """``topic -> {partition: thread id}`` of the new assignment, before fetching starts."""
        ...


class RebalanceListenerBase:
    """Both callbacks as no-ops: subclass it and override the one you need."""

    def before_releasing_partitions(self, partition_ownership: Mapping[str, set[int]]) -> None:
        return None

    def before_starting_fetchers(self, consumer_id: str,
                                 global_partition_assignment: Mapping[str, Mapping[int, str]]
                                 ) -> None:
        return None


class _Completed(RebalanceListenerBase):
    """A listener that defines one callback, with the other a no-op."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        for name in CALLBACKS:
            if callable(getattr(inner, name, None)):
                setattr(self, name, getattr(inner, name))

    def __repr__(self) -> str:
        return repr(self.inner)


def as_rebalance_listener(obj: Any) -> ConsumerRebalanceListener:
    """``obj`` as a full listener; TypeError if it defines neither callback."""
    defined = [name for name in CALLBACKS if callable(getattr(obj, name, None))]
    if not defined:
        raise TypeError(f"a rebalance listener must define {' or '.join(CALLBACKS)}; "
                        f"{type(obj).__name__} defines neither")
    if len(defined) == len(CALLBACKS):
        return obj  # type: ignore[no-any-return]
    return _Completed(obj)
