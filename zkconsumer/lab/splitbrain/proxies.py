"""One fault proxy per member, between it and its coordination server.

ZooKeeper-family members reach ZooKeeper through their proxy (their ``zk_connect`` is the
proxy's address, chroot kept). Broker-family members reach the broker through theirs; a Kafka
client only bootstraps from the address it is given and then connects to the address the broker
*advertises*, so the proxy rewrites that address in every response frame (:class:`KafkaAddress
Rewrite`) and all of the member's traffic, coordinator included, stays on the proxy.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable

from zkconsumer.faults import FaultProxy
from zkconsumer.lab.group import LabGroup
from zkconsumer.lab.handles import MemberHandle

log = logging.getLogger(__name__)


class KafkaAddressRewrite:
    """Per-connection filter of broker→client bytes: the advertised ``host:port`` becomes the
    proxy's, in whole response frames (4-byte size, then the body).

    The host string stays the same (both are 127.0.0.1) and only the INT32 port after it
    changes, so no length field changes: the match is the host bytes followed by the port, which
    is how the host/port pair is laid out in Metadata and FindCoordinator responses in every
    version (a plain or compact string, then INT32). A frame split across reads is held back
    until it is complete.
    """

    def __init__(self, host: str, broker_port: int, proxy_port: int) -> None:
        self._old = host.encode() + struct.pack(">i", broker_port)
        self._new = host.encode() + struct.pack(">i", proxy_port)
        self._buf = bytearray()

    def __call__(self, data: bytes) -> bytes:
        self._buf += data
        out = bytearray()
        while len(self._buf) >= 4:
            size = int.from_bytes(self._buf[:4], "big")
            if len(self._buf) < 4 + size:
                break
            frame = bytes(self._buf[:4 + size])
            del self._buf[:4 + size]
            out += frame.replace(self._old, self._new)
        return bytes(out)


def _host_port(address: str) -> tuple[str, int, str]:
    """(host, port, chroot) of the first server of a connect string or bootstrap list."""
    first, _, chroot = address.split(",")[0].partition("/")
    host, _, port = first.rpartition(":")
    return host or "127.0.0.1", int(port), f"/{chroot}" if chroot else ""


def broker_proxy(bootstrap: str, name: str) -> FaultProxy:
    """A started proxy in front of the broker that advertises itself in the broker's place."""
    host, port, _ = _host_port(bootstrap)
    if host != "127.0.0.1":
        raise ValueError(f"the broker proxy rewrites 127.0.0.1 addresses only; the broker is "
                         f"at {bootstrap}")
    holder: dict[str, int] = {}

    def make_filter() -> Callable[[bytes], bytes]:
        return KafkaAddressRewrite(host, port, holder["port"])

    proxy = FaultProxy(host, port, name=name, downstream_filter=make_filter)
    proxy.start()
    holder["port"] = proxy.port
    return proxy


class MemberProxies:
    """The proxies of one run, created on first use, one per member name (its incarnations
    share it, as a restarted process on the same host shares its network path)."""

    def __init__(self, family: str, zk_connect: str, bootstrap: str) -> None:
        self.family = family
        self._zk = zk_connect
        self._bootstrap = bootstrap
        self.by_member: dict[str, FaultProxy] = {}

    def get(self, member: str) -> FaultProxy:
        proxy = self.by_member.get(member)
        if proxy is None:
            if self.family == "zookeeper":
                proxy = FaultProxy.for_address(self._zk, name=f"zk-{member}").start()
            else:
                proxy = broker_proxy(self._bootstrap, name=f"broker-{member}")
            self.by_member[member] = proxy
        return proxy

    def addresses(self, member: str) -> tuple[str, str]:
        """``(zk_connect, bootstrap)`` the member is given: its proxy on its family's side."""
        proxy = self.get(member)
        if self.family == "zookeeper":
            return proxy.address + _host_port(self._zk)[2], self._bootstrap
        return self._zk, proxy.address

    def stop_all(self) -> None:
        for proxy in self.by_member.values():
            try:
                proxy.stop()
            except Exception:  # a proxy that will not stop must not hide the run's result
                log.exception("fault proxy %s did not stop", proxy.name)
        self.by_member.clear()


class ProxiedGroup(LabGroup):
    """A lab group whose members each reach their coordination server through a proxy."""

    def __init__(self, proxies: MemberProxies | None, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.proxies = proxies

    def required(self) -> list[str]:
        """Members still running: a member whose first rebalance gave up after
        ``rebalance.max.retries`` has exited (as the original's createMessageStreams threw), and
        the group cannot wait for it to fetch."""
        alive = [m for m in self.members if self.handles[m].alive()]
        return alive if self.partitions >= len(alive) else []

    def spawn(self, name: str, own_process: bool = False) -> MemberHandle:
        if self.proxies is None:
            return super().spawn(name, own_process)
        saved = self._zk, self._bootstrap
        self._zk, self._bootstrap = self.proxies.addresses(name)
        try:
            return super().spawn(name, own_process)
        finally:
            self._zk, self._bootstrap = saved
