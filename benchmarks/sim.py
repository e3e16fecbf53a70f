"""Simulator speed: one event at N = 10,000, and a grid of small configurations.

Targets (the simulator's requirement): one simulated event at N = 10,000 in under 60 s on one
core; a grid of at least 100 configurations in under 15 minutes on Spark ``local[2]``. This
script measures both in-process (the Spark job comes later): the big event on one core, and the
grid serially and over ``--workers`` processes (2, like ``local[2]``).

    .venv/bin/python benchmarks/sim.py
    .venv/bin/python benchmarks/sim.py --big-protocols all --seeds 3 --workers 2
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

from zkconsumer.sim import EVENTS, PROTOCOLS, SimConfig, simulate

BIG_TARGET_S = 60.0
GRID_TARGET_S = 15 * 60.0
GRID_MEMBERS = (4, 8, 16, 32, 64)
GRID_PARTITIONS = 8


def grid(seeds: int) -> list[SimConfig]:
    return [SimConfig(p, n, GRID_PARTITIONS, e, seed=s)
            for p, n, e, s in itertools.product(PROTOCOLS, GRID_MEMBERS, EVENTS, range(seeds))]


def _row(cfg: SimConfig) -> dict[str, object]:
    return simulate(cfg).row()


def time_big(protocols: Sequence[str], members: int, partitions: int) -> None:
    print(f"one join at N={members:,}, P={partitions} (one core):")
    for protocol in protocols:
        cfg = SimConfig(protocol, members, partitions, "join", seed=1)
        wall, cpu = time.perf_counter(), time.process_time()
        r = simulate(cfg)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        verdict = "ok" if cpu < BIG_TARGET_S else "OVER TARGET"
        tts = "never" if r.time_to_stable_s is None else f"{r.time_to_stable_s:.2f} s"
        print(f"  {protocol:<19} {wall:6.2f} s wall {cpu:6.2f} s cpu  {verdict:<4}  "
              f"requests={r.coordination_requests:,} stable after {tts} (simulated), "
              f"{r.sim_events:,} events")


def time_grid(configs: list[SimConfig], workers: int) -> list[dict[str, object]]:
    started = time.perf_counter()
    rows = [_row(c) for c in configs]
    serial = time.perf_counter() - started
    print(f"grid of {len(configs)} configurations ({len(PROTOCOLS)} protocols x N in "
          f"{GRID_MEMBERS} x {len(EVENTS)} events x seeds, P={GRID_PARTITIONS}):")
    print(f"  serial, 1 core:       {serial:7.2f} s "
          f"({'ok' if serial < GRID_TARGET_S else 'OVER TARGET'})")
    if workers > 1:
        started = time.perf_counter()
        with ProcessPoolExecutor(workers) as pool:
            parallel = list(pool.map(_row, configs, chunksize=8))
        elapsed = time.perf_counter() - started
        same = parallel == rows
        print(f"  {workers} worker processes: {elapsed:7.2f} s (incl. start-up; rows identical "
              f"to serial: {same})")
    return rows


def summary(rows: list[dict[str, object]]) -> None:
    print("joins, median over seeds: requests / attempts / conflicts / time to stable (s)")
    for protocol in PROTOCOLS:
        cells = []
        for n in GRID_MEMBERS:
            sel = [r for r in rows if r["protocol"] == protocol and r["members"] == n
                   and r["event"] == "join"]
            req = statistics.median(int(r["coordination_requests"]) for r in sel)  # type: ignore[call-overload]
            att = max(int(r["rebalance_attempts"]) for r in sel)  # type: ignore[call-overload]
            con = statistics.median(int(r["conflicts"]) for r in sel)  # type: ignore[call-overload]
            tts = [float(r["time_to_stable_s"]) for r in sel  # type: ignore[arg-type]
                   if r["time_to_stable_s"] is not None]
            t = f"{statistics.median(tts):.2f}" if tts else "-"
            cells.append(f"N={n}: {req:g}/{att}/{con:g}/{t}")
        print(f"  {protocol:<19} " + "  ".join(cells))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=128)
    parser.add_argument("--big-protocols", default="zk-range",
                        help="comma-separated protocols for the big event, or 'all'")
    parser.add_argument("--seeds", type=int, default=2, help="seeds per grid cell")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    protocols = PROTOCOLS if args.big_protocols == "all" else args.big_protocols.split(",")
    time_big(protocols, args.members, args.partitions)
    rows = time_grid(grid(args.seeds), args.workers)
    summary(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
