"""The protocols the lab runs (the protocol table's ``lab`` entries), each a driver of the
same harness."""

from __future__ import annotations

import functools

from zkconsumer.lab.drivers.base import Driver, MemberSpec
from zkconsumer.lab.drivers.broker import run_broker_member
from zkconsumer.lab.drivers.original import run_original_member
from zkconsumer.lab.drivers.zk import run_zk_member
from zkconsumer.scenarios.protocols import LAB, PROTOCOL_TABLE, Protocol


def _driver(p: Protocol) -> Driver:
    """The member body and counters of one protocol of the table."""
    if p.original:  # a JVM of Kafka 0.10.2: attempts from its log (attempt records)
        return Driver(p.name, p.family,
                      functools.partial(run_original_member, strategy=p.strategy), None,
                      options=(("implementation", p.implementation),))
    if p.family == "zookeeper":
        leader = p.mode == "leader"
        offsets = (("offsets.storage", p.offsets_storage),
                   ("dual.commit.enabled", str(p.dual_commit).lower()))
        return Driver(p.name, p.family,
                      functools.partial(run_zk_member, strategy=p.strategy, mode=p.mode,
                                        offsets=offsets if p.offsets_storage != "zookeeper"
                                        else ()), None,
                      options=(("coordination.mode", "leader"),) if leader else ())
    options = ((("static", "true"),) if p.static else ()) + (
        (("group.protocol", p.group_protocol),) if p.kip848 else ())
    # A KIP-848 member sends no JoinGroup: it counts its reconciliations itself (attempt records).
    return Driver(p.name, p.family,
                  functools.partial(run_broker_member, strategy=p.strategy, static=p.static,
                                    group_protocol=p.group_protocol),
                  None if p.kip848 else "JoinGroup", options=options)


DRIVERS: dict[str, Driver] = {name: _driver(PROTOCOL_TABLE[name]) for name in LAB}


def get_driver(name: str) -> Driver:
    try:
        return DRIVERS[name]
    except KeyError:
        raise ValueError(f"unknown protocol {name!r}; choose from {sorted(DRIVERS)}") from None


__all__ = ["DRIVERS", "Driver", "MemberSpec", "get_driver"]
