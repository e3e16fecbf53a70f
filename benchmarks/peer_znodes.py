"""What pykafka 2.8's BalancedConsumer writes in ZooKeeper, beside the original and zkconsumer.

Starts ZooKeeper and Apache Kafka 0.10.2.2, one topic of 4 partitions, and three groups:

* ``alone-<consumer>``: one member of each consumer alone (the original's
  ``bin/zk-consumer-member.sh``, a zkconsumer connector, a pykafka ``BalancedConsumer``), to
  record its registration znode (``/consumers/<g>/ids/<id>``) and its owner znodes
  (``/consumers/<g>/owners/<topic>/<p>``) as written;
* ``mixed-original``: an original member, then a pykafka member joining it;
* ``mixed-zkconsumer``: a zkconsumer member, then a pykafka member joining it;

and for the mixed groups, once both have had ``--settle`` seconds, which partitions each owner
znode names, and the errors each member logged. ``--results DIR`` writes ``znodes.json`` and
``meta.json`` (the raw data of docs/peers.md's section on joining an original group).

    .venv/bin/python benchmarks/peer_znodes.py --pykafka-venv DIR --results results/peers/znodes
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import pykafka_python  # noqa: E402  (the script's own folder)

TOPIC = "shared"
PARTITIONS = 4

# The pykafka member: joins, reports the partitions it holds, consumes until stdin closes.
PYKAFKA_MEMBER = r"""
import logging, sys, threading, time
logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
from pykafka import KafkaClient
from pykafka.common import OffsetType
zk, bootstrap, topic, group = sys.argv[1:5]
client = KafkaClient(hosts=bootstrap, broker_version="0.10.1")
consumer = client.topics[topic.encode()].get_balanced_consumer(
    consumer_group=group.encode(), zookeeper_connect=zk,
    auto_offset_reset=OffsetType.EARLIEST, auto_commit_enable=False, consumer_timeout_ms=200)
print("JOINED", flush=True)
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
while not stop.is_set():
    try:
        consumer.consume(block=False)
    except Exception as exc:
        print("ERROR", type(exc).__name__, exc, file=sys.stderr, flush=True)
        time.sleep(0.2)
    time.sleep(0.01)
print("HELD", sorted(getattr(p, "id", p) for p in consumer.partitions), flush=True)
consumer.stop()
"""


def tree(zk: Any, group: str) -> dict[str, Any]:
    """The group's registrations and owner znodes, data as text (bytes repr when not UTF-8)."""
    def text(data: bytes) -> str:
        try:
            return data.decode()
        except UnicodeDecodeError:
            return repr(data)

    out: dict[str, Any] = {"ids": {}, "owners": {}}
    base = f"/consumers/{group}"
    if zk.exists(f"{base}/ids"):
        for child in sorted(zk.get_children(f"{base}/ids")):
            out["ids"][child] = text(zk.get(f"{base}/ids/{child}")[0])
    if zk.exists(f"{base}/owners"):
        for topic in sorted(zk.get_children(f"{base}/owners")):
            for p in sorted(zk.get_children(f"{base}/owners/{topic}"), key=str):
                out["owners"][f"{topic}/{p}"] = text(zk.get(f"{base}/owners/{topic}/{p}")[0])
    return out


