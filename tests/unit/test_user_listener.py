"""The user's rebalance listener: one callback is enough, none is refused by name."""

from __future__ import annotations

import pytest

from zkconsumer import ConsumerRebalanceListener, RebalanceListenerBase
from zkconsumer.membership.rebalance_listener import as_rebalance_listener


class Committer:
    def __init__(self) -> None:
        self.released: list[dict[str, set[int]]] = []

    def before_releasing_partitions(self, partition_ownership: dict[str, set[int]]) -> None:
        self.released.append(partition_ownership)


def test_a_listener_with_one_callback_gets_a_no_op_for_the_other() -> None:
    user = Committer()
    listener = as_rebalance_listener(user)
    assert isinstance(listener, ConsumerRebalanceListener)
    listener.before_releasing_partitions({"t": {0, 1}})
    assert listener.before_starting_fetchers("c1", {"t": {0: "c1-0"}}) is None
    assert user.released == [{"t": {0, 1}}]


def test_a_full_listener_is_used_as_it_is() -> None:
    class Both(RebalanceListenerBase):
        pass

    both = Both()
    assert as_rebalance_listener(both) is both


def test_an_object_with_neither_callback_is_refused_naming_its_type() -> None:
    with pytest.raises(TypeError, match="Committed defines neither"):
        as_rebalance_listener(type("Committed", (), {})())
