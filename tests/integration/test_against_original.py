"""Mixed groups for real: original Kafka 0.10.2 members (the Scala ZookeeperConsumerConnector, in
JVMs) and zkconsumer members in one group, on a real ZooKeeper and an Apache Kafka 0.10.2 broker,
through joins, clean leaves, SIGKILLs and session expiries. Every member of both kinds must decide
the same assignment (the one the legacy assignor gives for the registered threads), the owner
znodes must say the same, each message must reach the application, offsets committed by one kind
must be resumed by the other exactly, and zkconsumer's verify and the original
VerifyConsumerRebalance must both pass."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from connector_helpers import committed, kazoo_for, wait_until
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from zkconsumer.admin import create_topic, produce
from zkconsumer.admin.groups import verify_group
from zkconsumer.assignors.legacy import assign_legacy_range, assign_legacy_roundrobin
from zkconsumer.testing import EmbeddedZooKeeper, KafkaBroker
from zkconsumer.testing.oracle import KILL, LEAVE, START, Event, OracleRun, Script, diff_states
from zkconsumer.testing.original import (
    Assignment,
    MemberProcess,
    OriginalMember,
    ZkconsumerMember,
    run_tool,
)
from zkconsumer.topic_filter import Whitelist
from zkconsumer.zk import codec, paths

SESSION_MS = 4000
PROPS = {"zookeeper.session.timeout.ms": SESSION_MS, "rebalance.backoff.ms": 700,
         "rebalance.max.retries": 10, "auto.commit.interval.ms": 500,
         "zookeeper.connection.timeout.ms": 6000}
CONVERGE_S = 60.0


@pytest.fixture(scope="module")
def home(kafka_build) -> Path:
    return kafka_build("0.10.2", member_driver=True)


@pytest.fixture(scope="module")
def lab(home: Path) -> Iterator[tuple[str, KafkaBroker]]:
    """One ZooKeeper and one 0.10.2 broker for the module; groups and topics keep tests apart."""
    with EmbeddedZooKeeper() as zk, KafkaBroker(zk.connect_string, home) as broker:
        yield zk.connect_string, broker


@pytest.fixture
def zk(lab: tuple[str, KafkaBroker]) -> Iterator[KazooClient]:
    with kazoo_for(lab[0]) as client:
        yield client


class Group:
    """The members of one test's group, both kinds, and what they were sent."""

    def __init__(self, home: Path, zk_connect: str, bootstrap: str, name: str, strategy: str,
                 *, topic: str | None = None, filter: str | None = None) -> None:
        self.home, self.zk_connect, self.bootstrap, self.name = home, zk_connect, bootstrap, name
        self.strategy, self.topic, self.filter = strategy, topic, filter
        self.members: dict[str, MemberProcess] = {}
        self.sent: dict[tuple[str, int], int] = Counter()

    def add(self, kind: str, cid: str, streams: int = 1, seconds: int = 600) -> MemberProcess:
        props = {**PROPS, "consumer.id": cid, "partition.assignment.strategy": self.strategy}
        sub = {"topic": self.topic} if self.topic else {"filter": self.filter}
        member: MemberProcess
        if kind == "original":
            member = OriginalMember(self.home, self.zk_connect, self.name, streams=streams,
                                    seconds=seconds, props=props, **sub)  # type: ignore[arg-type]
        else:
            member = ZkconsumerMember(self.zk_connect, self.name, streams=streams,
                                      seconds=seconds, props=props, **sub)  # type: ignore[arg-type]
        self.members[cid] = member
        return member

    def start(self, *cids: str) -> None:
        """Start members together (JVMs start slowly: in parallel) and wait until each is ready."""
        for cid in cids:
            self.members[cid].start()
        with ThreadPoolExecutor(len(cids)) as pool:
            list(pool.map(lambda c: self.members[c].wait_ready(), cids))

    def send(self, topics: dict[str, int], per_partition: int) -> None:
        for topic, partitions in topics.items():
            for p in range(partitions):
                first = self.sent[(topic, p)]
                produce(self.bootstrap, topic, [f"{topic}/{p}/{first + i}".encode()
                                                for i in range(per_partition)], partition=p)
                self.sent[(topic, p)] += per_partition

    def delivered(self) -> Counter[tuple[str, int, int]]:
        return Counter((m.topic, m.partition, m.offset)
                       for member in self.members.values() for m in member.messages())

    def wait_all_delivered(self) -> Counter[tuple[str, int, int]]:
        want = {(t, p, o) for (t, p), n in self.sent.items() for o in range(n)}
        wait_until(lambda: want <= set(self.delivered()), CONVERGE_S,
                   f"every sent message of {self.name} delivered to some member")
        return self.delivered()

    def close(self) -> None:
        for member in self.members.values():
            member.close()


