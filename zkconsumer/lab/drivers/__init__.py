"""The protocols the lab compares, each a driver of the same harness."""

from __future__ import annotations

import functools

from zkconsumer.lab.drivers.base import Driver, MemberSpec
from zkconsumer.lab.drivers.broker import run_broker_member
from zkconsumer.lab.drivers.zk import run_zk_member
from zkconsumer.lab.drivers.zk_leader import LEADER_PROTOCOLS

DRIVERS: dict[str, Driver] = {
    "zk-range": Driver("zk-range", "zookeeper",
                       functools.partial(run_zk_member, strategy="range"), None),
    "zk-roundrobin": Driver("zk-roundrobin", "zookeeper",
                            functools.partial(run_zk_member, strategy="roundrobin"), None),
    "eager-range": Driver("eager-range", "broker",
                          functools.partial(run_broker_member, strategy="range"), "JoinGroup"),
    "eager-roundrobin": Driver("eager-roundrobin", "broker",
                               functools.partial(run_broker_member, strategy="roundrobin"),
                               "JoinGroup"),
    "cooperative-sticky": Driver("cooperative-sticky", "broker",
                                 functools.partial(run_broker_member,
                                                   strategy="cooperative-sticky"),
                                 "JoinGroup"),
    "static-range": Driver("static-range", "broker",
                           functools.partial(run_broker_member, strategy="range", static=True),
                           "JoinGroup", options=(("static", "true"),)),
}
# coordination.mode=leader: one elected leader assigns; same driver, same records.
DRIVERS.update({
    name: Driver(name, "zookeeper",
                 functools.partial(run_zk_member, strategy=strategy, mode="leader"), None,
                 options=(("coordination.mode", "leader"),))
    for name, strategy in LEADER_PROTOCOLS.items()
})


def get_driver(name: str) -> Driver:
    try:
        return DRIVERS[name]
    except KeyError:
        raise ValueError(f"unknown protocol {name!r}; choose from {sorted(DRIVERS)}") from None


__all__ = ["DRIVERS", "Driver", "MemberSpec", "get_driver"]
