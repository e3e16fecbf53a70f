"""A kazoo session as the legacy consumer's ZkClient used it: blocking retries, counted requests.

Why a wrapper rather than a bare ``KazooClient``:

* **Blocking-retry semantics.** The original built ``ZkClient`` with no operation timeout, so
  every request blocks and retries on connection loss *and* session expiry until it succeeds
  (spec detailed §1.6). :meth:`ZkSession.get` and friends do the same with
  ``KazooRetry(max_tries=-1)``, interruptible only by :meth:`close`.
* **Owner claims and releases must not retry through an expiry.** An owner znode created in a
  *new* session next to claims that died with the old one would be a split ownership decision,
  and a release delayed past its session's expiry would delete by path whatever claim another
  member has made there since. :meth:`create_ephemeral_in_session` and
  :meth:`delete_in_session` retry connection loss only and raise ``SessionExpiredError`` as soon
  as the session they were given is gone. The session check and the queuing of the request
  happen under the lock the state listener takes when the session ends, so a request checked
  against the old session is either failed by kazoo with that session or never queued: it
  cannot be sent in the next one.
* **Counting.** Every request (each retry too) is counted by operation, with watch-setting reads
  counted again, for the herd-effect experiments.
* **SASL is confirmed at start.** kazoo reports CONNECTED (and ``start()`` returns) *before* it
  runs the SASL handshake; a rejected password only shows up as ``AuthFailedError`` on the next
  request, after which kazoo never reconnects. :func:`confirm_sasl` sends one request queued
  behind the handshake so that a bad ``sasl:`` login fails ``start()`` with a clear error.
* **State events.** kazoo's state callbacks run on its connection thread and must not block; the
  wrapper turns them into :class:`SessionEvent` records (with ``new_session`` set when a
  different session id follows a loss) for listeners that only set flags.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import (
    AuthFailedError,
    ConnectionLoss,
    KazooException,
    NoAuthError,
    NodeExistsError,
    NoNodeError,
    SessionExpiredError,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.interfaces import IAsyncResult
from kazoo.protocol.states import WatchedEvent, ZnodeStat
from kazoo.retry import InterruptedError as KazooInterruptedError
from kazoo.retry import KazooRetry

from zkconsumer.errors import ZkConsumerError, ZooKeeperUnavailable
from zkconsumer.metrics import ZkRequestCounter
from zkconsumer.zk.security import ZkSecurity, access_denied, acl_for

log = logging.getLogger(__name__)

Watcher = Callable[[WatchedEvent], None]


class SessionClosedError(ZkConsumerError):
    """The session was closed while a request was blocked waiting for ZooKeeper."""


@dataclass(frozen=True)
class SessionEvent:
    """A session state change: ``CONNECTED``, ``SUSPENDED`` or ``LOST`` (kazoo's names)."""

    state: str
    session_id: int | None
    new_session: bool = False


SessionListener = Callable[[SessionEvent], None]


def sasl_rejected(hosts: str, security: ZkSecurity) -> ZooKeeperUnavailable:
    """The error for a SASL login the server refused: the user is named, never the password."""
    user = security.auth.username if security.auth is not None else "?"
    return ZooKeeperUnavailable(
        f"ZooKeeper at {hosts} rejected the SASL login of user {user!r} "
        f"(zookeeper.auth {security.auth}): check the password, and that the server lists the "
        "user in the Server section of its JAAS file and has the SASL authProvider")


def confirm_sasl(client: KazooClient, hosts: str, security: ZkSecurity,
                 timeout_s: float) -> None:
    """Block until a started client's SASL handshake has succeeded; no-op without SASL.

    kazoo runs the handshake after it has reported CONNECTED, so ``start()`` succeeds even with
    a wrong password. A request queued now is sent only once the handshake is over, and fails
    with ``AuthFailedError`` if the server refused it. Raises ``ZooKeeperUnavailable`` on a
    refusal and when the answer does not come within ``timeout_s``.
    """
    if security.auth is None or security.auth.scheme != "sasl":
        return
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            client.exists_async("/").get(timeout=max(deadline - time.monotonic(), 0.01))
            return
        except AuthFailedError:
            raise sasl_rejected(hosts, security) from None
        except (ConnectionLoss, KazooTimeoutError):
            if time.monotonic() >= deadline:
                raise ZooKeeperUnavailable(
                    f"ZooKeeper at {hosts} did not complete the SASL login of user "
                    f"{security.auth.username!r} (zookeeper.auth {security.auth}) within "
                    f"{timeout_s * 1000:.0f} ms: a server without the SASL authProvider "
                    "never answers the handshake") from None
            time.sleep(0.05)


class ZkSession:
    """One ZooKeeper session shared by a connector's parts (KAFKA-1103: one client only)."""

    def __init__(self, hosts: str, session_timeout_ms: int, connection_timeout_ms: int,
                 counter: ZkRequestCounter | None = None, name: str = "zkconsumer",
                 security: ZkSecurity | None = None) -> None:
        self.hosts = hosts
        self.security = security or ZkSecurity()
        self.name = name
        self.counter = counter or ZkRequestCounter()
        self._connection_timeout_s = connection_timeout_ms / 1000.0
        self._closing = threading.Event()
        self._listeners: list[SessionListener] = []
        self._session_id: int | None = None
        # Held while a session-bound request is checked and queued, and while the state
        # listener changes the session id (see the module docstring).
        self._bind_lock = threading.RLock()
        self._last_session_id: int | None = None
        self._client = KazooClient(
            hosts=hosts,
            timeout=session_timeout_ms / 1000.0,
            # Reconnect quickly (kazoo's default backoff adds seconds after an outage).
            connection_retry=KazooRetry(max_tries=-1, delay=0.1, backoff=1.5, max_delay=1.0),
            # Credentials are re-sent on every reconnection; default_acl also covers znodes
            # created straight through the kazoo client (recipes, transactions).
            **self.security.kazoo_kwargs(),
        )
        self._client.add_listener(self._on_kazoo_state)
        self._retry = KazooRetry(max_tries=-1, delay=0.05, backoff=2, max_delay=1.0,
                                 ignore_expire=True, interrupt=self._closing.is_set)
        self._claim_retry = KazooRetry(max_tries=-1, delay=0.05, backoff=2, max_delay=1.0,
                                       ignore_expire=False, interrupt=self._closing.is_set)

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Connect, blocking up to ``zookeeper.connection.timeout.ms`` like the original.

        The timeout covers the SASL login too (see :func:`confirm_sasl`).
        """
        started = time.monotonic()
        try:
            self._client.start(timeout=self._connection_timeout_s)
            confirm_sasl(self._client, self.hosts, self.security,
                         self._connection_timeout_s - (time.monotonic() - started))
        except ZooKeeperUnavailable:
            self._client.stop()
            self._client.close()
            raise
        except KazooTimeoutError:
            self._client.stop()
            self._client.close()
            raise ZooKeeperUnavailable(
                f"could not connect to ZooKeeper at {self.hosts} within "
                f"{self._connection_timeout_s * 1000:.0f} ms (zookeeper.connection.timeout.ms)"
            ) from None
        except KazooException as exc:  # e.g. AuthFailedError: the server refused the credentials
            self._client.stop()
            self._client.close()
            raise ZooKeeperUnavailable(
                f"ZooKeeper at {self.hosts} refused the session: {type(exc).__name__} {exc} "
                f"(zookeeper.auth {self.security.auth or 'not set'})") from None
        if self._client.chroot and self._client.exists("/") is None:
            self._client.stop()
            self._client.close()
            raise ZooKeeperUnavailable(
                f"the chroot {self._client.chroot} of {self.hosts} does not exist; create it "
                "first (a broker registering under it does)")

    def close(self) -> None:
        """End the session (its ephemeral znodes go with it); idempotent."""
        if self._closing.is_set():
            return
        self._closing.set()
        try:
            self._client.stop()
        finally:
            self._client.close()

    @property
    def closed(self) -> bool:
        return self._closing.is_set()

    @property
    def session_id(self) -> int | None:
        """The current session id; ``None`` after a loss until a new session is established."""
        return self._session_id

    @property
    def client_id(self) -> tuple[int, bytes] | None:
        """``(session id, password)``, e.g. to expire this session from a second client in tests."""
        return self._client.client_id  # type: ignore[no-any-return]

    @property
    def connected(self) -> bool:
        return bool(self._client.connected)

    def add_state_listener(self, fn: SessionListener) -> None:
        self._listeners = [*self._listeners, fn]

    def _on_kazoo_state(self, state: str) -> None:
        """kazoo's connection thread: record, fan out; never block or call ZooKeeper here."""
        new_session = False
        with self._bind_lock:
            if state == KazooState.CONNECTED:
                cid = self._client.client_id
                self._session_id = cid[0] if cid else None
                new_session = (self._last_session_id is not None
                               and self._session_id != self._last_session_id)
                self._last_session_id = self._session_id
            elif state == KazooState.LOST:
                self._session_id = None
        event = SessionEvent(str(state), self._session_id, new_session)
        log.info("[%s] ZooKeeper session %s (session 0x%x%s)", self.name, state,
                 self._session_id or 0, ", new session" if new_session else "")
        for fn in self._listeners:
            try:
                fn(event)
            except Exception:
                log.exception("[%s] session listener %r failed", self.name, fn)

    # --- counted, blocking requests ----------------------------------------------------------

    def _run(self, retry: KazooRetry, func: Callable[[], Any], path: str = "",
             action: str = "a request") -> Any:
        if self._closing.is_set():
            raise SessionClosedError(f"[{self.name}] ZooKeeper session is closed")
        try:
            return retry.copy()(func)
        except KazooInterruptedError:
            raise SessionClosedError(f"[{self.name}] ZooKeeper session closed during a request"
                                     ) from None
        except NoAuthError:
            raise access_denied(path or "a znode", action, self.security) from None
        except AuthFailedError:  # a SASL login refused on a reconnection: kazoo has given up
            raise sasl_rejected(self.hosts, self.security) from None

    def get(self, path: str, watch: Watcher | None = None) -> tuple[bytes, ZnodeStat]:
        def call() -> tuple[bytes, ZnodeStat]:
            self.counter.count("getData", watch is not None)
            return self._client.get(path, watch=watch)  # type: ignore[no-any-return]
        return self._run(self._retry, call, path, "getData")  # type: ignore[no-any-return]

    def get_children(self, path: str, watch: Watcher | None = None) -> list[str]:
        def call() -> list[str]:
            self.counter.count("getChildren", watch is not None)
            return self._client.get_children(path, watch=watch)  # type: ignore[no-any-return]
        return self._run(self._retry, call, path, "getChildren")  # type: ignore[no-any-return]

    def exists(self, path: str, watch: Watcher | None = None) -> ZnodeStat | None:
        def call() -> ZnodeStat | None:
            self.counter.count("exists", watch is not None)
            return self._client.exists(path, watch=watch)
        return self._run(self._retry, call, path, "exists")  # type: ignore[no-any-return]

    def get_acls(self, path: str) -> list[Any]:
        """The znode's ACL (counted as ``getACL``)."""
        def call() -> list[Any]:
            self.counter.count("getACL")
            return list(self._client.get_acls(path)[0])
        return self._run(self._retry, call, path, "getACL")  # type: ignore[no-any-return]

    def set(self, path: str, value: bytes) -> None:
        """``updatePersistentPath``: setData, creating the node and its parents on NoNode."""
        def call() -> None:
            self.counter.count("setData")
            try:
                self._client.set(path, value)
                return
            except NoNodeError:
                pass
            try:
                self._create_with_parents(path, value, ephemeral=False)
            except NodeExistsError:
                self.counter.count("setData")
                self._client.set(path, value)
        self._run(self._retry, call, path, "setData")

    def delete(self, path: str) -> bool:
        """Delete a znode; NoNode is ignored (``ZkUtils.deletePath``). True if it was deleted."""
        def call() -> bool:
            self.counter.count("delete")
            try:
                self._client.delete(path)
                return True
            except NoNodeError:
                return False
        return self._run(self._retry, call, path, "delete")  # type: ignore[no-any-return]

    def create(self, path: str, value: bytes, ephemeral: bool = False) -> str:
        """Create a znode, creating missing persistent parents (retries through expiry)."""
        return self._run(  # type: ignore[no-any-return]
            self._retry, lambda: self._create_with_parents(path, value, ephemeral), path,
            "create")

    def run_in_session(self, session_id: int, start: Callable[[], IAsyncResult],
                       path: str = "", action: str = "a request",
                       still_needed: Callable[[], bool] | None = None) -> Any:
        """Run one asynchronous kazoo request in session ``session_id`` only.

        ``start`` queues the request (a kazoo ``*_async`` call) and is called with the session
        checked under the lock the state listener takes, so the request reaches ZooKeeper in
        that session or fails. Connection loss is retried; a gone or replaced session raises
        ``SessionExpiredError``. ZooKeeper's own errors (NodeExists, NoNode) propagate.
        ``still_needed`` is asked before every retry (never before the first try): a request
        lost with its connection may have been applied, and False ends the retries with None.
        """
        tries = 0

        def call() -> Any:
            nonlocal tries
            tries += 1
            if tries > 1 and still_needed is not None:
                gone()  # the question is about this session, not a later one
                if not still_needed():
                    return None
            with self._bind_lock:
                gone()
                pending = start()
            return pending.get()

        def gone() -> None:
            if self._session_id != session_id:
                raise SessionExpiredError(
                    f"session 0x{session_id:x} is gone (now {self._session_id!r})")
        return self._run(self._claim_retry, call, path, action)

    def create_ephemeral_in_session(self, path: str, value: bytes, session_id: int) -> str:
        """Create an ephemeral znode in *this* session only (an owner claim).

        Connection loss is retried (the original's ZkClient did); a lost or replaced session
        raises ``SessionExpiredError`` so the rebalance attempt aborts. NodeExists propagates
        to the caller, which compares the existing value with its own as the original did.
        Missing persistent parents are created first, in any session.
        """
        acl = self._acl(path)

        def start() -> IAsyncResult:
            self.counter.count("create")
            return self._client.create_async(path, value, acl=acl, ephemeral=True)
        try:
            return self.run_in_session(session_id, start, path, "create")  # type: ignore[no-any-return]
        except NoNodeError:
            self._run(self._retry, lambda: self._ensure_path(path.rsplit("/", 1)[0]), path,
                      "create")
            return self.run_in_session(session_id, start, path, "create")  # type: ignore[no-any-return]

    def delete_in_session(self, path: str, session_id: int) -> bool:
        """Delete a znode this session created (an owner release); True if it was deleted.

        Unlike :meth:`delete`, this never runs in a later session: once ``session_id`` is gone
        its ephemeral znodes are gone too, and the path may hold another member's claim by
        then. NoNode is ignored; a gone or replaced session raises ``SessionExpiredError``.
        """
        def start() -> IAsyncResult:
            self.counter.count("delete")
            return self._client.delete_async(path)

        def still_ours() -> bool:
            # The delete lost with its connection may have been applied, and another member may
            # have claimed the path since; in the same session, a plain retry would delete that
            # claim. Only a znode this session still holds is deleted again (nobody else can
            # replace it meanwhile, and a request in an expired session is refused).
            self.counter.count("exists")
            stat = self._client.exists(path)
            return stat is not None and stat.ephemeralOwner == session_id
        try:
            return bool(self.run_in_session(session_id, start, path, "delete", still_ours))
        except NoNodeError:
            return False

    def delete_all_in_session(self, paths: Iterable[str], session_id: int) -> bool:
        """:meth:`delete_in_session` for each path; False once that session is gone.

        A gone session took its ephemeral znodes with it, so there is nothing left to delete:
        the caller only learns that it did not have to.
        """
        try:
            for path in paths:
                self.delete_in_session(path, session_id)
        except SessionExpiredError:
            return False
        return True

    def create_checked_ephemeral(self, path: str, value: bytes) -> None:
        """Register an ephemeral znode as 0.9+ ``ZKCheckedEphemeral`` did.

        NodeExists is accepted only if the existing node belongs to the current session;
        otherwise it propagates (another live session holds the same consumer id).
        """
        while True:
            try:
                self.create(path, value, ephemeral=True)
                return
            except NodeExistsError:
                try:
                    _, stat = self.get(path)
                except NoNodeError:
                    continue
                if stat.ephemeralOwner == self._session_id:
                    return
                raise

    def _acl(self, path: str) -> list[Any]:
        return acl_for(path, self._client.default_acl)

    def _create_with_parents(self, path: str, value: bytes, ephemeral: bool) -> str:
        acl = self._acl(path)
        try:
            self.counter.count("create")
            return self._client.create(path, value, acl=acl, ephemeral=ephemeral)  # type: ignore[no-any-return]
        except NoNodeError:
            self._ensure_path(path.rsplit("/", 1)[0])
            self.counter.count("create")
            return self._client.create(path, value, acl=acl, ephemeral=ephemeral)  # type: ignore[no-any-return]

    def _ensure_path(self, path: str) -> None:
        """``createPersistent(parent, createParents=true)``: empty persistent parents."""
        if not path or path == "/":
            return
        try:
            self.counter.count("create")
            self._client.create(path, b"", acl=self._acl(path))
        except NodeExistsError:
            pass
        except NoNodeError:
            self._ensure_path(path.rsplit("/", 1)[0])
            try:
                self.counter.count("create")
                self._client.create(path, b"", acl=self._acl(path))
            except NodeExistsError:
                pass
