"""The long chaos soak: 120 s of joins, leaves, kills, session expiries, pauses and ZooKeeper
leader kills against 6 members on 24 partitions, then the figures as JSON on stdout.

    .venv/bin/python benchmarks/chaos.py [--duration 120] [--members 6] [--partitions 24]
                                         [--seed 1] [--json FILE]

The same run as ``zkconsumer experiment chaos``; CI runs a 30-second version
(tests/integration/test_chaos.py). Exit status 1 if anything was lost, the verify tool failed
on the settled group, or owner/registration znodes were left behind.
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import sys
from pathlib import Path

from zkconsumer.lab.chaos import ChaosSpec, run_chaos


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=120.0)
    parser.add_argument("--members", type=int, default=6)
    parser.add_argument("--partitions", type=int, default=24)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--session-timeout-ms", type=int, default=4000)
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--out", type=Path, default=None, help="keep the members' files here")
    parser.add_argument("--json", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("kazoo").setLevel(logging.ERROR)
    spec = ChaosSpec(duration_s=args.duration, members=args.members,
                     partitions=args.partitions, seed=args.seed,
                     session_timeout_ms=args.session_timeout_ms, rate=args.rate,
                     out_dir=str(args.out) if args.out else None)
    report = run_chaos(spec, progress=lambda msg: print(f"chaos: {msg}", file=sys.stderr))
    data = {**report.as_dict(), "machine": {"cpus": _cpus(), "python": platform.python_version()}}
    text = json.dumps(data, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0 if report.ok else 1


def _cpus() -> int:
    import os

    return os.cpu_count() or 0


if __name__ == "__main__":
    sys.exit(main())
