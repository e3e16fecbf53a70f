"""Peer throughput: the original ZooKeeper consumer, zkconsumer, pykafka and a bare client, one run.

One broker per run (``--broker kafka-0.10.2``: Apache Kafka 0.10.2.2 from ``../shared``;
``--broker tansu``: the embedded Tansu), one topic of ``--partitions`` partitions holding
``--messages`` values of 100 bytes, produced in ordinary batches. Then ``--rounds`` rounds; in
each, every consumer reads the topic from the start in a fresh process and a fresh group, one
stream, touching every value; the order of the consumers rotates from round to round so that
none always runs first or last:

* ``original``: Kafka 0.10.2.2's ``kafka.tools.ConsumerPerformance --zookeeper`` (the Scala
  ``ZookeeperConsumerConnector``, ``--threads 1``); its own report gives the steady span (from
  starting its stream thread, one second after creating the streams, to the last message); its
  CPU over that span is read from the JVM's threads every few milliseconds;
* ``zkconsumer``: this project's connector, one stream (benchmarks/peer_child.py);
* ``pykafka`` and ``pykafka-rdkafka``: pykafka 2.8's ``BalancedConsumer``, pure Python and
  with its librdkafka extension (``use_rdkafka=True``), in a virtualenv of their own
  (``--pykafka-venv``, created on first use with ``pip install pykafka==2.8.0``: pykafka pins
  kazoo 2.5.0, never a dependency of the connector); they are slow, so they read the first
  ``--slow-messages`` records only (their rate is first to last of those);
* ``bare``: one confluent-kafka ``Consumer``, all partitions assigned from offset 0,
  ``consume(num_messages=5000)`` batches, the connector's librdkafka settings.

Printed: per round each consumer's steady msgs/s and CPU µs per message (the whole process, all
threads); then per consumer the median and range over rounds of its rate, its CPU per message
and its per-round ratios to the original and to bare. ``--results DIR`` writes ``rounds.csv``,
``summary.json`` and ``meta.json`` (the raw data of docs/peers.md).

    .venv/bin/python benchmarks/peers.py --broker kafka-0.10.2 --messages 1000000 --rounds 3 \\
        --results results/benchmarks/peers-kafka-0.10.2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from throughput import SIZE, produce_batched  # noqa: E402  (the script's own folder)

from zkconsumer.results.peer_throughput import (  # noqa: E402
    PEERS,
    RoundResult,
    interpolate,
    parse_consumer_performance,
    rounds_csv,
    summarise,
)

HERE = Path(__file__).resolve().parent
CHILD = HERE / "peer_child.py"
JAVA_DRIVER = HERE / "java" / "OriginalStream.java"
PYKAFKA = "pykafka==2.8.0"
SLOW = ("pykafka", "pykafka-rdkafka")
BEFORE_SUFFIX = "-before"


def pykafka_python(venv: Path) -> tuple[Path, dict[str, object]]:
    """The pykafka virtualenv's interpreter (creating the virtualenv when missing) and what it
    holds: pykafka's and kazoo's versions, and whether the librdkafka extension imports
    (pykafka builds it at install only where librdkafka's headers are, e.g. Debian's
    ``librdkafka-dev``)."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", PYKAFKA], check=True)
    probe = ("import json, pykafka, kazoo.version as k\n"
             "try:\n from pykafka.rdkafka import _rd_kafka; ext = True\n"
             "except ImportError:\n ext = False\n"
             "print(json.dumps({'pykafka': pykafka.__version__, 'kazoo': k.__version__, "
             "'rdkafka_extension': ext}))")
    out = subprocess.run([str(python), "-c", probe], check=True, capture_output=True, text=True)
    return python, json.loads(out.stdout.strip().splitlines()[-1])


