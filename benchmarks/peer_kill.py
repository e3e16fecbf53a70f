"""A SIGKILL of one member of a consuming group: pykafka 2.8 beside zkconsumer.

Starts ZooKeeper and Apache Kafka 0.10.2.2. Per consumer kind and repeat, a fresh topic of
``--partitions`` partitions and a fresh group; a producer in the harness writes ``--rate``
records a second round-robin over the partitions (acks=all, every acknowledged offset kept)
from before the members start until ``--after`` seconds past the group's recovery. ``--members``
members start one after the other, each in a process of its own (pykafka in its own virtualenv,
as benchmarks/peers.py makes it), and append every record they deliver to a log of their own
(``<unix time> <partition> <offset>``, line by line). Once the group is stable and has consumed
``--before`` seconds, the first member is SIGKILLed; the harness polls the group's znodes every
100 ms (registrations and owner znodes, with the time) throughout. After the producer stops,
the live members get up to ``--drain`` seconds to deliver everything acknowledged, then their
stdin is closed (each shuts down cleanly).

Both kinds run with a 6 s ZooKeeper session timeout (zkconsumer
``zookeeper.session.timeout.ms=6000``; pykafka ``zookeeper_connection_timeout_ms=6000``, which it
passes to kazoo as the session timeout) and auto-commit every 1 s
(``auto.commit.interval.ms=1000``; ``auto_commit_interval_ms=1000``), from the earliest offset.

Per run (zkconsumer.results.peer_kill): duplicates, lost records, double ownership, time from
the kill to the first instant of ``--quiet`` seconds in which every partition has one owner
znode naming a live member and nothing changes, and for each survivor's partition whose owner
znode stopped naming it after the kill, how long it went on delivering that partition; a pykafka
member also logs every partition it puts in a fetch request (``Broker.fetch_messages``
wrapped in the member's own script), so for pykafka the same is measured for fetching. The
same again for every owner znode that moved before the kill, while the members joined.
``--results DIR`` writes ``runs.json`` and ``meta.json``.

    .venv/bin/python benchmarks/peer_kill.py --repeats 4 --results results/peers/kill
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peer_herd import KINDS, Poller, stable_view  # noqa: E402  (the script's own folder)
from peers import pykafka_python  # noqa: E402

from zkconsumer.results.peer_kill import (  # noqa: E402
    OwnerView,
    Release,
    double_ownership,
    parse_deliveries,
    releases,
    releases_before,
    tally,
)

SESSION_MS = 6000
COMMIT_MS = 1000

# argv: zk bootstrap topic group log session_ms commit_ms. Delivers until stdin closes.
ZKCONSUMER_MEMBER = r"""
import sys, threading, time
from zkconsumer.config import ConsumerConfig
from zkconsumer.connector import ZookeeperConsumerConnector
from zkconsumer.errors import ConsumerTimeoutException
zk, bootstrap, topic, group, log, session_ms, commit_ms = sys.argv[1:8]
c = ZookeeperConsumerConnector(ConsumerConfig({"zookeeper.connect": zk, "group.id": group,
    "auto.offset.reset": "smallest", "auto.commit.enable": "true",
    "auto.commit.interval.ms": commit_ms, "zookeeper.session.timeout.ms": session_ms,
    "consumer.timeout.ms": "200"}))
it = iter(c.create_message_streams({topic: 1})[topic][0])
out = open(log, "w", buffering=1)
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
while not stop.is_set():
    try:
        m = next(it)
    except ConsumerTimeoutException:
        continue
    out.write(f"{time.time():.4f} {m.partition} {m.offset}\n")
c.shutdown()
"""

PYKAFKA_MEMBER = r"""
import logging, sys, threading, time
logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
from pykafka import KafkaClient
from pykafka.broker import Broker
from pykafka.common import OffsetType
zk, bootstrap, topic, group, log, session_ms, commit_ms = sys.argv[1:8]
fetches = open(log + ".fetches", "w", buffering=1)
send_fetch = Broker.fetch_messages
def logged_fetch(self, partition_requests, *args, **kwargs):
    t = time.time()
    for r in partition_requests:
        fetches.write(f"{t:.4f} {r.partition_id} {r.offset}\n")
    return send_fetch(self, partition_requests, *args, **kwargs)
