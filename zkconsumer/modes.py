"""The coordination modes by name: what ``coordination.mode`` selects (``COORDINATION_MODES``).

Each mode lives in its own package and implements ``membership.mode.CoordinationMode``; this is
the one place that knows both.
"""

from __future__ import annotations

from types import MappingProxyType

from zkconsumer.config import COORDINATION_MODES
from zkconsumer.coordination.mode import LEADER
from zkconsumer.errors import InvalidConfig
from zkconsumer.membership.mode import ModeSpec
from zkconsumer.rebalance.mode import LEGACY

MODES: MappingProxyType[str, ModeSpec] = MappingProxyType({
    spec.name: spec for spec in (LEGACY, LEADER)})


def get_mode(name: str) -> ModeSpec:
    """The mode called ``name``; :class:`InvalidConfig` listing the valid names otherwise."""
    spec = MODES.get(name)
    if spec is None:
        raise InvalidConfig(f"unknown coordination.mode {name!r}; valid names: "
                            f"{', '.join(COORDINATION_MODES)}")
    return spec


__all__ = ["MODES", "get_mode"]
