"""Simulator speed: one event at N = 10,000, and a grid of small configurations.

Targets (the simulator's requirement): one simulated event at N = 10,000 in under 60 s on one
core; a grid of at least 100 configurations in under 15 minutes on Spark ``local[2]``. This
script measures both: the big event in this process (CPU time, one core), and the grid as the
``spark herd --mode sim`` job runs it (:func:`zkconsumer.spark.herd.sweep.sweep_dataframe` on
``--master``, default ``local[2]``, wall time including the Spark session start).

    .venv/bin/python benchmarks/sim.py
    .venv/bin/python benchmarks/sim.py --big-protocols all --seeds 3 --serial
    .venv/bin/python benchmarks/sim.py --big-protocols all --serial --results DIR

``--results DIR`` writes ``speed.csv`` (one line per timed run) and ``meta.json``.

The simulated times use the committed calibration (``results/scale/calibration/
calibration.json``, the one docs/scale.md's figures use; ``--calibration`` to change it), so
the "stable after" it prints for N = 10,000 is the docs' figure: a model figure bound by the
server read service time (``zk_read_service_us``), not a measurement.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from zkconsumer.sim import EVENTS, Calibration, SimConfig, simulate
from zkconsumer.spark.herd.grid import Cell, cells

BIG_TARGET_S = 60.0
GRID_TARGET_S = 15 * 60.0
PROTOCOLS = ("zk-range", "zk-roundrobin", "eager-range", "cooperative-sticky", "kip848")
GRID_MEMBERS = (4, 16, 64, 256, 1000, 10_000)
GRID_PARTITIONS = (16, 128)
SUMMARY_PARTITIONS = 16


def grid(seeds: int) -> list[Cell]:
    return cells(PROTOCOLS, GRID_MEMBERS, GRID_PARTITIONS, EVENTS, seeds)


CALIBRATION = Path(__file__).resolve().parents[1] / "results/scale/calibration/calibration.json"


def _row(cell: Cell, cal: Calibration) -> dict[str, object]:
    return simulate(SimConfig(*cell.key()[:4], seed=cell.seed, calibration=cal)).row()


SPEED: list[dict[str, object]] = []  # every timed run, for --results


def time_big(protocols: Sequence[str], members: int, partitions: int, cal: Calibration
             ) -> None:
    origin = cal.origin("zk_read_service_us") or "built-in default, not measured"
    print(f"one join at N={members:,}, P={partitions} (one core); simulated times with "
          f"zk_read_service_us = {cal.zk_read_service_us:g} ({origin}):")
    for protocol in protocols:
        cfg = SimConfig(protocol, members, partitions, "join", seed=1, calibration=cal)
        wall, cpu = time.perf_counter(), time.process_time()
        r = simulate(cfg)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        verdict = "ok" if cpu < BIG_TARGET_S else "OVER TARGET"
        tts = "never" if r.time_to_stable_s is None else f"{r.time_to_stable_s:.2f} s"
        SPEED.append({"run": "big-join", "protocol": protocol, "members": members,
                      "partitions": partitions, "configs": 1, "wall_s": round(wall, 3),
                      "cpu_s": round(cpu, 3), "requests": r.coordination_requests,
                      "events": r.sim_events})
        print(f"  {protocol:<19} {wall:6.2f} s wall {cpu:6.2f} s cpu  {verdict:<4}  "
              f"requests={r.coordination_requests:,} stable after {tts} (simulated), "
              f"{r.sim_events:,} events")


def time_grid(configs: list[Cell], master: str, serial: bool, cal: Calibration
              ) -> list[dict[str, object]]:
    from zkconsumer.spark.herd.sweep import SimSettings, sweep_dataframe
    from zkconsumer.spark.session import spark_session

    print(f"grid of {len(configs)} configurations ({len(PROTOCOLS)} protocols x N in "
          f"{GRID_MEMBERS} x P in {GRID_PARTITIONS} x {len(EVENTS)} events x seeds):")
    started = time.perf_counter()
    spark = spark_session(master, app="zkconsumer-sim-benchmark", shuffle_partitions=2)
    session_s = time.perf_counter() - started
    try:
        df = sweep_dataframe(spark, configs, SimSettings(calibration=cal))
        rows = [r.asDict() for r in df.collect()]
    finally:
        spark.stop()
    elapsed = time.perf_counter() - started
    SPEED.append({"run": f"grid-spark-{master}", "protocol": "all", "members": 0,
                  "partitions": 0, "configs": len(configs), "wall_s": round(elapsed, 3),
                  "cpu_s": "", "requests": "", "events": ""})
    print(f"  Spark {master}:      {elapsed:7.2f} s wall incl. {session_s:.1f} s session start "
          f"({'ok' if elapsed < GRID_TARGET_S else 'OVER TARGET'}, target "
          f"{GRID_TARGET_S / 60:.0f} min)")
    if serial:
        started = time.perf_counter()
        cpu = time.process_time()
        plain = [_row(c, cal) for c in configs]
        serial_s = time.perf_counter() - started
        SPEED.append({"run": "grid-serial", "protocol": "all", "members": 0, "partitions": 0,
                      "configs": len(configs), "wall_s": round(serial_s, 3),
                      "cpu_s": round(time.process_time() - cpu, 3), "requests": "",
                      "events": ""})
        print(f"  serial, 1 core:       {serial_s:7.2f} s")
        key = ("protocol", "members", "partitions", "event", "seed", "coordination_requests")
        same = sorted(tuple(r[k] for k in key) for r in plain) == sorted(
            tuple(r[k] for k in key) for r in rows)
        print(f"  rows identical to Spark's: {same}")
    return rows


def summary(rows: list[dict[str, object]]) -> None:
    print(f"joins at P={SUMMARY_PARTITIONS}, median over seeds: requests / attempts / conflicts / "
          "time to stable (s)")
    for protocol in PROTOCOLS:
        parts = []
        for n in GRID_MEMBERS:
            sel = [r for r in rows if r["protocol"] == protocol and r["members"] == n
                   and r["event"] == "join" and r["partitions"] == SUMMARY_PARTITIONS]
            req = statistics.median(int(r["coordination_requests"]) for r in sel)  # type: ignore[call-overload]
            att = max(int(r["rebalance_attempts"]) for r in sel)  # type: ignore[call-overload]
            con = statistics.median(int(r["conflicts"]) for r in sel)  # type: ignore[call-overload]
            tts = [float(r["time_to_stable_s"]) for r in sel  # type: ignore[arg-type]
                   if r["time_to_stable_s"] is not None]
            t = f"{statistics.median(tts):.2f}" if tts else "-"
            parts.append(f"N={n}: {req:g}/{att}/{con:g}/{t}")
        print(f"  {protocol:<19} " + "  ".join(parts))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=128)
    parser.add_argument("--big-protocols", default="zk-range",
                        help="comma-separated protocols for the big event, or 'all'")
    parser.add_argument("--seeds", type=int, default=2, help="seeds per grid cell")
    parser.add_argument("--master", default="local[2]", help="Spark master for the grid")
    parser.add_argument("--calibration", type=Path, default=CALIBRATION,
                        help="calibration file (default: the committed one the docs use)")
    parser.add_argument("--serial", action="store_true",
                        help="also run the grid serially here and compare the rows")
    parser.add_argument("--results", default=None, help="write speed.csv and meta.json here")
    args = parser.parse_args(argv)
    from zkconsumer.results import capture

    prov = capture("python benchmarks/sim.py " + " ".join(sys.argv[1:] if argv is None
                                                          else argv))
    protocols = PROTOCOLS if args.big_protocols == "all" else args.big_protocols.split(",")
    if args.calibration.is_file():
        cal = Calibration.load(args.calibration)
    else:  # no committed calibration yet: the built-in defaults, said so
        print(f"{args.calibration} not found: built-in defaults (NOT measured)")
        cal = Calibration()
    time_big(protocols, args.members, args.partitions, cal)
    rows = time_grid(grid(args.seeds), args.master, args.serial, cal)
    summary(rows)
    if args.results:
        import csv

        from zkconsumer.results import write_provenance

        folder = Path(args.results)
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / "speed.csv", "w", newline="") as fh:
            out = csv.DictWriter(fh, fieldnames=list(SPEED[0]))
            out.writeheader()
            out.writerows(SPEED)
        print(f"wrote {write_provenance(folder, prov)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
