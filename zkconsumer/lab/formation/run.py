"""One formation run: N members of one kind started together under a retry budget, then a storm.

1. start N member processes at once (``OriginalMember`` JVMs or ``ZkconsumerMember`` processes,
   the same ``key=value`` arguments and lines), ``rebalance.max.retries`` = b;
2. formation: the group is stable once its N members are registered and own every partition,
   unchanged for ``quiet_s``; an initial member that exits first (its first rebalance ran out of
   retries: ``createMessageStreams`` threw) means the group did not form;
3. the storm, once formed: the first ``leaves`` initial members leave cleanly (their lifetime,
   ``seconds=``, the original driver's only clean leave, ends ``lifetime_s`` after they were
   ready) while ``joins`` new members start within ``window_s`` after the first of those leaves;
4. after the storm: wait until the registrations and owners stop changing for ``calm_s`` (or
   the deadline), then run the verify tool: a member that gave up leaves partitions nobody owns
   while every member believes it is done (stuck).

Members' memory (resident set, the JVM's or the Python process's) is read once the group formed.
"""

from __future__ import annotations

import logging
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kazoo.client import KazooClient

from zkconsumer.admin.groups import check_ownership, snapshot, verify_group
from zkconsumer.lab.formation.verdict import Outcome, row_of
from zkconsumer.testing.original import MemberProcess, OriginalMember, ZkconsumerMember

log = logging.getLogger(__name__)

GAVE_UP = "can't rebalance after"
POLL_S = 0.25
NO_LEAVE_S = 100_000


@dataclass(frozen=True)
class FormationParams:
    partitions: int = 64
    session_timeout_ms: int = 6000
    rebalance_backoff_ms: int = 1000
    joins: int = 3
    leaves: int = 3             # at most N - 1: somebody stays
    window_s: float = 2.0
    lifetime_s: int = 40        # a leaver's, after ready: the group forms well before it ends
    quiet_s: float = 2.0
    calm_s: float = 8.0
    formation_deadline_s: float = 90.0
    settle_deadline_s: float = 90.0


def member_factory(kind: str, kafka_home: Path | None) -> Callable[..., MemberProcess]:
    if kind == "original":
        if kafka_home is None:
            raise ValueError("original members need a Kafka 0.10.2 directory")
        return lambda *a, **kw: OriginalMember(kafka_home, *a, **kw)
    if kind == "zkconsumer":
        return ZkconsumerMember
    raise ValueError(f"unknown member kind {kind!r}: choose original or zkconsumer")


def rss_mb(pid: int | None) -> float | None:
    """The resident set of a process in MB (Linux), None when unknown."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except (OSError, ValueError):
        pass
    return None


class _Group:
    def __init__(self, kind: str, budget: int, zk_connect: str, topic: str,
                 params: FormationParams, kafka_home: Path | None) -> None:
        self.name = f"form-{kind[:4]}-b{budget}-{uuid.uuid4().hex[:6]}"
        self.topic = topic
        self.zk_connect = zk_connect
        self._new = member_factory(kind, kafka_home)
        self._props = {"zookeeper.session.timeout.ms": params.session_timeout_ms,
                       "rebalance.backoff.ms": params.rebalance_backoff_ms,
                       "rebalance.max.retries": budget,
                       "partition.assignment.strategy": "range",
                       "auto.commit.interval.ms": 1000}
        self.members: list[MemberProcess] = []

    def add(self, index: int, seconds: int) -> MemberProcess:
        m = self._new(self.zk_connect, self.name, topic=self.topic, seconds=seconds,
                      props={**self._props, "consumer.id": f"c{index:03d}"})
        self.members.append(m.start())
        return m

    def ids(self, members: list[MemberProcess]) -> set[str]:
        return {f"{self.name}_{m.props['consumer.id']}" for m in members}

    def close(self) -> None:
        for m in self.members:
            try:
                m.close()
            except Exception:
                log.debug("closing %s failed", m.consumer_id, exc_info=True)


def _picture(client: KazooClient, group: _Group) -> tuple[set[str], tuple[Any, ...], bool]:
    """(registered consumer ids, owners, no ownership violation) of the group now."""
    snap = snapshot(client, group.name, [group.topic])
    owners = tuple(sorted((p, o or "") for (_, p), o in snap.owners.items()))
    return {m.consumer_id for m in snap.members}, owners, not check_ownership(snap)


def _form(client: KazooClient, group: _Group, initial: list[MemberProcess],
          p: FormationParams) -> tuple[int, bool, float]:
    """(initial members that exited first, stable, seconds to stable)."""
    start = time.monotonic()
    want = group.ids(initial)
    since: float | None = None
    seen: tuple[Any, ...] = ()
    while time.monotonic() - start < p.formation_deadline_s:
        # a leaver whose lifetime ended said SHUTDOWN: that is no failure to form, but the
        # group can no longer be seen whole (no verdict)
        exited = sum(not m.alive() and not m.shut_down() for m in initial)
        if exited or any(m.shut_down() for m in initial):
            return exited, False, time.monotonic() - start
        try:
            registered, owners, good = _picture(client, group)
        except Exception:
            registered, owners, good = set(), (), False
        now = time.monotonic()
        if registered == want and good and owners == seen and since is not None:
            if now - since >= p.quiet_s:
                return 0, True, since - start
        elif registered == want and good:
            since, seen = now, owners
        else:
            since = None
        time.sleep(POLL_S)
    return 0, False, time.monotonic() - start


def _storm(group: _Group, initial: list[MemberProcess], p: FormationParams,
           rng: random.Random, first_index: int) -> None:
    """Joiners start around the moment the first leaver's lifetime ends."""
    leavers = initial[:min(p.leaves, len(initial) - 1)]
    if not leavers:
        return
    ready_at = time.monotonic()   # they were all ready when the group formed: an upper bound
    while any(m.alive() for m in leavers) and time.monotonic() - ready_at < p.lifetime_s + 30:
        if not all(m.alive() for m in leavers):
            break   # the first leave happened
        time.sleep(0.05)
    offsets = sorted(rng.uniform(0, p.window_s) for _ in range(p.joins))
    begun = time.monotonic()
    for i, at in enumerate(offsets):
        time.sleep(max(0.0, begun + at - time.monotonic()))
        group.add(first_index + i, NO_LEAVE_S)