def registered_threads(zk: KazooClient, group: str, topics: dict[str, int]
                       ) -> dict[str, list[str]]:
    """topic -> thread ids of the registered members, from their registrations."""
    threads: dict[str, list[str]] = {t: [] for t in topics}
    for member in zk.get_children(paths.consumer_ids(group)):
        data = zk.get(paths.consumer_registration(group, member))[0]
        reg = codec.decode_registration(member, data)
        if reg.pattern == "static":
            subs = dict(reg.subscription)
        else:
            (pattern, n), = reg.subscription
            subs = {t: n for t in topics if Whitelist(pattern).is_topic_allowed(t, True)}
        for topic, n in subs.items():
            threads[topic] += [f"{member}-{i}" for i in range(n)]
    return threads


def owner_state(zk: KazooClient, group: str, topics: dict[str, int]) -> Assignment:
    """Who owns each partition now; a partition whose owner znode is absent (or released
    while it is read: a rebalance in progress) is unowned."""
    state: Assignment = {}
    for topic in topics:
        for p in range(topics[topic]):
            try:
                state.setdefault(topic, {})[p] = zk.get(paths.owner(group, topic, p))[0].decode()
            except NoNodeError:
                continue
    return {t: owners for t, owners in state.items() if owners}


def converged(group: Group, zk: KazooClient, topics: dict[str, int],
              live: Sequence[str]) -> Assignment | None:
    """The assignment every live member decided, if they all decided the same one, it is the
    legacy assignor's for the registered threads, and the owner znodes say exactly that."""
    registered = set(zk.get_children(paths.consumer_ids(group.name)))
    if registered != {f"{group.name}_{cid}" for cid in live}:
        return None
    decisions = [group.members[cid].assignment() for cid in live]
    if any(d != decisions[0] for d in decisions) or not decisions[0]:
        return None
    try:
        threads = registered_threads(zk, group.name, topics)
    except NoNodeError:  # a registration gone between listing and reading: still changing
        return None
    assign = assign_legacy_range if group.strategy == "range" else assign_legacy_roundrobin
    expected: Assignment = {}
    for tp, thread in assign({t: range(n) for t, n in topics.items()}, threads).items():
        expected.setdefault(tp.topic, {})[tp.partition] = thread
    if decisions[0] != expected or owner_state(zk, group.name, topics) != expected:
        return None
    return expected


def wait_converged(group: Group, zk: KazooClient, topics: dict[str, int], live: Sequence[str],
                   what: str, hold_s: float = 0.0) -> Assignment:
    """The converged assignment, once it has held for ``hold_s`` (a member that rebalances
    again, as an original does on the new session after its expiry, restarts the clock)."""
    held: list[tuple[float, Assignment]] = []

    def settled() -> Assignment | None:
        now = converged(group, zk, topics, live)
        if now is None or not held or held[0][1] != now:
            held[:] = [(time.monotonic(), now)] if now is not None else []
            return None if hold_s > 0 or now is None else now
        return now if time.monotonic() - held[0][0] >= hold_s else None

    return wait_until(settled, CONVERGE_S,
                      f"{', '.join(live)} to converge on one assignment after {what}"
                      + (f" and hold it {hold_s:g} s" if hold_s else ""), 0.25)


def original_verify(home: Path, zk_connect: str, group: str) -> str:
    out = run_tool(home, "kafka.tools.VerifyConsumerRebalance", "--zookeeper.connect",
                   zk_connect, "--group", group, check=False)
    return out.stdout + out.stderr


def assert_both_verifiers_pass(group: Group) -> None:
    ours = verify_group(group.zk_connect, group.name)
    assert ours.ok, ours.as_dict()
    theirs = original_verify(group.home, group.zk_connect, group.name)
    assert "Rebalance operation successful" in theirs, theirs


def test_range_static_mixed_group_through_joins_leaves_kills_and_expiry(home, lab, zk, unique):
    zk_connect, broker = lab
    topic = unique("mixed-range")
    topics = {topic: 6}
    create_topic(zk_connect, topic, 6, bootstrap=broker.bootstrap)
    g = Group(home, zk_connect, broker.bootstrap, unique("mixed-range-g"), "range", topic=topic)
    try:
        # o1 leaves cleanly 12 s after it is ready; formation takes a few seconds.
        g.add("original", "o1", streams=2, seconds=12)
        g.add("zkconsumer", "z1")
        g.send(topics, 3)
        g.start("o1", "z1")
        first = wait_converged(g, zk, topics, ["o1", "z1"], "the two kinds formed the group")
        assert g.members["o1"].alive(), "o1 left before the group formed: raise its seconds"
        # Thread ids sort as strings: g_o1-0, g_o1-1, g_z1-0 take two partitions each.
        assert first == {topic: {0: f"{g.name}_o1-0", 1: f"{g.name}_o1-0", 2: f"{g.name}_o1-1",
                                 3: f"{g.name}_o1-1", 4: f"{g.name}_z1-0", 5: f"{g.name}_z1-0"}}
        g.wait_all_delivered()
        assert verify_group(zk_connect, g.name).ok

        # A clean leave of the original: it commits, z1 resumes its partitions from there.
        g.members["o1"].wait_shutdown(40)
        wait_converged(g, zk, topics, ["z1"], "o1's clean leave")
        assert committed(zk, g.name, topic, 6) == {p: 3 for p in range(6)}
        g.send(topics, 2)
        delivered = g.wait_all_delivered()
        assert max(delivered.values()) == 1, "a clean hand-over delivered a message twice"

        # Joins of both kinds: partitions move from z1 to the original o2 at z1's commits.
        g.add("original", "o2")
        g.add("zkconsumer", "z2", streams=2)
        g.start("o2", "z2")
        wait_converged(g, zk, topics, ["o2", "z1", "z2"], "o2 and z2 joined")
        g.send(topics, 2)
        delivered = g.wait_all_delivered()
        assert max(delivered.values()) == 1, "a clean hand-over delivered a message twice"

        # SIGKILL of a zkconsumer member: its session expires, the others take over.
        g.members["z1"].kill()
        wait_converged(g, zk, topics, ["o2", "z2"], "z1 was SIGKILLed")
        g.send(topics, 2)
        g.wait_all_delivered()

        # An original paused past its session timeout: expired, then back with a new session.
        g.members["o2"].pause()
        try:
            wait_converged(g, zk, topics, ["z2"], "o2's session expired")
        finally:
            g.members["o2"].resume()
        wait_converged(g, zk, topics, ["o2", "z2"], "o2 came back after its expiry", hold_s=3.0)
        g.send(topics, 2)
        g.wait_all_delivered()
        wait_converged(g, zk, topics, ["o2", "z2"], "the messages were delivered", hold_s=3.0)
        assert_both_verifiers_pass(g)
    finally:
        g.close()