class Logged(logging.Handler):
    """The connector's warnings and errors, as the lines it logged."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname} {record.getMessage()}"[:300])


class Member:
    """One member process (original JVM or pykafka) with its output files."""

    def __init__(self, argv: list[str], log: Path) -> None:
        self.log = log
        self.out = log.with_suffix(".out")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=open(self.out, "wb"),
                                     stderr=open(log, "wb"))

    def wait_for(self, word: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if word in self.out.read_text(errors="replace"):
                return
            if self.proc.poll() is not None:
                raise SystemExit(f"member exited {self.proc.returncode}; see {self.log}")
            time.sleep(0.2)
        raise SystemExit(f"no {word!r} within {timeout} s; see {self.log}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                self.proc.wait(20)

    def errors(self) -> list[str]:
        lines = self.log.read_text(errors="replace").splitlines()
        return [x.strip()[:300] for x in lines
                if any(w in x for w in ("ERROR", "Exception", "Error"))
                and not x.startswith((" ", "\t"))][:12]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pykafka-venv", type=Path,
                        default=Path(tempfile.gettempdir()) / "zkconsumer-pykafka-venv")
    parser.add_argument("--settle", type=float, default=20.0)
    parser.add_argument("--scratch", type=Path, default=None)
    parser.add_argument("--results", type=Path, default=None)
    args = parser.parse_args(argv)
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="zkc-znodes-"))
    scratch.mkdir(parents=True, exist_ok=True)
    python, facts = pykafka_python(args.pykafka_venv)

    from kazoo.client import KazooClient

    from zkconsumer.admin import create_topic, produce
    from zkconsumer.config import ConsumerConfig
    from zkconsumer.connector import ZookeeperConsumerConnector
    from zkconsumer.testing import EmbeddedZooKeeper
    from zkconsumer.testing.kafka import KafkaBroker, find_kafka_home

    home = find_kafka_home("0.10.2")
    if home is None:
        raise SystemExit("needs Kafka 0.10.2 (../shared/kafka-0.10.2 or ZKCONSUMER_KAFKA_HOME)")
    found: dict[str, Any] = {"pykafka_venv": facts, "topic": TOPIC, "partitions": PARTITIONS}
    prov = None
    with EmbeddedZooKeeper() as server:
        broker = KafkaBroker(server.connect_string, home).start()
        zk = KazooClient(hosts=server.connect_string)
        zk.start(timeout=15)
        if args.results is not None:
            from zkconsumer.results import capture

            prov = capture("python benchmarks/peer_znodes.py " + " ".join(
                sys.argv[1:] if argv is None else argv), broker=broker.name, **facts)
        try:
            for attempt in range(5):  # a loaded machine's broker may answer partially at first
                try:
                    create_topic(server.connect_string, TOPIC, PARTITIONS,
                                 bootstrap=broker.bootstrap)
                    break
                except Exception:
                    if attempt == 4:
                        raise
                    time.sleep(5)
            produce(broker.bootstrap, TOPIC, [b"x"] * 40)

            def original(group: str, name: str) -> Member:
                return Member([str(home / "bin" / "zk-consumer-member.sh"),
                               f"zk={server.connect_string}", f"group={group}",
                               f"topic={TOPIC}", "auto.offset.reset=smallest"],
                              scratch / f"{name}.log")

            def pykafka(group: str, name: str) -> Member:
                return Member([str(python), "-c", PYKAFKA_MEMBER, server.connect_string,
                               broker.bootstrap, TOPIC, group], scratch / f"{name}.log")

            def connector(group: str) -> ZookeeperConsumerConnector:
                c = ZookeeperConsumerConnector(ConsumerConfig({
                    "zookeeper.connect": server.connect_string, "group.id": group,
                    "auto.offset.reset": "smallest", "auto.commit.enable": "false"}))
                c.create_message_streams({TOPIC: 1})
                return c

            groups: dict[str, Any] = {}
            # Each alone.
            m = original("alone-original", "alone-original")
            m.wait_for("REBALANCE_ASSIGN", 120)
            groups["alone-original"] = tree(zk, "alone-original")
            m.stop()
            c = connector("alone-zkconsumer")
            time.sleep(args.settle / 4)
            groups["alone-zkconsumer"] = tree(zk, "alone-zkconsumer")
            c.shutdown()
            m = pykafka("alone-pykafka", "alone-pykafka")
            m.wait_for("JOINED", 120)
            time.sleep(args.settle / 4)
            groups["alone-pykafka"] = tree(zk, "alone-pykafka")
            m.stop()
            # Mixed.
            first = original("mixed-original", "mixed-original-original")
            first.wait_for("REBALANCE_ASSIGN", 120)
            second = pykafka("mixed-original", "mixed-original-pykafka")
            second.wait_for("JOINED", 120)
            time.sleep(args.settle)
            groups["mixed-original"] = tree(zk, "mixed-original")
            groups["mixed-original"]["errors"] = {"original": first.errors(),
                                                  "pykafka": second.errors()}
            second.stop()
            first.stop()
            groups["mixed-original"]["held"] = {
                "pykafka": [x for x in second.out.read_text().splitlines()
                            if x.startswith("HELD")],
                "original": [x for x in first.out.read_text().splitlines()
                             if x.startswith("REBALANCE_ASSIGN")][-3:]}
            logged = Logged()
            logging.getLogger("zkconsumer").addHandler(logged)
            c = connector("mixed-zkconsumer")
            time.sleep(args.settle / 4)
            second = pykafka("mixed-zkconsumer", "mixed-zkconsumer-pykafka")
            second.wait_for("JOINED", 120)
            time.sleep(args.settle)
            groups["mixed-zkconsumer"] = tree(zk, "mixed-zkconsumer")
            second.stop()
            groups["mixed-zkconsumer"]["errors"] = {"pykafka": second.errors(),
                                                    "zkconsumer": logged.lines[:12]}
            groups["mixed-zkconsumer"]["held"] = {"pykafka": [
                x for x in second.out.read_text().splitlines() if x.startswith("HELD")]}
            c.shutdown()
            found["groups"] = groups
        finally:
            zk.stop()
            zk.close()
            broker.stop()
    print(json.dumps(found, indent=1))
    if args.results is not None and prov is not None:
        from zkconsumer.results import write_provenance

        args.results.mkdir(parents=True, exist_ok=True)
        (args.results / "znodes.json").write_text(json.dumps(found, indent=1, sort_keys=True)
                                                  + "\n")
        print(f"wrote {write_provenance(args.results, prov)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
