"""Joins one at a time: ZooKeeper requests and time to stable, pykafka 2.8 beside zkconsumer.

Starts ZooKeeper and Apache Kafka 0.10.2.2, one topic of ``--partitions`` partitions, and for
each consumer kind a fresh group that ``--members`` members join one after the other, each in a
process of its own (pykafka in its own virtualenv, as benchmarks/peers.py makes it). Per join:

* **requests**: what the ZooKeeper server received from the member starting to the group being
  stable (``mntr``'s ``zk_packets_received``, less the ``mntr`` packets, the harness's own
  reads, the new session's connect and the pings estimated over a quiet window before the
  join: ``zkconsumer.lab.mntr``);
* **time to stable**: from starting the member's process to the first instant of a stretch of
  ``--quiet`` seconds in which every partition has exactly one owner znode naming a registered
  member and the owners do not change (the harness polls the group's znodes every 100 ms).

Joins are timed from process start, so they include the interpreter's start and imports
(pykafka's and zkconsumer's alike). ``--results DIR`` writes ``joins.csv`` and ``meta.json``.

    .venv/bin/python benchmarks/peer_herd.py --members 4 --results results/peers/herd
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peer_znodes import PYKAFKA_MEMBER  # noqa: E402  (the script's own folder)
from peers import pykafka_python  # noqa: E402

TOPIC = "herd"
KINDS = ("zkconsumer", "pykafka")

# A zkconsumer member: one stream, consumes until stdin closes.
ZKCONSUMER_MEMBER = r"""
import sys, threading
from zkconsumer.config import ConsumerConfig
from zkconsumer.connector import ZookeeperConsumerConnector
from zkconsumer.errors import ConsumerTimeoutException
zk, bootstrap, topic, group = sys.argv[1:5]
c = ZookeeperConsumerConnector(ConsumerConfig({"zookeeper.connect": zk, "group.id": group,
    "auto.offset.reset": "smallest", "auto.commit.enable": "false",
    "consumer.timeout.ms": "200"}))
it = iter(c.create_message_streams({topic: 1})[topic][0])
print("JOINED", flush=True)
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
while not stop.is_set():
    try:
        next(it)
    except ConsumerTimeoutException:
        pass
