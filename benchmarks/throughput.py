"""Consumption throughput: the ZooKeeper consumer connector vs a bare confluent-kafka consumer.

Starts an embedded ZooKeeper and broker, produces ``--messages`` small records into one topic,
then consumes all of them, in alternating rounds, through

* ``bare``: one confluent-kafka ``Consumer`` in manual-assignment mode, all partitions assigned
  from offset 0, reading ``consume(num_messages=...)`` batches and touching every value, with
  the same librdkafka settings as the connector's fetcher threads; ``bare+pos`` also keeps each
  partition's next offset, the least an application needs to commit at-least-once itself;
* ``connector``: a ``ZookeeperConsumerConnector`` with one stream (group registration, rebalance,
  fetcher thread, chunk queue, ``KafkaStream`` iterator), touching every ``message``;
  ``--path datapath`` uses the fetcher manager and a stream without the connector (what this
  script measured before the connector existed).

Two rates are printed per path: *steady* (first message to last) and *end-to-end* (from creating
the consumer, so it includes connecting and, for the connector, registering and rebalancing).
The figure is the median over ``--rounds`` of each round's steady ratio connector / bare
(rounds run side by side, so a load swing hits both); target: that median >= 0.7. Best-of
rates are printed as an extra. Each
round also reports the CPU time the whole process spent per message in the steady phase (all
threads: librdkafka's, the fetcher's, the application's, kazoo's): on a shared machine the rates
swing with other people's load, the CPU cost much less, so ``bare/connector`` of CPU per message
is the steadier figure of the connector's own overhead.

    .venv/bin/python benchmarks/throughput.py --messages 200000 --rounds 3 [--results DIR]

``--results DIR`` writes the per-round timings (``rounds.csv``), the summary (``summary.json``)
and ``meta.json`` (command, revision, date, load), the raw data of docs/benchmarks.md.

Records are produced in ordinary batches by default: the consumers start from offset 0, so the
embedded broker's wrong ``latest`` offset for multi-record batches plays no part (the fetch
path is exact). ``--one-record-batches`` produces the way the tests do (slow on this broker).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SIZE = 100  # bytes per value
TARGET = 0.70  # connector / bare, steady, by the median of the per-round ratios
_C_PARTS: dict[str, Any] = {}  # the C parts as imported, while a run swaps them out
# (steady s, end-to-end s, CPU s of the whole process during the steady phase)
Timing = tuple[float, float, float]


def produce_batched(bootstrap: str, topic: str, n: int, partitions: int, one_per_batch: bool,
                    connections: int) -> float:
    from zkconsumer.admin import produce

    values = [b"%08d" % i + b"x" * (SIZE - 8) for i in range(n)]
    started = time.perf_counter()
    if one_per_batch:  # in slices: every record must be acknowledged within message.timeout.ms
        for start in range(0, n, 20_000):
            produce(bootstrap, topic, values[start:start + 20_000], connections=connections)
    else:
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5,
                             "queue.buffering.max.messages": 2_000_000, "log_level": 3})
        for i, value in enumerate(values):
            while True:
                try:
                    producer.produce(topic, value, partition=i % partitions)
                    break
                except BufferError:
                    producer.poll(0.01)
            if i % 10_000 == 0:
                producer.poll(0)
        if producer.flush(120):
            raise SystemExit("produce: records left unacknowledged after 120 s")
    return time.perf_counter() - started


def consume_bare(zk_connect: str, bootstrap: str, topic: str, n: int,
                 partitions: int, track_offsets: bool = False) -> Timing:
    from confluent_kafka import Consumer, TopicPartition

    from zkconsumer.config import ConsumerConfig
    from zkconsumer.datapath.fetcher import client_config

    # The very librdkafka settings the connector's fetcher threads use, so that the ratio
    # measures the connector's own layers and not a difference in client tuning.
    settings = client_config(ConsumerConfig({"zookeeper.connect": zk_connect,
                                             "group.id": "bench-bare"}), bootstrap)
    settings.pop("logger")
    started = time.perf_counter()
    consumer = Consumer({**settings, "log_level": 3})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    count = 0
    first = 0.0
    nbytes = 0
    positions: dict[int, int] = {}
    while count < n:
        for m in consumer.consume(num_messages=5000, timeout=1.0):
            if m.error() is not None:
                continue
            if not count:
                first, cpu = time.perf_counter(), time.process_time()
            nbytes += len(m.value())
            if track_offsets:  # what an at-least-once application must keep to commit
                positions[m.partition()] = m.offset() + 1
            count += 1
    end, cpu = time.perf_counter(), time.process_time() - cpu
    consumer.close()
    return end - first, end - started, cpu


def _drain(stream: Any, n: int, started: float) -> Timing:
    count = 0
    first = 0.0
    nbytes = 0
    for m in stream:
        if not count:
            first, cpu = time.perf_counter(), time.process_time()
        nbytes += len(m.message)
        count += 1
        if count >= n:
            break
    end, cpu = time.perf_counter(), time.process_time() - cpu
    return end - first, end - started, cpu


def consume_connector(zk_connect: str, topic: str, n: int, group: str,
                      pure_python: bool = False) -> Timing:
    import zkconsumer.datapath.stream
    from zkconsumer.config import ConsumerConfig
    from zkconsumer.connector import ZookeeperConsumerConnector
    from zkconsumer.datapath import fetcher_thread
    from zkconsumer.datapath import records as records_module

    # The C parts are chosen at import (records in the stream, the batch sort in the fetcher);
    # this run may ask for the pure-Python ones.
    _C_PARTS.setdefault("runs", fetcher_thread.runs_in_c)
    zkconsumer.datapath.stream.records = (records_module.py_records if pure_python
                                          else records_module.records)
    fetcher_thread.runs_in_c = None if pure_python else _C_PARTS["runs"]
    started = time.perf_counter()
    connector = ZookeeperConsumerConnector(ConsumerConfig({
        "zookeeper.connect": zk_connect, "group.id": group, "auto.offset.reset": "smallest",
        "auto.commit.enable": "false", "consumer.timeout.ms": "30000"}))
    try:
        stream = connector.create_message_streams({topic: 1})[topic][0]
        return _drain(stream, n, started)
    finally:
        connector.shutdown()


def consume_datapath(zk_connect: str, topic: str, n: int, group: str,
                     partitions: int) -> Timing:
    from kazoo.client import KazooClient

    from zkconsumer.config import ConsumerConfig
    from zkconsumer.datapath.chunks import ChunkQueue
    from zkconsumer.datapath.fetcher import FetcherManager
    from zkconsumer.datapath.position import PartitionTopicInfo
    from zkconsumer.datapath.stream import KafkaStream

    config = ConsumerConfig({"zookeeper.connect": zk_connect, "group.id": group,
                             "auto.offset.reset": "smallest", "consumer.timeout.ms": "30000"})
    zk = KazooClient(hosts=zk_connect)
    zk.start(timeout=15)
    started = time.perf_counter()
    queue = ChunkQueue(config.queued_max_message_chunks, f"{topic}-0")
    infos = [PartitionTopicInfo(topic, p, queue, -1, -1, f"{group}-0") for p in range(partitions)]
    manager = FetcherManager(config, f"{group}_bench", zk)
    try:
        manager.start_connections(infos)
        return _drain(KafkaStream(queue, config.consumer_timeout_ms), n, started)
    finally:
        manager.shutdown()
        zk.stop()
        zk.close()


def _load() -> str:
    """The machine's load average (1, 5, 15 min): the figures mean little on a busy machine."""
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--path", choices=("auto", "connector", "datapath"), default="auto",
                        help="auto: the connector if zkconsumer.connector imports, else datapath")
    parser.add_argument("--compare-pure-python", action="store_true",
                        help="also run the connector without its C parts (path conn-py), "
                             "as without a C compiler at install time")
    parser.add_argument("--one-record-batches", action="store_true",
                        help="produce one record per batch, as the tests do (slow on Tansu)")
    parser.add_argument("--producers", type=int, default=4,
                        help="producer connections for --one-record-batches")
    parser.add_argument("--results", type=Path, default=None,
                        help="write rounds.csv, summary.json and meta.json here")
    args = parser.parse_args(argv)
    prov = None
    if args.results is not None:
        from zkconsumer.results import capture

        prov = capture("python benchmarks/throughput.py " + " ".join(
            sys.argv[1:] if argv is None else argv), broker="tansu-0.6.0")

    from zkconsumer.admin import create_topic
    from zkconsumer.testing import EmbeddedBroker, EmbeddedZooKeeper

    path = args.path
    if path == "auto":
        try:
            import zkconsumer.connector  # noqa: F401
            path = "connector"
        except ImportError:
            path = "datapath"

    with EmbeddedZooKeeper() as zk, EmbeddedBroker(zk.connect_string) as broker:
        topic = "throughput"
        create_topic(zk.connect_string, topic, args.partitions, bootstrap=broker.bootstrap)
        produced_s = produce_batched(broker.bootstrap, topic, args.messages, args.partitions,
                                     args.one_record_batches, args.producers)
        print(f"produced {args.messages} x {SIZE} B into {args.partitions} partitions in "
              f"{produced_s:.1f} s ({args.messages / produced_s:,.0f} msgs/s, "
              f"{'one record' if args.one_record_batches else 'linger.ms=5'} per batch)")
        print(f"load average before consuming: {_load()}")
        from zkconsumer.datapath.records import speedups_enabled

        print("connector records built by: "
              f"{'the C extension' if speedups_enabled() else 'pure Python'}")
        paths = ["bare", "bare+pos", path]
        if args.compare_pure_python and path == "connector":
            paths.append("conn-py")
        runs: dict[str, list[Timing]] = {name: [] for name in paths}
        consumers: dict[str, Callable[[int], Timing]] = {
            "bare": lambda r: consume_bare(zk.connect_string, broker.bootstrap, topic,
                                           args.messages, args.partitions),
            "bare+pos": lambda r: consume_bare(zk.connect_string, broker.bootstrap, topic,
                                               args.messages, args.partitions, True),
            "connector": lambda r: consume_connector(zk.connect_string, topic, args.messages,
                                                     f"bench-{r}"),
            "conn-py": lambda r: consume_connector(zk.connect_string, topic, args.messages,
                                                   f"bench-py-{r}", pure_python=True),
            "datapath": lambda r: consume_datapath(zk.connect_string, topic, args.messages,
                                                   f"bench-{r}", args.partitions),
        }
        for r in range(args.rounds):
            for name in paths:
                steady, total, cpu = consumers[name](r)
                runs[name].append((steady, total, cpu))
                print(f"round {r + 1} {name:9s}: {args.messages / steady:10,.0f} msgs/s steady, "
                      f"{args.messages / total:10,.0f} msgs/s end-to-end, "
                      f"{cpu / args.messages * 1e6:5.2f} µs CPU/msg")
                sys.stdout.flush()
        median = statistics.median(b[0] / c[0] for b, c in zip(runs["bare"], runs[path],
                                                                 strict=True))
        print(f"\n{args.rounds} rounds, {args.messages} messages:")
        print(f"  median of the per-round ratios {path}/bare (steady): {median:.2f} "
              f"(target >= {TARGET:.2f}: {'met' if median >= TARGET else 'NOT met'})")
        best = {k: (min(x[0] for x in v), min(x[1] for x in v)) for k, v in runs.items()}
        print("  best of the rounds (extra):")
        for name, (steady, total) in best.items():
            print(f"    {name:9s}: {args.messages / steady:10,.0f} msgs/s steady, "
                  f"{args.messages / total:10,.0f} msgs/s end-to-end")
        print(f"    ratio {path}/bare of the best rounds: {best['bare'][0] / best[path][0]:.2f} "
              f"steady, {best['bare'][1] / best[path][1]:.2f} end-to-end")
        if "conn-py" in runs:
            py_median = statistics.median(b[0] / c[0] for b, c in zip(
                runs["bare"], runs["conn-py"], strict=True))
            print(f"  median of the per-round ratios conn-py/bare (pure Python): "
                  f"{py_median:.2f}")
        cpu_ratio = statistics.median(b[2] / c[2] for b, c in zip(runs["bare"], runs[path],
                                                                    strict=True))
        print(f"  CPU per message (median, all threads of the process, steady phase): "
              f"bare {statistics.median(x[2] for x in runs['bare']) / args.messages * 1e6:.2f} µs, "
              f"{path} {statistics.median(x[2] for x in runs[path]) / args.messages * 1e6:.2f} µs;"
              f" median per-round bare/{path}: {cpu_ratio:.2f}")
        print(f"  load average after consuming: {_load()}")
        if args.results is not None and prov is not None:
            write_results(args.results, runs, path, args, speedups_enabled(), produced_s)
            from zkconsumer.results import write_provenance

            print(f"wrote {write_provenance(args.results, prov)}")
    return 0


def write_results(folder: Path, runs: dict[str, list[Timing]], path: str,
                  args: argparse.Namespace, speedups: bool, produced_s: float) -> None:
    """Per-round timings and the run's parameters: everything the docs' table is computed from."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "rounds.csv", "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(("round", "path", "steady_s", "end_to_end_s", "cpu_s"))
        for name, timings in runs.items():
            for r, (steady, total, cpu) in enumerate(timings, 1):
                out.writerow((r, name, f"{steady:.6f}", f"{total:.6f}", f"{cpu:.6f}"))
    summary = {"messages": args.messages, "partitions": args.partitions, "rounds": args.rounds,
               "value_bytes": SIZE, "connector_path": path, "c_extension": speedups,
               "one_record_batches": args.one_record_batches, "produce_s": round(produced_s, 3),
               "target": TARGET, "statistic": "median of per-round steady ratios"}
    (folder / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    sys.exit(main())
