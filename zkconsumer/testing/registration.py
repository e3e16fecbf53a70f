"""A broker's ``/brokers/ids/<id>`` registration, kept by the harness for brokers that keep no
state in ZooKeeper (Tansu, and Apache Kafka 4 in KRaft mode, which has no ZooKeeper at all).

The legacy consumer finds brokers, topics and partition leaders in ZooKeeper only, so such a
broker is registered the way a Kafka 0.10 broker registered itself: an ephemeral znode with its
version, host, port and endpoints, written again in every new session (as Kafka's
``KafkaHealthcheck`` did) and removed when the broker stops or its process dies on its own (a
watchdog notices), so a dead broker never stays listed.
"""

from __future__ import annotations

import functools
import logging
import threading

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError
from kazoo.protocol.states import KazooState

from zkconsumer.errors import ServerError
from zkconsumer.testing._process import ManagedProcess, Watchdog
from zkconsumer.zk import paths
from zkconsumer.zk.codec import BrokerRegistration, encode_broker

log = logging.getLogger(__name__)

# Paths a Kafka broker created at start-up (ZkUtils.setupCommonPaths), so readers find them.
COMMON_PATHS = (paths.CONSUMERS, paths.BROKER_IDS, paths.BROKER_TOPICS)


def register_broker(client: KazooClient, reg: BrokerRegistration) -> None:
    """Write the ephemeral broker registration (and the common parents) as Kafka 0.10 did."""
    for path in COMMON_PATHS:
        client.ensure_path(path)
    path = paths.broker(reg.broker_id)
    try:
        client.create(path, encode_broker(reg), ephemeral=True)
    except NodeExistsError:
        raise ServerError(
            f"{path} already exists: another broker is registered with id {reg.broker_id}"
        ) from None


class ZooKeeperRegistration:
    """The registration of ``reg`` in ``zk_connect`` for as long as ``proc`` lives.

    ``start`` raises :class:`ServerError` (naming ZooKeeper or the taken id) and leaves nothing
    behind; ``stop`` ends the session, and the ephemeral znode goes with it. Idempotent.
    """

    def __init__(self, zk_connect: str, reg: BrokerRegistration, proc: ManagedProcess) -> None:
        self.zk_connect = zk_connect
        self.reg = reg
        self._proc = proc
        self._client: KazooClient | None = None
        self._watchdog: Watchdog | None = None
        self._session_lost = False

    @property
    def client(self) -> KazooClient | None:
        """The session holding the znode (None once stopped)."""
        return self._client

    def start(self) -> ZooKeeperRegistration:
        # Reconnect quickly (kazoo's default backoff grows to a minute) so that a ZooKeeper
        # leader election does not outlast the registration's session.
        client = KazooClient(hosts=self.zk_connect, timeout=6.0,
                             connection_retry={"max_tries": -1, "delay": 0.1, "backoff": 2,
                                               "max_delay": 1.0})
        try:
            client.start(timeout=15)
        except Exception as exc:
            raise ServerError(
                f"the broker cannot register: ZooKeeper at {self.zk_connect} is unreachable "
                f"({exc})") from None
        try:
            register_broker(client, self.reg)
        except Exception:
            client.stop()
            client.close()
            raise
        self._client = client
        client.add_listener(functools.partial(self._session_changed, client))
        self._watchdog = Watchdog(self._proc, self._end_session)
        self._watchdog.start()
        return self

    def _session_changed(self, client: KazooClient, state: KazooState) -> None:
        """A Kafka broker registers again in every new session; so does this one.

        Runs on kazoo's thread, so the write happens on a thread of its own.
        """
        if state == KazooState.LOST:
            self._session_lost = True
        elif state == KazooState.CONNECTED and self._session_lost and self._client is client:
            self._session_lost = False
            threading.Thread(target=self._register_again, args=(client,),
                             name=f"broker-{self.reg.broker_id}-reregister", daemon=True).start()

    def _register_again(self, client: KazooClient) -> None:
        try:
            register_broker(client, self.reg)
            log.info("broker %d registered again in a new ZooKeeper session", self.reg.broker_id)
        except Exception:  # stopped meanwhile, or the session went again (the next one retries)
            log.warning("broker %d could not register again", self.reg.broker_id, exc_info=True)

    def _end_session(self) -> None:
        """End the registration session: the ephemeral znode goes with it, as with Kafka."""
        client, self._client = self._client, None
        if client is not None:
            try:
                client.stop()
                client.close()
            except Exception:  # the session is gone either way
                log.debug("closing the broker's ZooKeeper session failed", exc_info=True)

    def stop(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        self._end_session()
