"""Ensemble failover: the ZooKeeper leader dies under a consuming group.

The group runs against a real 3-server ensemble (every member is given the whole connect
string, no proxy). The leader is SIGKILLed either during steady consumption
(``failover-steady``) or right after a newcomer registered, while every member is rebalancing
(``failover-rebalance``). Clients on the dead server are disconnected and must reconnect to a
survivor within their session timeout (every client is, in fact: the followers drop theirs
while they elect), and the quorum of two elects a new leader. What is measured:
what members saw (disconnects, reconnections, sessions lost and renewed, from their
``session_*`` records), the usual rebalance metrics, and whether ownership stayed exactly-one:
in the members' records at every instant (``double_owned_intervals``) and in the owner znodes at
the end (every partition owned once, by a registered member). A server killed by one run is
started again before the next run, so every run meets a full ensemble.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import Counter
from pathlib import Path
from types import TracebackType
from typing import Any

from kazoo.client import KazooClient

from zkconsumer.identity import consumer_id_of
from zkconsumer.lab.group import member_name
from zkconsumer.lab.runs import RunResult
from zkconsumer.lab.servers import Servers
from zkconsumer.lab.splitbrain.harness import SplitRun
from zkconsumer.lab.splitbrain.spec import SplitBrainSpec
from zkconsumer.zk import codec, paths

log = logging.getLogger(__name__)

STEADY = "failover-steady"
REBALANCE = "failover-rebalance"
REGISTRATION_DEADLINE_S = 30.0


def failover_events() -> tuple[str, ...]:
    return (STEADY, REBALANCE)


class FailoverCluster:
    """A 3-server ensemble with the broker registered in it, and an observer client."""

    def __init__(self, bootstrap: str) -> None:
        from zkconsumer.testing.zookeeper import EmbeddedEnsemble

        self.bootstrap = bootstrap
        self.ensemble = EmbeddedEnsemble(3)
        self._stack = contextlib.ExitStack()
        self.client: KazooClient | None = None
        self.killed: list[int] = []

    def __enter__(self) -> FailoverCluster:
        from zkconsumer.testing.servers import broker_from_env

        try:
            self._stack.enter_context(self.ensemble)
            self._stack.enter_context(broker_from_env(self.ensemble.connect_string,
                                                      spec=self.bootstrap))
            self.client = KazooClient(hosts=self.ensemble.connect_string, timeout=10.0)
            self.client.start(timeout=30)
            self._stack.callback(self._close_client)
        except BaseException:
            self._stack.close()
            raise
        return self

    def _close_client(self) -> None:
        if self.client is not None:
            self.client.stop()
            self.client.close()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stack.close()

    def kill_leader(self) -> tuple[int, float]:
        """SIGKILL the current leader; returns its id and the wall-clock time of the kill."""
        leader = self.ensemble.leader_id()
        killed_at = time.time()
        self.ensemble.kill(leader)
        self.killed.append(leader)
        return leader, killed_at

    def restore(self) -> None:
        """Start the servers killed by earlier runs again (each run starts with three)."""
        while self.killed:
            self.ensemble.start(self.killed.pop())
        self.ensemble.leader_id(timeout=60.0)

    @property
    def zk_connect(self) -> str:
        return self.ensemble.connect_string

    def registered(self, group: str) -> list[str]:
        assert self.client is not None
        path = paths.consumer_ids(group)
        return self.client.get_children(path) if self.client.exists(path) else []

    def owners(self, group: str, topic: str, partitions: int) -> dict[int, str | None]:
        """Owner thread id per partition from the owner znodes (None: no owner)."""
        assert self.client is not None
        out: dict[int, str | None] = {}
        for p in range(partitions):
            path = paths.owner(group, topic, p)
            try:
                data, _ = self.client.get(path)
                out[p] = codec.decode_owner(path, data)
            except Exception:
                out[p] = None
        return out


def exactly_one_owner(owners: dict[int, str | None], registered: list[str]) -> bool:
    """Every partition has an owner znode and its owner is a registered consumer (pure).

    Owner values are thread ids ``<consumer id>-<n>``; registrations are consumer ids.
    """
    alive = set(registered)
    return all(o is not None and consumer_id_of(o) in alive for o in owners.values())


def session_view(coord: list[tuple[str, float, str]], since: float) -> dict[str, dict[str, int]]:
    """Per member, how many times each ``session_*`` state was reported after ``since``."""
    out: dict[str, Counter[str]] = {}
    for member, ts, what in coord:
        if ts >= since and what.startswith("session_"):
            out.setdefault(member, Counter())[what.removeprefix("session_")] += 1
    return {m: dict(sorted(c.items())) for m, c in sorted(out.items())}


def run_failover(spec: SplitBrainSpec, protocol: str, event: str, repeat: int,
                 cluster: FailoverCluster, records_dir: Path) -> RunResult:
    cluster.restore()
    servers = Servers(cluster.zk_connect, cluster.bootstrap)
    with SplitRun(spec, protocol, repeat, servers, records_dir, event, proxied=False) as run:
        run.form()
        group = run.group.group
        if event == REBALANCE:
            newcomer = member_name(spec.members)
            run.group.spawn(newcomer)
            want = spec.members + 1
            deadline = time.monotonic() + REGISTRATION_DEADLINE_S
            while len(cluster.registered(group)) < want and time.monotonic() < deadline:
                time.sleep(0.02)
        leader, event_ts = cluster.kill_leader()
        run.phases["leader_killed"] = event_ts
        new_leader = cluster.ensemble.leader_id(timeout=60.0)
        run.phases["new_leader"] = time.time()
        # Settled only once every member is connected again and has been quiet since: the
        # records do not change while a member is merely disconnected.
        settled = run.group.wait_settled(
            spec.timing.event_deadline_s,
            check=lambda: _reconnected_and_quiet(run, event_ts, spec.timing.quiet_s))
        owners = cluster.owners(group, run.topic, spec.partitions)
        registered = cluster.registered(group)
        result = run.finish(event_ts, settled, details={
            "killed_server": leader, "new_leader": new_leader,
            "new_leader_s": round(run.phases["new_leader"] - event_ts, 3),
            "owners_at_end": {str(p): o for p, o in owners.items()},
            "registered_at_end": sorted(registered),
        })
    coord = [(c.member, c.ts, c.what) for c in run.group.records.coord
             if c.ts <= result.details["end_ts"]]
    seen = session_view(coord, event_ts)
    result.details["sessions_seen"] = seen
    result.metrics.update(_failover_metrics(seen, owners, registered, result.metrics))
    return result


def _reconnected_and_quiet(run: SplitRun, since: float, quiet_s: float) -> bool:
    """Every member reported CONNECTED after its last disconnection since ``since``, and the
    last such reconnection is ``quiet_s`` old."""
    last: dict[str, tuple[float, str]] = {}
    for c in run.group.records.coord:
        if c.ts >= since and c.what.startswith("session_"):
            if c.member not in last or c.ts >= last[c.member][0]:
                last[c.member] = (c.ts, c.what)
    for name in run.group.members:
        ts_what = last.get(name)
        if ts_what is not None and ts_what[1] != "session_CONNECTED":
            return False
    latest = max((ts for ts, _ in last.values()), default=since)
    return time.time() - latest >= quiet_s


def _failover_metrics(seen: dict[str, dict[str, int]], owners: dict[int, str | None],
                      registered: list[str], metrics: dict[str, Any]) -> dict[str, Any]:
    return {
        "members_disconnected": sum(1 for s in seen.values() if s.get("SUSPENDED")),
        "sessions_lost": sum(s.get("LOST", 0) for s in seen.values()),
        "exactly_one_owner": exactly_one_owner(owners, registered)
        and metrics.get("double_owned_intervals") == 0,
    }