def _cpu_of(pid: int) -> float:
    """CPU seconds of every thread of ``pid`` so far (schedstat: nanoseconds on CPU)."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat") as fh:
                    total += int(fh.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        pass
    return total / 1e9


class ShortRead(Exception):
    """ConsumerPerformance stopped early: it sets ``consumer.timeout.ms=1000`` itself, so a
    rebalance slower than its one-second pause plus one second (a loaded machine) ends the run
    with what it had read."""


ORIGINAL_TRIES = 4


def run_original(home: Path, zk: str, topic: str, n: int, group: str,
                 log: Path) -> tuple[float, float, float]:
    """(steady s, CPU s over it, end-to-end s) of one ConsumerPerformance run."""
    argv = [str(home / "bin" / "kafka-run-class.sh"), "kafka.tools.ConsumerPerformance",
            "--zookeeper", zk, "--topic", topic, "--messages", str(n), "--group", group,
            "--threads", "1"]
    samples: list[tuple[float, float]] = []
    started = time.perf_counter()
    with open(log, "ab") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err)
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                samples.append((time.time(), _cpu_of(proc.pid)))
                done.wait(0.005)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        out, _ = proc.communicate(timeout=600)
        done.set()
        sampler.join()
    total = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"ConsumerPerformance exited {proc.returncode}; its log: {log}")
    with open(log, "a") as fh:
        fh.write(out.decode())
    line = parse_consumer_performance(out.decode())
    if line.messages < n:
        raise ShortRead(f"ConsumerPerformance read {line.messages} of {n} messages")
    cpu = interpolate(samples, line.end) - interpolate(samples, line.start)
    return line.elapsed, cpu, total


def original_stream_argv(home: Path, zk: str, topic: str, n: int, group: str) -> list[str]:
    """java/OriginalStream.java on Kafka 0.10.2's classpath, with its JVM flags and client
    logging (``bin/env.sh``), by Java's single-file source launcher."""
    script = ('. "$1/bin/env.sh"; shift; exec java $KAFKA_JVM '
              '-Dlog4j.configuration="file:$KAFKA_HOME/conf/log4j-client.properties" '
              '-cp "$KAFKA_CP" "$@"')
    return ["bash", "-c", script, "original-stream", str(home), str(JAVA_DRIVER), zk, topic,
            str(n), group]


def run_result(argv: list[str], peer: str, log: Path,
               env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """(steady s, CPU s over it, end-to-end s) from a consumer that prints a RESULT line."""
    started = time.perf_counter()
    with open(log, "ab") as err:
        out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=err, timeout=900, env=env)
    total = time.perf_counter() - started
    lines = [x for x in out.stdout.decode().splitlines() if x.startswith("RESULT ")]
    if out.returncode != 0 or not lines:
        raise SystemExit(f"{peer} exited {out.returncode} without a result; its log: {log}")
    result = json.loads(lines[-1][len("RESULT "):])
    return float(result["steady_s"]), float(result["cpu_s"]), total


def run_child(python: Path, peer: str, zk: str, bootstrap: str, topic: str, n: int,
              partitions: int, group: str, log: Path,
              checkout: Path | None = None) -> tuple[float, float, float]:
    """(steady s, CPU s over it, end-to-end s) of one peer_child.py run; ``checkout``: the
    zkconsumer package it imports comes from there (an earlier revision's checkout)."""
    env = None
    if checkout is not None:
        env = {**os.environ, "PYTHONPATH": str(checkout)}
        peer = peer.removesuffix(BEFORE_SUFFIX)
    argv = [str(python), str(CHILD), peer, "--zookeeper", zk, "--bootstrap", bootstrap,
            "--topic", topic, "--messages", str(n), "--partitions", str(partitions),
            "--group", group]
    return run_result(argv, peer, log, env)


