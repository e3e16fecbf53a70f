"""Keeps the broker's ``/brokers/ids/<id>`` registration alive through ZooKeeper leader kills.

A Kafka broker writes its registration again whenever its ZooKeeper session is replaced. The
embedded broker registers once: if a leader kill outlasts its session (its client reconnects
with kazoo's default backoff, slower than the members'), the registration vanishes and every
member finds no broker to fetch from. That would measure the harness, not the consumer, so the
run re-creates the registration with the same content, as the broker would have, and counts
how often it had to.
"""

from __future__ import annotations

import logging
import threading

from kazoo.client import KazooClient
from kazoo.protocol.states import ZnodeStat

from zkconsumer.zk import paths

log = logging.getLogger(__name__)


class BrokerRegistrationKeeper:
    def __init__(self, client: KazooClient, broker_id: int) -> None:
        self._client = client
        self.path = paths.broker(broker_id)
        data, _ = client.get(self.path)
        self._data: bytes = data
        self._stopped = threading.Event()
        self.recreated = 0

    def start(self) -> BrokerRegistrationKeeper:
        self._client.DataWatch(self.path, self._changed)
        return self

    def stop(self) -> None:
        self._stopped.set()

    def _changed(self, data: bytes | None, stat: ZnodeStat | None) -> bool | None:
        if self._stopped.is_set():
            return False  # ends the watch
        if data is None:
            log.warning("%s vanished (the broker's session expired); registering it again",
                        self.path)
            self.recreated += 1
            # kazoo's thread: never block it. NodeExists (the broker was faster) is fine.
            self._client.create_async(self.path, self._data, ephemeral=True)
        return None