c.shutdown()
"""


class Poller:
    """The harness's reads of the group's znodes, counted (the server counts them too)."""

    def __init__(self, zk: Any, group: str) -> None:
        self.zk = zk
        self.base = f"/consumers/{group}"
        self.requests = 0

    def _children(self, path: str) -> list[str]:
        self.requests += 1
        try:
            return list(self.zk.get_children(path))
        except Exception:
            return []

    def _get(self, path: str) -> str | None:
        self.requests += 1
        try:
            return self.zk.get(path)[0].decode(errors="replace")
        except Exception:
            return None

    def owners(self) -> tuple[frozenset[str], dict[str, str | None]]:
        """Registered member ids and owner znode -> data (every topic level under owners/)."""
        ids = frozenset(self._children(f"{self.base}/ids"))
        owners: dict[str, str | None] = {}
        for level in self._children(f"{self.base}/owners"):
            for child in self._children(f"{self.base}/owners/{level}"):
                owners[f"{level}/{child}"] = self._get(f"{self.base}/owners/{level}/{child}")
        return ids, owners


def stable_view(ids: frozenset[str], owners: dict[str, str | None], partitions: int,
                members: int) -> bool:
    """Every partition owned once, and every one of ``members`` registered members owning some
    (an owner's data is a member id, or a member id plus ``-<thread>``): with at least as many
    partitions as members, both kinds' assignments give each member one or more, so a view
    where the newcomer owns nothing yet is not the end of its join."""
    if len(ids) != members or len(owners) != partitions:
        return False
    parts = {key.rsplit("/", 1)[1].rsplit("-", 1)[-1] for key in owners}
    holders = set()
    for v in owners.values():
        holder = next((i for i in ids if v is not None and (v == i or v.startswith(i + "-"))),
                      None)
        if holder is None:
            return False
        holders.add(holder)
    return len(parts) == partitions and holders == ids


def wait_stable(poll: Poller, partitions: int, members: int, quiet: float,
                timeout: float) -> float | None:
    """The instant (perf_counter) the final stable stretch began, or None on timeout."""
    deadline = time.perf_counter() + timeout
    since: float | None = None
    last: dict[str, str | None] | None = None
    while time.perf_counter() < deadline:
        now = time.perf_counter()
        ids, owners = poll.owners()
        if stable_view(ids, owners, partitions, members):
            if owners != last:
                since, last = now, owners
            elif since is not None and now - since >= quiet:
                return since
        else:
            since, last = None, None
        time.sleep(0.1)
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", type=int, default=4)
    parser.add_argument("--partitions", type=int, default=8)
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
        parser.error(f"--kinds: one of {', '.join(KINDS)}")
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="zkc-herd-"))
    scratch.mkdir(parents=True, exist_ok=True)
    pk_python, facts = pykafka_python(args.pykafka_venv)

    from kazoo.client import KazooClient

    from zkconsumer.admin import create_topic
    from zkconsumer.lab.mntr import measure_ping_rate, read_mntr, server_requests
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

            prov = capture("python benchmarks/peer_herd.py " + " ".join(
                sys.argv[1:] if argv is None else argv), broker=broker.name, **facts)
        procs: list[subprocess.Popen[bytes]] = []
        try:
            for attempt in range(5):
                try:
                    create_topic(server.connect_string, TOPIC, args.partitions,
                                 bootstrap=broker.bootstrap)
                    break
                except Exception:
                    if attempt == 4:
                        raise
                    time.sleep(5)
            for kind in kinds:
                group = f"herd-{kind}"
                poll = Poller(zk, group)
                python = pk_python if kind == "pykafka" else Path(sys.executable)
                code = PYKAFKA_MEMBER if kind == "pykafka" else ZKCONSUMER_MEMBER
                for n in range(1, args.members + 1):
                    pings = measure_ping_rate(server.connect_string, 3.0)
                    before = read_mntr(server.connect_string)
                    poll.requests = 0
                    started = time.perf_counter()
                    log = open(scratch / f"{kind}-{n}.log", "wb")
                    procs.append(subprocess.Popen(
                        [str(python), "-c", code, server.connect_string, broker.bootstrap,
                         TOPIC, group], stdin=subprocess.PIPE, stdout=log, stderr=log))
                    stable_at = wait_stable(poll, args.partitions, n, args.quiet, args.timeout)
                    after = read_mntr(server.connect_string)
                    reqs = server_requests(before, after, pings, sessions_opened=1)
                    row = {"kind": kind, "members": n, "partitions": args.partitions,
                           "stable_s": (None if stable_at is None
                                        else round(stable_at - started, 3)),
                           "requests": max(reqs.requests - poll.requests, 0),
                           "harness_reads": poll.requests,
                           "pings_estimated": round(reqs.pings_estimated, 1),
                           "watch_notifications": reqs.watch_notifications,
                           "window_s": round(reqs.window_s, 3)}
                    rows.append(row)
                    print(row, flush=True)
                for p in procs:
                    if p.poll() is None and p.stdin is not None:
                        p.stdin.close()
                for p in procs:
                    try:
                        p.wait(30)
                    except subprocess.TimeoutExpired:
                        p.kill()
                procs.clear()
        finally:
            for p in procs:
                p.kill()
            zk.stop()
            zk.close()
            broker.stop()
    if args.results is not None and prov is not None:
        from zkconsumer.results import write_provenance

        args.results.mkdir(parents=True, exist_ok=True)
        with open(args.results / "joins.csv", "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
        print(f"wrote {write_provenance(args.results, prov)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