def rotated(peers: list[str], r: int) -> list[str]:
    k = r % len(peers)
    return peers[k:] + peers[:k]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--broker", choices=("kafka-0.10.2", "tansu"), default="kafka-0.10.2")
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--slow-messages", type=int, default=200_000,
                        help="records the pykafka peers read (a prefix of the topic)")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--peers", default=",".join(p for p in PEERS
                                                   if not p.endswith(BEFORE_SUFFIX)),
                        help=f"comma-separated, of {', '.join(PEERS)}")
    parser.add_argument("--pykafka-venv", type=Path,
                        default=Path(tempfile.gettempdir()) / "zkconsumer-pykafka-venv",
                        help="pykafka's own virtualenv (created when missing)")
    parser.add_argument("--before", type=Path, default=None,
                        help="a checkout of an earlier revision (its C extension built): adds "
                             "zkconsumer-before, the connector as that revision has it, to "
                             "every round, for a before/after measured side by side")
    parser.add_argument("--scratch", type=Path, default=None,
                        help="folder for the consumers' logs (default: a temporary one)")
    parser.add_argument("--results", type=Path, default=None,
                        help="write rounds.csv, summary.json and meta.json here")
    args = parser.parse_args(argv)
    peers = [p for p in args.peers.split(",") if p]
    unknown = [p for p in peers if p not in PEERS or p.endswith(BEFORE_SUFFIX)]
    if unknown:
        parser.error(f"--peers: unknown {unknown}; known: {', '.join(PEERS)}")
    if args.before is not None:
        peers.insert(peers.index("zkconsumer") + 1 if "zkconsumer" in peers else 0,
                     "zkconsumer" + BEFORE_SUFFIX)
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="zkc-peers-"))
    scratch.mkdir(parents=True, exist_ok=True)

    from zkconsumer.testing import EmbeddedBroker, EmbeddedZooKeeper
    from zkconsumer.testing.kafka import KafkaBroker, find_kafka_home

    home = find_kafka_home("0.10.2")
    if {"original", "original-stream"} & set(peers) and home is None:
        raise SystemExit("the original's ConsumerPerformance needs Kafka 0.10.2 "
                         "(../shared/kafka-0.10.2 or ZKCONSUMER_KAFKA_HOME)")
    extra: dict[str, object] = {"peers": peers}
    if args.before is not None:  # an exported tree names its revision in REVISION
        from zkconsumer.results.provenance import git_revision

        mark = args.before / "REVISION"
        extra["before_revision"] = (mark.read_text().strip() if mark.exists()
                                    else git_revision(args.before))
    pk_python = None
    if any(p in SLOW for p in peers):
        pk_python, facts = pykafka_python(args.pykafka_venv)
        extra["pykafka_venv"] = facts
        if "pykafka-rdkafka" in peers and not facts["rdkafka_extension"]:
            print("pykafka's librdkafka extension did not build: pykafka-rdkafka left out")
            peers.remove("pykafka-rdkafka")
    import confluent_kafka

    extra["confluent_kafka"] = confluent_kafka.__version__
    extra["librdkafka"] = confluent_kafka.libversion()[0]

    with EmbeddedZooKeeper() as zk:
        if args.broker == "tansu":
            broker: EmbeddedBroker | KafkaBroker = EmbeddedBroker(zk.connect_string)
            broker.start()
            broker_name = "tansu-0.6.0"
        else:
            if home is None:
                raise SystemExit("--broker kafka-0.10.2 needs ../shared/kafka-0.10.2")
            broker = KafkaBroker(zk.connect_string, home).start()
            broker_name = broker.name
        prov = None
        if args.results is not None:
            from zkconsumer.results import capture

            prov = capture("python benchmarks/peers.py " + " ".join(
                sys.argv[1:] if argv is None else argv), broker=broker_name, **extra)
        try:
            results = measure(args, peers, zk.connect_string, broker.bootstrap, home,
                              pk_python, scratch)
        finally:
            broker.stop()
    report(results)
    if args.results is not None and prov is not None:
        from zkconsumer.results import write_provenance

        args.results.mkdir(parents=True, exist_ok=True)
        (args.results / "rounds.csv").write_text(rounds_csv(results))
        summary = {"messages": args.messages, "slow_messages": args.slow_messages,
                   "partitions": args.partitions, "rounds": args.rounds, "value_bytes": SIZE,
                   "broker": args.broker, "streams": 1, "left_out": args.skipped,
                   "statistic": "median and range of per-round steady ratios"}
        (args.results / "summary.json").write_text(json.dumps(summary, indent=1,
                                                              sort_keys=True) + "\n")
        print(f"wrote {write_provenance(args.results, prov)}")
    return 0