def _calm(client: KazooClient, group: _Group, p: FormationParams) -> float:
    """Seconds until the registrations and owners stopped changing for ``calm_s``."""
    start = time.monotonic()
    since = start
    seen: Any = None
    while time.monotonic() - start < p.settle_deadline_s:
        try:
            registered, owners, _ = _picture(client, group)
            now_seen: Any = (tuple(sorted(registered)), owners)
        except Exception:
            now_seen = None
        now = time.monotonic()
        if now_seen != seen or now_seen is None:
            since, seen = now, now_seen
        elif now - since >= p.calm_s:
            return since - start
        time.sleep(POLL_S)
    return time.monotonic() - start


def run_once(kind: str, budget: int, members: int, seed: int, zk_connect: str, topic: str,
             params: FormationParams, kafka_home: Path | None = None) -> dict[str, Any]:
    """One run's row (see :func:`~zkconsumer.lab.formation.verdict.row_of`)."""
    rng = random.Random(f"{kind}-{budget}-{members}-{seed}")
    group = _Group(kind, budget, zk_connect, topic, params, kafka_home)
    leaves = min(params.leaves, members - 1)
    client = KazooClient(hosts=zk_connect, timeout=10.0)
    client.start(timeout=30)
    measured: dict[str, Any] = {}
    try:
        initial = [group.add(i, params.lifetime_s if i < leaves else NO_LEAVE_S)
                   for i in range(members)]
        exited, stable, took = _form(client, group, initial, params)
        measured["formation_s"] = round(took, 2)
        rss = [r for r in (rss_mb(m.pid) for m in initial) if r is not None]
        measured["rss_mb_mean"] = round(sum(rss) / len(rss), 1) if rss else None
        verify: bool | None = None
        if stable and not exited:
            _storm(group, initial, params, rng, members)
            measured["calm_s"] = round(_calm(client, group, params), 2)
            verification = verify_group(zk_connect, group.name)
            verify = verification.ok
            measured["violations"] = [str(v) for v in verification.violations[:3]]
        said = [m.count(GAVE_UP) for m in group.members]
        outcome = Outcome(kind, budget, members, seed, exited, stable, sum(said),
                          sum(c > 0 for c in said), verify)
        return row_of(outcome, group=group.name, **measured)
    except Exception as exc:   # the row says so; the sweep goes on
        log.exception("formation run %s failed", group.name)
        return row_of(Outcome(kind, budget, members, seed, 0, False, 0, 0, None,
                              error=repr(exc)[:300]), group=group.name, **measured)
    finally:
        group.close()
        client.stop()
        client.close()
