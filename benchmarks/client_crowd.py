"""Client CPU per ZooKeeper request with K kazoo clients busy in one Python process.

The simulator shares one CPU among the members of a client process (``SimConfig.
client_processes``); this measures whether a request also costs more CPU when many clients
are busy in the same process (see :func:`zkconsumer.calibration.measure.measure_crowd`). Against an
embedded ZooKeeper unless ``--zk`` names one.

    .venv/bin/python benchmarks/client_crowd.py
    .venv/bin/python benchmarks/client_crowd.py --clients 1,2,4,8,16,32,64 --repeats 3 --idle
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time

from zkconsumer.calibration.measure import (
    CROWD_BURST_S,
    CROWD_ZNODES,
    crowd_cpu_ms,
    crowd_scale_table,
    measure_crowd,
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zk", default=os.environ.get("ZKCONSUMER_ZK"))
    ap.add_argument("--clients", default="1,4,16,32", help="comma-separated K values")
    ap.add_argument("--znodes", type=int, default=CROWD_ZNODES)
    ap.add_argument("--burst-s", type=float, default=CROWD_BURST_S)
    ap.add_argument("--repeats", type=int, default=3, help="passes of reads over the K values")
    ap.add_argument("--no-writes", action="store_true")
    ap.add_argument("--idle", action="store_true",
                    help="also one busy client among the largest K connected")
    ap.add_argument("--json", action="store_true", help="print the samples as JSON lines")
    args = ap.parse_args()
    counts = [int(k) for k in args.clients.split(",")]
    with contextlib.ExitStack() as stack:
        zk = args.zk
        if not zk:
            from zkconsumer.testing.zookeeper import EmbeddedZooKeeper

            zk = stack.enter_context(EmbeddedZooKeeper()).connect_string
        print(f"load average {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores; ZooKeeper {zk}")
        print("| op | clients | busy | requests | CPU ms / request | wall ms / request / thread |")
        print("|---|---|---|---|---|---|")
        started = time.perf_counter()
        samples = measure_crowd(zk, counts, args.znodes, args.burst_s, repeats=args.repeats,
                                writes=not args.no_writes, idle=args.idle)
        for s in samples:
            if args.json:
                print(json.dumps(s.to_dict()))
            print(f"| {s.op} | {s.clients} | {s.busy} | {s.requests} | {s.cpu_ms:.3f} | "
                  f"{s.wall_ms:.3f} |")
        print(f"({time.perf_counter() - started:.1f} s, load {os.getloadavg()[0]:.1f})")
        for op in ("read", "write"):
            pooled = crowd_cpu_ms(samples, op)
            if pooled:
                print(f"{op}: pooled CPU ms per request "
                      f"{ {k: round(v, 3) for k, v in pooled.items()} }; "
                      f"scale table {crowd_scale_table(samples, op)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