class PassFailed(Exception):
    """One consumer's pass gave no result (the reason names its log)."""


def one_pass(args: argparse.Namespace, peer: str, zk: str, bootstrap: str, topic: str, n: int,
             group: str, log: Path, home: Path | None,
             pk_python: Path | None) -> tuple[float, float, float]:
    """(steady s, CPU s, end-to-end s) of one consumer's pass, or :class:`PassFailed`."""
    try:
        if peer == "original":
            assert home is not None
            for attempt in range(1, ORIGINAL_TRIES + 1):
                try:
                    return run_original(home, zk, topic, n, f"{group}-{attempt}", log)
                except ShortRead as exc:
                    print(f"{peer}: {exc} (try {attempt})", flush=True)
            raise PassFailed(f"{ORIGINAL_TRIES} short reads")
        if peer == "original-stream":
            assert home is not None
            return run_result(original_stream_argv(home, zk, topic, n, group), peer, log)
        python = pk_python if peer in SLOW else Path(sys.executable)
        assert python is not None
        return run_child(python, peer, zk, bootstrap, topic, n, args.partitions, group, log,
                         args.before if peer.endswith(BEFORE_SUFFIX) else None)
    except (SystemExit, ValueError, subprocess.SubprocessError) as exc:
        raise PassFailed(str(exc)) from exc


def measure(args: argparse.Namespace, peers: list[str], zk: str, bootstrap: str,
            home: Path | None, pk_python: Path | None, scratch: Path) -> list[RoundResult]:
    from zkconsumer.admin import create_topic

    topic = "peers"
    create_topic(zk, topic, args.partitions, bootstrap=bootstrap)
    produced_s = produce_batched(bootstrap, topic, args.messages, args.partitions, False, 1)
    print(f"produced {args.messages:,} x {SIZE} B into {args.partitions} partitions in "
          f"{produced_s:.1f} s; load {os.getloadavg()[0]:.2f}", flush=True)
    results: list[RoundResult] = []
    skipped: list[str] = []
    for r in range(args.rounds):
        for order, peer in enumerate(rotated(peers, r)):
            n = args.slow_messages if peer in SLOW else args.messages
            n = min(n, args.messages)
            group = f"peers-{peer}-{r}-{int(time.time())}"
            load1 = os.getloadavg()[0]
            log = scratch / f"{peer}.log"
            try:
                timing = one_pass(args, peer, zk, bootstrap, topic, n, group, log, home,
                                  pk_python)
            except PassFailed as exc:  # the round goes on without it (its ratios left out)
                print(f"round {r + 1} {peer}: {exc}", flush=True)
                skipped.append(f"round {r + 1}: {peer}: {exc}")
                continue
            steady, cpu, total = timing
            res = RoundResult(r + 1, peer, order, n, steady, cpu, total, load1)
            results.append(res)
            print(f"round {r + 1} {peer:16s} {res.rate:12,.0f} msgs/s steady "
                  f"{res.cpu_us_per_message:6.2f} µs CPU/msg  ({n:,} msgs, {total:5.1f} s "
                  f"end-to-end, load {load1:.2f})", flush=True)
            if args.results is not None:  # kept as it goes: a later failure loses nothing
                args.results.mkdir(parents=True, exist_ok=True)
                (args.results / "rounds.csv").write_text(rounds_csv(results))
    for line in skipped:
        print(f"left out: {line}")
    args.skipped = skipped
    return results


def report(results: list[RoundResult]) -> None:
    def fmt(s: object) -> str:
        if s is None:
            return "-"
        return f"{s.median:.2f} ({s.low:.2f}-{s.high:.2f})"  # type: ignore[attr-defined]

    print("\npeer              msgs/s median (range)            CPU µs/msg    "
          "/ original           / bare")
    for s in summarise(results):
        print(f"{s.peer:16s} {s.rate.median:12,.0f} ({s.rate.low:,.0f}-{s.rate.high:,.0f})  "
              f"{s.cpu_us.median:6.2f}  {fmt(s.vs_original):20s} {fmt(s.vs_bare)}")


if __name__ == "__main__":
    sys.exit(main())
