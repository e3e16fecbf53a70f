"""The chaos soak: random joins, leaves, kills, session expiries, pauses and ZooKeeper leader
kills against one group, with exact counts of what was lost and duplicated.

>>> from zkconsumer.lab.chaos import ChaosSpec, run_chaos              # doctest: +SKIP
>>> report = run_chaos(ChaosSpec(duration_s=30, members=4, partitions=8, seed=7))
>>> report.lost, report.verify_ok, report.stray_znodes
(0, True, 0)

The runner is imported on first use: member processes (``python -m
zkconsumer.lab.member --chaos``) import this package too and need none of it.
"""

from __future__ import annotations

from typing import Any

from zkconsumer.lab.chaos.schedule import (
    ACTION_KINDS,
    Action,
    Kind,
    ScheduleParams,
    action_counts,
    build_schedule,
)

_RUNNER_NAMES = ("ChaosError", "ChaosReport", "ChaosSpec", "run_chaos")


def __getattr__(name: str) -> Any:
    if name in _RUNNER_NAMES:
        from zkconsumer.lab.chaos import runner, spec

        return getattr(runner if name == "run_chaos" else spec, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ACTION_KINDS", "Action", "ChaosError", "ChaosReport", "ChaosSpec", "Kind", "ScheduleParams",
    "action_counts", "build_schedule", "run_chaos",
]
