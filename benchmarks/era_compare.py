"""The lab's compare on one broker, kept as committed results: eager protocols on that broker's own
group coordinator next to the ZooKeeper protocols, labelled with the broker.

    python benchmarks/era_compare.py --broker kafka:../shared/kafka-0.10.2 \\
        --out results/brokers/compare-apache-kafka-0.10.2.2
    python benchmarks/era_compare.py --broker tansu --out results/brokers/compare-tansu-0.6.0

Runs ``zkconsumer experiment compare`` with fixed parameters (run it under the measurement lock),
then writes ``runs.csv`` (one row per run: protocol, event, repeat, status and the metrics) and
``meta.json`` (command, revision, date, machine, broker) into ``--out``; the rest of the
experiment's output stays in a temporary folder. ``docs/brokers.md`` is generated from these.
"""

from __future__ import annotations

import argparse
import csv
import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from zkconsumer.lab.broker_option import broker_spec
from zkconsumer.results import capture, write_provenance
from zkconsumer.testing.kafka import kafka_home_from_env, kafka_version
from zkconsumer.testing.servers import KAFKA, is_kafka_spec

PROTOCOLS = "zk-range,eager-range,cooperative-sticky,static-range"
METRICS = ("time_to_stable_s", "members_paused", "partition_seconds_unavailable",
           "coordination_requests", "rebalance_attempts", "group_rebalances", "duplicates",
           "lost", "double_owned_intervals")
# The ZooKeeper server's witness of the event window (mntr), for members that count nothing
# themselves (the original's JVMs) as for the others.
SERVER = ("zk_packets_received",)
EXTRA = ("conflicts",)
FIELDS = ("protocol", "event", "repeat", "status", *METRICS, *EXTRA, *SERVER, "reason")


def broker_name(spec: str) -> str:
    if is_kafka_spec(spec):
        home = kafka_home_from_env(spec[len(KAFKA) + 1:] if spec.startswith(KAFKA + ":") else None)
        return f"apache-kafka-{kafka_version(home)}"
    if spec in ("", "tansu"):
        from zkconsumer.testing.broker import tansu_binary

        out = subprocess.run([tansu_binary(), "--version"], capture_output=True, text=True,
                             timeout=10).stdout.split()
        return f"tansu-{out[-1]}" if out else "tansu"
    return f"external-{spec}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--broker", required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--members", type=int, default=4)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--events", default="join,leave,crash")
    ap.add_argument("--protocols", default=PROTOCOLS)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    spec = broker_spec(args.broker)
    name = broker_name(spec)
    command = "python benchmarks/era_compare.py " + " ".join(
        shlex.quote(a) for a in sys.argv[1:])
    prov = capture(command, broker=name, members=args.members, partitions=args.partitions)
    with tempfile.TemporaryDirectory(prefix="era-compare-") as tmp:
        run = [sys.executable, "-m", "zkconsumer", "experiment", "compare", "--broker", spec,
               "--members", str(args.members), "--partitions", str(args.partitions),
               "--events", args.events, "--protocols", args.protocols,
               "--repeat", str(args.repeat), "--no-progress", "--out", tmp]
        subprocess.run(run, check=False)
        data = json.loads((Path(tmp) / "results.json").read_text())
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "runs.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        writer.writeheader()
        for r in data["runs"]:
            metrics = r.get("metrics") or {}
            writer.writerow({"protocol": r["protocol"], "event": r["event"],
                             "repeat": r["repeat"], "status": r["status"],
                             **{m: metrics.get(m, "") for m in (*METRICS, *EXTRA)},
                             **{k: ((r.get("details") or {}).get("zk_mntr_delta") or {})
                                .get(k, "") for k in SERVER},
                             "reason": (r.get("reason") or "")[:300]})
    write_provenance(args.out, prov)
    print(f"wrote {args.out / 'runs.csv'} ({len(data['runs'])} runs on {name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