Broker.fetch_messages = logged_fetch
client = KafkaClient(hosts=bootstrap, broker_version="0.10.1")
consumer = client.topics[topic.encode()].get_balanced_consumer(
    consumer_group=group.encode(), zookeeper_connect=zk,
    auto_offset_reset=OffsetType.EARLIEST, auto_commit_enable=True,
    auto_commit_interval_ms=int(commit_ms), zookeeper_connection_timeout_ms=int(session_ms),
    consumer_timeout_ms=200)
out = open(log, "w", buffering=1)
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
while not stop.is_set():
    try:
        m = consumer.consume(block=True)
    except Exception as exc:
        print("ERROR", type(exc).__name__, exc, file=sys.stderr, flush=True)
        time.sleep(0.2)
        continue
    if m is not None:
        out.write(f"{time.time():.4f} {m.partition_id} {m.offset}\n")
consumer.stop()
"""


class Producer(threading.Thread):
    """``rate`` records a second, round-robin over the partitions; acknowledged offsets kept."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, rate: float) -> None:
        super().__init__(daemon=True)
        from confluent_kafka import Producer as Client

        self.client = Client({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
        self.topic, self.partitions, self.rate = topic, partitions, rate
        self.acked: list[tuple[int, int]] = []
        self.failed = 0
        self.stopping = threading.Event()

    def _done(self, err: Any, msg: Any) -> None:
        if err is None:
            self.acked.append((msg.partition(), msg.offset()))
        else:
            self.failed += 1

    def run(self) -> None:
        n = 0
        start = time.perf_counter()
        while not self.stopping.is_set():
            self.client.produce(self.topic, b"x" * 100, partition=n % self.partitions,
                                on_delivery=self._done)
            n += 1
            self.client.poll(0)
            self.stopping.wait(max(0.0, start + n / self.rate - time.perf_counter()))
        self.client.flush(30)


class Tracker(threading.Thread):
    """The group's registrations and owner znodes every 100 ms, with the unix time."""

    def __init__(self, poll: Poller) -> None:
        super().__init__(daemon=True)
        self.poll = poll
        self.samples: list[tuple[float, frozenset[str], dict[str, str | None]]] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            ids, owners = self.poll.owners()
            self.samples.append((time.time(), ids, owners))
            self.stopping.wait(0.1)


def owner_of(data: str | None, names: dict[str, str]) -> str:
    """The member name an owner znode's data names (an id, or an id plus ``-<thread>``)."""
    for zk_id, name in names.items():
        if data is not None and (data == zk_id or data.startswith(zk_id + "-")):
            return name
    return f"?{data}"


def views(samples: list[tuple[float, frozenset[str], dict[str, str | None]]],
          names: dict[str, str]) -> list[OwnerView]:
    """Samples as (time, partition -> member name); a pykafka owner znode's name is
    ``<leader>-<partition>``, zkconsumer's ``<partition>``."""
    return [(t, {int(key.rsplit("/", 1)[1].rsplit("-", 1)[-1]): owner_of(v, names)
                 for key, v in owners.items()}) for t, _, owners in samples]


def wait_stable(tracker: Tracker, partitions: int, members: int, quiet: float,
                timeout: float, since_t: float) -> float | None:
    """The unix time the final stable stretch (after ``since_t``) began, or None."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        since: float | None = None
        last: dict[str, str | None] | None = None
        for t, ids, owners in list(tracker.samples):
            if t < since_t:
                continue
            if stable_view(ids, owners, partitions, members):
                if owners != last:
                    since, last = t, owners
            else:
                since, last = None, None
        if since is not None and tracker.samples[-1][0] - since >= quiet:
            return since
        time.sleep(0.2)
    return None


def max_lag(rel: list[Release]) -> float | None:
    lags = [r.lag for r in rel if r.lag is not None]
    return round(max(lags), 3) if lags else None


def one_run(args: argparse.Namespace, kind: str, rep: int, zk_connect: str, bootstrap: str,
            zk: Any, python: Path, scratch: Path) -> dict[str, Any]:
    from zkconsumer.admin import create_topic

    topic = group = f"kill-{kind}-{rep}"
    for attempt in range(5):
        try:
            create_topic(zk_connect, topic, args.partitions, bootstrap=bootstrap)
            break
        except Exception:
            if attempt == 4:
                raise
            time.sleep(5)
    producer = Producer(bootstrap, topic, args.partitions, args.rate)
    producer.start()
    tracker = Tracker(Poller(zk, group))
    tracker.start()
    code = PYKAFKA_MEMBER if kind == "pykafka" else ZKCONSUMER_MEMBER
    procs: dict[str, subprocess.Popen[bytes]] = {}
    names: dict[str, str] = {}
    logs: dict[str, Path] = {}
    try:
        for i in range(1, args.members + 1):
            name = f"m{i}"
            logs[name] = scratch / f"{group}-{name}.deliveries"
            err = open(scratch / f"{group}-{name}.log", "wb")
            procs[name] = subprocess.Popen(
                [str(python), "-c", code, zk_connect, bootstrap, topic, group,
                 str(logs[name]), str(SESSION_MS), str(COMMIT_MS)],
                stdin=subprocess.PIPE, stdout=err, stderr=err)
            deadline = time.monotonic() + args.timeout
            while time.monotonic() < deadline:  # the new registration is this member's
                new = set(tracker.samples[-1][1]) - set(names) if tracker.samples else set()
                if new:
                    names[new.pop()] = name
                    break
                time.sleep(0.1)
            else:
                raise SystemExit(f"{name} did not register (its log: {Path(err.name).name})")
        formed = wait_stable(tracker, args.partitions, args.members, args.quiet, args.timeout,
                             0.0)
        if formed is None:
            raise SystemExit(f"{group} never stable with {args.members} members")
        time.sleep(args.before)
        victim = "m1"
        os.kill(procs[victim].pid, signal.SIGKILL)
        killed_at = time.time()
        procs[victim].wait()
        stable = wait_stable(tracker, args.partitions, args.members - 1, args.quiet,
                             args.timeout, killed_at)
        time.sleep(args.after)
        producer.stopping.set()
        producer.join()
        acked = set(producer.acked)
        live = [n for n in procs if n != victim]
        deadline = time.monotonic() + args.drain
        while time.monotonic() < deadline:
            got = {(p, o) for n in logs if logs[n].exists()
                   for _, p, o in parse_deliveries(logs[n].read_text())}
            if acked <= got:
                break
            time.sleep(0.5)
        for n in live:
            assert procs[n].stdin is not None
            procs[n].stdin.close()
        for n in live:
            try:
                procs[n].wait(30)
            except subprocess.TimeoutExpired:
                procs[n].kill()
    finally:
        producer.stopping.set()
        tracker.stopping.set()
        for p in procs.values():
            if p.poll() is None:
                p.kill()
    tracker.join()
    deliveries = {n: parse_deliveries(logs[n].read_text()) if logs[n].exists() else []
                  for n in logs}
    owned = views(tracker.samples, names)
    (scratch / f"{group}.views.json").write_text(json.dumps(
        {"killed_at": killed_at, "names": names, "views": owned}))
    figures = tally(deliveries, producer.acked, owned, killed_at, live, args.gap)
    rel = releases(owned, deliveries, killed_at, live)
    fetch_logs = {n: Path(f"{logs[n]}.fetches") for n in live}
    fetched = {n: parse_deliveries(f.read_text()) for n, f in fetch_logs.items() if f.exists()}
    fetch_rel = releases(owned, fetched, killed_at, fetched) if fetched else []
    fetch_lags = [r.lag for r in fetch_rel if r.lag is not None]
    every_fetch = {n: parse_deliveries(f.read_text()) for n in logs
                   if (f := Path(f"{logs[n]}.fetches")).exists()}
    joining = releases_before(owned, deliveries, killed_at, logs)
    join_fetch = releases_before(owned, every_fetch, killed_at, every_fetch)
    return {"kind": kind, "repeat": rep, "members": args.members,
            "partitions": args.partitions, "rate": args.rate,
            "stable_s": None if stable is None else round(stable - killed_at, 3),
            "killed_delivered": len(deliveries[victim]),
            "produce_failed": producer.failed, **figures.as_dict(),
            "double_by_partition": {str(p): round(s, 3) for p, s in double_ownership(
                deliveries, args.gap, (killed_at, float("inf"))).items()},
            "fetch_logged": bool(fetched),
            "fetched_after_release": (sum(r.delivered_after for r in fetch_rel)
                                      if fetched else None),
            "max_fetch_lag_s": round(max(fetch_lags), 3) if fetch_lags else None,
            "fetch_releases": [{"member": r.member, "partition": r.partition,
                                "lag_s": None if r.lag is None else round(r.lag, 3),
                                "fetches_after": r.delivered_after} for r in fetch_rel],
            "join": {"released": len(joining),
                     "delivered_after_release": sum(r.delivered_after for r in joining),
                     "max_release_lag_s": max_lag(joining),
                     "fetched_after_release": (sum(r.delivered_after for r in join_fetch)
                                               if every_fetch else None),
                     "max_fetch_lag_s": max_lag(join_fetch)},
            "releases": [{"member": r.member, "partition": r.partition,
                          "lag_s": None if r.lag is None else round(r.lag, 3),
                          "delivered_after": r.delivered_after} for r in rel]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rate", type=float, default=200.0, help="records a second")
    parser.add_argument("--before", type=float, default=5.0,
                        help="seconds of stable consumption before the kill")
    parser.add_argument("--after", type=float, default=5.0,
                        help="seconds of producing after the group is stable again")
    parser.add_argument("--drain", type=float, default=60.0)
    parser.add_argument("--gap", type=float, default=1.0,
                        help="a member's pause in a partition's deliveries that ends a run")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--quiet", type=float, default=3.0)
    parser.add_argument("--timeout", type=float, default=180.0)
    parser.add_argument("--pykafka-venv", type=Path,
                        default=Path(tempfile.gettempdir()) / "zkconsumer-pykafka-venv")
    parser.add_argument("--scratch", type=Path, default=None)
    parser.add_argument("--results", type=Path, default=None)
    args = parser.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    if set(kinds) - set(KINDS):
        parser.error(f"--kinds: one of {', '.join(KINDS)}, not {args.kinds!r}")
    if args.members < 2:
        parser.error(f"--members: at least 2 (one is killed), not {args.members}")
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="zkc-kill-"))
    scratch.mkdir(parents=True, exist_ok=True)
    pk_python, facts = pykafka_python(args.pykafka_venv)

    from kazoo.client import KazooClient

    from zkconsumer.testing import EmbeddedZooKeeper
    from zkconsumer.testing.kafka import KafkaBroker, find_kafka_home

    home = find_kafka_home("0.10.2")
    if home is None:
        raise SystemExit("needs Kafka 0.10.2 (../shared/kafka-0.10.2 or ZKCONSUMER_KAFKA_HOME)")
    rows: list[dict[str, Any]] = []
    prov = None
    with EmbeddedZooKeeper() as server:
        broker = KafkaBroker(server.connect_string, home).start()
        zk = KazooClient(hosts=server.connect_string)
        zk.start(timeout=15)
        if args.results is not None:
            from zkconsumer.results import capture

            prov = capture("python benchmarks/peer_kill.py " + " ".join(
                sys.argv[1:] if argv is None else argv), broker=broker.name,
                session_timeout_ms=SESSION_MS, auto_commit_interval_ms=COMMIT_MS, **facts)
        try:
            for rep in range(1, args.repeats + 1):
                for kind in kinds:  # alternate, so that load swings hit both kinds
                    python = pk_python if kind == "pykafka" else Path(sys.executable)
                    try:
                        row = one_run(args, kind, rep, server.connect_string, broker.bootstrap,
                                      zk, python, scratch)
                    except (SystemExit, Exception) as exc:  # recorded, the others go on
                        row = {"kind": kind, "repeat": rep,
                               "failed": f"{type(exc).__name__}: {exc}"}
                    rows.append(row)
                    print(json.dumps({k: v for k, v in row.items()
                                      if k not in ("releases", "double_by_partition",
                                                   "fetch_releases")}),
                          flush=True)
        finally:
            zk.stop()
            zk.close()
            broker.stop()
    if args.results is not None and prov is not None:
        from zkconsumer.results import write_provenance

        args.results.mkdir(parents=True, exist_ok=True)
        settings = {k: getattr(args, k) for k in ("members", "partitions", "repeats", "rate",
                                                  "before", "after", "drain", "gap", "quiet")}
        (args.results / "runs.json").write_text(json.dumps(
            {"settings": settings, "runs": rows}, indent=1, sort_keys=True) + "\n")
        print(f"wrote {write_provenance(args.results, prov)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
