"""The fetch-based stability rule kept as running counts equals the rule computed from scratch."""

from __future__ import annotations

import random

from zkconsumer.sim.engine import Engine
from zkconsumer.sim.tally import OwnershipLedger


def _stable_from_scratch(partitions: int, live: set[str], fetching: dict[str, frozenset[int]]
                         ) -> bool:
    seen = [p for m in live for p in fetching.get(m, ())]
    if sorted(seen) != list(range(partitions)):
        return False
    return partitions < len(live) or all(fetching.get(m) for m in live)


def test_running_counts_agree_with_the_rule_over_random_histories() -> None:
    rng = random.Random(16)
    for partitions in (1, 3, 6, 8):
        ledger = OwnershipLedger(Engine(), partitions, by_fetch=True)
        members = [f"m{i}" for i in range(6)]
        live: set[str] = set()
        fetching: dict[str, frozenset[int]] = {}
        expected = False
        for _ in range(3000):
            m = rng.choice(members)
            action = rng.random()
            if action < 0.15:  # joining decides nothing until the member's next fetch
                ledger.add_member(m)
                live.add(m)
            elif action < 0.25:
                if m in live:
                    ledger.member_died(m)
                    live.discard(m)
                    expected = _stable_from_scratch(partitions, live, fetching)
            else:  # a partition outside the range now and then must never count as covered
                parts = rng.sample(range(partitions + 1), rng.randint(0, min(3, partitions)))
                ledger.fetch(m, parts)
                fetching[m] = frozenset(parts)
                expected = _stable_from_scratch(partitions, live, fetching)
            assert ledger.stable == expected


def test_each_partition_once_and_everyone_fetching_is_stable() -> None:
    ledger = OwnershipLedger(Engine(), 2, by_fetch=True)
    ledger.add_member("a")
    ledger.add_member("b")
    ledger.fetch("a", [0])
    assert not ledger.stable  # partition 1 is fetched by nobody
    ledger.fetch("b", [1])
    assert ledger.stable
    ledger.fetch("b", [0, 1])
    assert not ledger.stable  # partition 0 fetched twice
    ledger.fetch("b", [1])
    ledger.member_died("b")
    assert not ledger.stable  # a dead member's fetch does not count
