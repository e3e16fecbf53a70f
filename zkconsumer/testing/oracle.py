"""A differential oracle: one scripted sequence of membership events, played once by original
Kafka 0.10.2 members and once by zkconsumer members (same consumer ids, same order, same pauses),
must leave the same sequence of settled owner-znode states and committed offsets.

After every event the run waits until the group has settled (the registered members are the live
ones, every live member's latest decision equals the owner znodes, every partition is owned),
then sends a batch of messages and waits until all were delivered and committed. The state then
recorded is independent of timing, so two kinds that behave alike record equal sequences;
transient states inside a rebalance are not compared (they depend on scheduling).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from zkconsumer.admin import create_topic, produce
from zkconsumer.errors import ServerError
from zkconsumer.testing.original import MemberProcess, OriginalMember, ZkconsumerMember
from zkconsumer.zk import codec, paths

log = logging.getLogger(__name__)

START, KILL, LEAVE = "start", "kill", "leave"
SETTLE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Event:
    """``start`` members (together), ``kill`` one (SIGKILL) or wait for its clean ``leave``.

    ``at_s`` is the earliest time after the script's start; a member to ``leave`` is started
    with ``leave_after_s`` (the driver's ``seconds``).
    """

    action: str
    members: tuple[str, ...]
    at_s: float = 0.0
    streams: int = 1
    subscription: str | None = None  # a filter regex with {prefix}; None: the first topic
    leave_after_s: int = 600


@dataclass(frozen=True)
class State:
    after: str
    owners: tuple[tuple[str, int, str], ...]  # (topic, partition, thread without the group)
    offsets: tuple[tuple[str, int, int], ...]


@dataclass
class Script:
    events: Sequence[Event]
    topics: dict[str, int]  # names without the run's prefix -> partitions
    strategy: str = "range"
    props: dict[str, object] = field(default_factory=dict)
    per_step: int = 2


def describe(event: Event) -> str:
    return f"{event.action} {','.join(event.members)}"


def diff_states(first: Sequence[State], second: Sequence[State]) -> list[str]:
    """Readable differences, step by step (empty: the two runs agree)."""
    out = []
    for i in range(max(len(first), len(second))):
        a = first[i] if i < len(first) else None
        b = second[i] if i < len(second) else None
        if a != b:
            out.append(f"step {i}: {a} != {b}")
    return out


def normalise(group: str, thread: str) -> str:
    return thread[len(group) + 1:] if thread.startswith(group + "_") else thread


class OracleRun:
    """One kind's run of a script against ``zk_connect``/``bootstrap``: topics
    ``<prefix>_<name>`` created for the run, group ``<prefix>``; states name topics without
    the prefix and threads without the group, so two runs compare directly."""

    def __init__(self, kind: str, script: Script, zk_connect: str, bootstrap: str, prefix: str,
                 kafka_home: Path | None = None) -> None:
        if kind not in ("original", "zkconsumer"):
            raise ValueError(f"kind must be original or zkconsumer, got {kind!r}")
        if kind == "original" and kafka_home is None:
            raise ValueError("an original run needs the Kafka 0.10.2 directory")
        self.kind, self.script, self.group, self.prefix = kind, script, prefix, prefix
        self.topics = {f"{prefix}_{t}": n for t, n in script.topics.items()}
        self.zk_connect, self.bootstrap, self.kafka_home = zk_connect, bootstrap, kafka_home
        self.members: dict[str, MemberProcess] = {}
        self.live: set[str] = set()
        self.sent: dict[tuple[str, int], int] = {}

    def member(self, cid: str, event: Event, topic: str | None) -> MemberProcess:
        props = {**self.script.props, "consumer.id": cid,
                 "partition.assignment.strategy": self.script.strategy}
        sub = ({"filter": event.subscription.format(prefix=self.prefix)} if event.subscription
               else {"topic": topic})
        if self.kind == "original":
            return OriginalMember(self.kafka_home, self.zk_connect, self.group,  # type: ignore[arg-type]
                                  streams=event.streams, seconds=event.leave_after_s,
                                  props=props, **sub)
        return ZkconsumerMember(self.zk_connect, self.group, streams=event.streams,
                                seconds=event.leave_after_s, props=props, **sub)  # type: ignore[arg-type]

    def run(self) -> list[State]:
        """Create the run's topics and play the script."""
        for name, n in self.topics.items():
            create_topic(self.zk_connect, name, n, bootstrap=self.bootstrap)
        self.sent = {(t, p): 0 for t, n in self.topics.items() for p in range(n)}
        topic = next(iter(self.topics))
        states: list[State] = []
        client = KazooClient(hosts=self.zk_connect)
        client.start(timeout=15)
        started = time.monotonic()
        try:
            for event in self.script.events:
                time.sleep(max(0.0, started + event.at_s - time.monotonic()))
                self.apply(event, topic)
                self.wait(lambda: self.settled(client), f"{describe(event)} to settle")
                self.send()
                self.wait(lambda: self.delivered_and_committed(client),
                          f"messages after {describe(event)} to be delivered and committed")
                states.append(self.snapshot(client, describe(event)))
                log.info("%s run: %s", self.kind, states[-1])
        finally:
            client.stop()
            client.close()
            for m in self.members.values():
                m.close()
        return states

    def apply(self, event: Event, topic: str) -> None:
        if event.action == START:
            for cid in event.members:
                self.members[cid] = self.member(cid, event, topic).start()
            for cid in event.members:
                self.members[cid].wait_ready()
                self.live.add(cid)
        elif event.action == KILL:
            for cid in event.members:
                self.members[cid].kill()
                self.live.discard(cid)
        elif event.action == LEAVE:
            for cid in event.members:
                self.members[cid].wait_shutdown(SETTLE_TIMEOUT_S + event.leave_after_s)
                self.live.discard(cid)
        else:
            raise ValueError(f"unknown event action {event.action!r}")

    def wait(self, predicate: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while not predicate():
            if time.monotonic() > deadline:
                raise ServerError(f"{self.kind} run of group {self.group}: timed out waiting "
                                  f"for {what}")
            time.sleep(0.2)

    def owner_znodes(self, client: KazooClient) -> dict[tuple[str, int], str]:
        owners = {}
        for topic, n in self.topics.items():
            for p in range(n):
                try:
                    owners[(topic, p)] = client.get(paths.owner(self.group, topic, p))[0].decode()
                except NoNodeError:
                    pass
        return owners

    def settled(self, client: KazooClient) -> bool:
        try:
            registered = set(client.get_children(paths.consumer_ids(self.group)))
        except NoNodeError:
            return False
        if registered != {f"{self.group}_{cid}" for cid in self.live}:
            return False
        owners = self.owner_znodes(client)
        if len(owners) != sum(self.topics.values()):
            return False
        live_prefixes = tuple(f"{self.group}_{cid}-" for cid in self.live)
        if not all(th.startswith(live_prefixes) for th in owners.values()):
            return False
        for cid in self.live:
            decided = self.members[cid].assignment() or {}
            if any(owners.get((t, p)) != th for t, parts in decided.items()
                   for p, th in parts.items()):
                return False
            mine = f"{self.group}_{cid}-"
            if self.members[cid].owned() != {tp: th for tp, th in owners.items()
                                             if th.startswith(mine)}:
                return False
        return True

    def send(self) -> None:
        for topic, n in self.topics.items():
            for p in range(n):
                first = self.sent.get((topic, p), 0)
                produce(self.bootstrap, topic, [f"{topic}/{p}/{first + i}".encode()
                                                for i in range(self.script.per_step)], partition=p)
                self.sent[(topic, p)] = first + self.script.per_step

    def committed(self, client: KazooClient) -> dict[tuple[str, int], int]:
        result = {}
        for (topic, p) in self.sent:
            path = paths.offset(self.group, topic, p)
            try:
                result[(topic, p)] = codec.decode_offset(path, client.get(path)[0])
            except NoNodeError:
                result[(topic, p)] = -1
        return result

    def delivered_and_committed(self, client: KazooClient) -> bool:
        got = {(m.topic, m.partition, m.offset) for member in self.members.values()
               for m in member.messages()}
        want = {(t, p, o) for (t, p), n in self.sent.items() for o in range(n)}
        return want <= got and self.committed(client) == self.sent

    def snapshot(self, client: KazooClient, after: str) -> State:
        cut = len(self.prefix) + 1
        owners = tuple(sorted((t[cut:], p, normalise(self.group, th))
                              for (t, p), th in self.owner_znodes(client).items()))
        offsets = tuple(sorted((t[cut:], p, o) for (t, p), o in self.committed(client).items()))
        return State(after, owners, offsets)