def test_roundrobin_wildcard_mixed_group_with_a_kill_and_a_new_topic(home, lab, zk, unique):
    zk_connect, broker = lab
    prefix = unique("rrw").replace("-", "_")
    topics = {f"{prefix}_a": 3, f"{prefix}_b": 2}
    for t, n in topics.items():
        create_topic(zk_connect, t, n, bootstrap=broker.bootstrap)
    # Java-only syntax (\Q..\E quoting, \p{Lower}): both kinds must read it as java.util.regex.
    g = Group(home, zk_connect, broker.bootstrap, unique("mixed-rr-g"), "roundrobin",
              filter=f"\\Q{prefix}_\\E\\p{{Lower}}+")
    try:
        for kind, cid in (("original", "o1"), ("zkconsumer", "z1"), ("original", "o2"),
                          ("zkconsumer", "z2")):
            g.add(kind, cid)
        g.send(topics, 2)
        g.start("o1", "z1", "o2", "z2")
        wait_converged(g, zk, topics, ["o1", "o2", "z1", "z2"], "four members joined")
        g.wait_all_delivered()

        g.members["o1"].kill()
        wait_converged(g, zk, topics, ["o2", "z1", "z2"], "o1 was SIGKILLed")
        # A new topic matching the filter joins the assignment of every member, both kinds.
        topics[f"{prefix}_c"] = 2
        create_topic(zk_connect, f"{prefix}_c", 2, bootstrap=broker.bootstrap)
        wait_converged(g, zk, topics, ["o2", "z1", "z2"], f"{prefix}_c was created")
        g.send(topics, 2)
        g.wait_all_delivered()
        assert_both_verifiers_pass(g)
    finally:
        g.close()


def test_differential_oracle_same_script_same_states_for_both_kinds(home, lab, unique):
    """Roundrobin with members on different wildcard subscriptions (Kafka 0.10.2's rule),
    a stream count of two, a clean leave, a join and a SIGKILL: the original members and the
    zkconsumer members leave the same owner znodes and offsets after every event."""
    zk_connect, broker = lab
    both = "{prefix}_(a|b)"
    script = Script(
        topics={"a": 3, "b": 2}, strategy="roundrobin", props=dict(PROPS),
        events=[Event(START, ("x",), streams=2, subscription=both),
                Event(START, ("y",), subscription="{prefix}_b", leave_after_s=8),
                Event(LEAVE, ("y",)),
                Event(START, ("z",), subscription=both),
                Event(KILL, ("x",))])
    # Both kinds play the script at once, on groups and topics of their own: the same timing.
    plays = {kind: OracleRun(kind, script, zk_connect, broker.bootstrap,
                             unique(f"oracle_{kind}").replace("-", "_"), kafka_home=home)
             for kind in ("original", "zkconsumer")}
    with ThreadPoolExecutor(2) as pool:
        futures = {kind: pool.submit(play.run) for kind, play in plays.items()}
        runs = {kind: f.result() for kind, f in futures.items()}
    assert diff_states(runs["original"], runs["zkconsumer"]) == []
    # Not vacuous: y took partitions of b only, then z shared both topics with x.
    owners_after_y = {(t, p): th for t, p, th in runs["original"][1].owners}
    assert {th for (t, _), th in owners_after_y.items() if t == "a"} <= {"x-0", "x-1"}
    assert "y-0" in owners_after_y.values()
    assert {th for _, _, th in runs["original"][-1].owners} == {"z-0"}
    assert runs["original"][-1].offsets == (("a", 0, 10), ("a", 1, 10), ("a", 2, 10),
                                            ("b", 0, 10), ("b", 1, 10))
