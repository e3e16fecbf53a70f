"""ZooKeeper multi-operations (the leader mode's): all-or-nothing claims, fenced writes.

:class:`MultiSession` is the connector's :class:`ZkSession` plus one request, ``multi``, which
ZooKeeper applies entirely or not at all. It runs only in the session it was given, like an
owner claim in the legacy mode: after an expiry the caller must decide again, never replay a
decision made in the old session. Each multi counts as one request (``multi``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from kazoo.exceptions import NodeExistsError, NoNodeError, RolledBackError
from kazoo.interfaces import IAsyncResult

from zkconsumer.zk.session import ZkSession

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Create:
    path: str
    value: bytes
    ephemeral: bool = False


@dataclass(frozen=True)
class Delete:
    path: str
    version: int = -1


@dataclass(frozen=True)
class SetData:
    path: str
    value: bytes
    version: int = -1


@dataclass(frozen=True)
class Check:
    """Fails the whole multi unless ``path`` exists at ``version`` (-1: any version)."""

    path: str
    version: int = -1


Op = Create | Delete | SetData | Check


@dataclass(frozen=True)
class MultiResult:
    """``failures`` maps an op's index to the error ZooKeeper gave it (empty: applied)."""

    ops: tuple[Op, ...]
    failures: dict[int, Exception] = field(default_factory=dict)
    abandoned: bool = False  # a retry was not sent: the caller's check found it not needed

    @property
    def ok(self) -> bool:
        return not self.failures and not self.abandoned

    def failed(self, kind: type[Exception]) -> list[Op]:
        return [self.ops[i] for i, exc in self.failures.items() if isinstance(exc, kind)]


class MultiSession(ZkSession):
    """A :class:`ZkSession` that can also run a multi-operation in one given session."""

    def multi(self, ops: Sequence[Op], session_id: int,
              still_needed: Callable[[], bool] | None = None,
              counted_as: str = "multi") -> MultiResult:
        """Apply ``ops`` atomically in session ``session_id``.

        Connection loss is retried; the retry may find its own earlier success (e.g. NodeExists
        on a znode the lost reply had created), which the caller resolves by reading. A gone or
        replaced session raises ``SessionExpiredError``. ``still_needed`` is asked before each
        retry; False returns an ``abandoned`` result without sending it. ``counted_as`` names
        the request in the session's counter (an offset commit is counted apart).
        """
        ops = tuple(ops)

        def start() -> IAsyncResult:
            self.counter.count(counted_as)
            txn = self._client.transaction()
            for op in ops:
                if isinstance(op, Create):
                    txn.create(op.path, op.value, ephemeral=op.ephemeral)
                elif isinstance(op, Delete):
                    txn.delete(op.path, op.version)
                elif isinstance(op, SetData):
                    txn.set_data(op.path, op.value, op.version)
                else:
                    txn.check(op.path, op.version)
            return txn.commit_async()
        results = self.run_in_session(session_id, start, action="multi",
                                      still_needed=still_needed)
        if results is None:
            return MultiResult(ops, abandoned=True)
        failures = {i: r for i, r in enumerate(results)
                    if isinstance(r, Exception) and not isinstance(r, RolledBackError)}
        if any(isinstance(r, Exception) for r in results) and not failures:
            failures = {0: RolledBackError()}
        return MultiResult(ops, failures)

    def create_sequential_ephemeral(self, prefix: str, value: bytes) -> str:
        """An election candidate: ``prefix`` + ZooKeeper's sequence number; parents created.

        Retried through connection loss, so a lost reply can leave a stray second candidate
        of ours; the election deletes a predecessor that belongs to its own session.
        """
        def call() -> str:
            self.counter.count("create")
            try:
                return self._client.create(prefix, value, ephemeral=True,  # type: ignore[no-any-return]
                                           sequence=True, makepath=False)
            except NoNodeError:
                self._ensure_path(prefix.rsplit("/", 1)[0])
                self.counter.count("create")
                return self._client.create(prefix, value, ephemeral=True,  # type: ignore[no-any-return]
                                           sequence=True)
        return self._run(self._retry, call)  # type: ignore[no-any-return]


def ensure_parents(session: ZkSession, parents: Iterable[str]) -> None:
    """Persistent parents (``owners/<t>``, ``offsets/<t>``) must exist before a multi."""
    for parent in sorted(set(parents)):
        if session.exists(parent) is None:
            try:
                session.create(parent, b"")
            except NodeExistsError:
                pass
